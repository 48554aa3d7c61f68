// Property-based fuzzing of every endpoint (fast-check): generated requests with wrong types, arrays, repeated
// fields, huge and empty values, control characters, bad percent-encodings, wrong methods and content types, some
// carrying real client ids and tokens so that they get past the first checks. On SQLite and on PostgreSQL: never a
// 5xx, never a hang, and afterwards the store's invariants hold.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import request from 'supertest';
import type { Express } from 'express';
import { createPostgresStore } from '../../lib/postgres';
import { createSqliteStore } from '../../lib/store/sqlite';
import type { OAuthStore } from '../../lib/store/types';
import { createFakeClock } from '../helpers/clock';
import { mountTestApp, obtainTokens, type TestServer } from '../helpers/oauth-app';
import { DATABASE_URL, describeWith } from '../helpers/services';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';

const RUNS = 2000;
/** The generated requests come from this seed (set FUZZ_SEED to replay a failure; the test's name shows the one used). */
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const PATHS = [
  '/v1/oauth/register',
  '/v1/oauth/token',
  '/v1/oauth/revoke',
  '/v1/oauth/authorize',
  '/v1/oauth/authorize/sign-in',
  '/v1/oauth/authorize/decision',
  '/v1/oauth/jwks',
  '/.well-known/oauth-authorization-server',
  '/.well-known/oauth-protected-resource/mcp',
  '/mcp',
];
const FIELDS = [
  'client_id',
  'client_secret',
  'grant_type',
  'code',
  'code_verifier',
  'redirect_uri',
  'refresh_token',
  'token',
  'token_type_hint',
  'scope',
  'resource',
  'response_type',
  'state',
  'code_challenge',
  'code_challenge_method',
  'redirect_uris',
  'client_name',
  'token_endpoint_auth_method',
  'grant_types',
  'jwks',
  'jwks_uri',
  'client_assertion',
  'client_assertion_type',
  'email',
  'password',
  'request',
  'csrf_token',
  'decision',
  '__proto__',
  'constructor',
];

interface Known {
  clientId: string;
  refreshToken: string;
  accessToken: string;
  redirectUri: string;
}

/** One generated request, as data (so that fast-check can print and shrink it). */
function requests(known: Known): fc.Arbitrary<Generated> {
  const text = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }), // any code point: controls, surrogates, NUL
    fc.constantFrom(
      '',
      '\u0000',
      'a\u0007b',
      '%',
      '%zz',
      '%E0%A4%A',
      'x'.repeat(5000),
      '{"a":',
      '[]',
      'null',
    ),
    fc.constantFrom(known.clientId, known.refreshToken, known.accessToken, known.redirectUri),
    fc.constantFrom('authorization_code', 'refresh_token', 'code', 'S256', 'plain', 'none', 'allow', 'deny'),
    fc.constantFrom(
      'https://claude.ai.test/oauth/client',
      'http://10.0.0.1/x',
      'https://[::1]/doc',
      'https://a',
    ),
  );
  const value = fc.oneof(
    { weight: 6, arbitrary: text },
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(text, { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 8 }), text, { maxKeys: 3 }),
  );
  const anyRequest = fc.record({
    method: fc.constantFrom(
      'GET',
      'GET',
      'GET',
      'POST',
      'POST',
      'POST',
      'POST',
      'PUT',
      'DELETE',
      'PATCH',
      'OPTIONS',
      'HEAD',
    ),
    path: fc.constantFrom(...PATHS),
    // The fields that reach the store come up more often than the rest.
    params: fc.dictionary(
      fc.oneof(
        {
          weight: 2,
          arbitrary: fc.constantFrom('client_id', 'token', 'refresh_token', 'client_name', 'redirect_uris'),
        },
        fc.constantFrom(...FIELDS),
      ),
      value,
      { maxKeys: 8 },
    ),
    repeated: fc.option(fc.constantFrom(...FIELDS)),
    encoding: fc.constantFrom('json', 'form', 'raw', 'none'),
    contentType: fc.constantFrom(
      'application/json',
      'application/x-www-form-urlencoded',
      'text/plain',
      'application/json; charset=utf-16',
      'multipart/form-data; boundary=x',
      undefined,
    ),
    raw: fc.string({ unit: 'binary', maxLength: 200 }),
    plusSpaces: fc.boolean(),
    authorization: fc.option(
      fc.oneof(
        fc.stringMatching(/^[\x20-\x7e]{0,60}$/),
        fc.uint8Array({ maxLength: 40 }).map((bytes) => `Basic ${Buffer.from(bytes).toString('base64')}`),
        fc.constantFrom(`Bearer ${known.accessToken}`, 'Bearer', 'Bearer a.b.c', `Basic ${known.clientId}`),
      ),
    ),
  });
  // Valid requests with one of their own fields (or another) changed: these get past the first checks.
  const valid = validRequests(known);
  const mutated = fc
    .record({
      base: fc.constantFrom(...valid),
      pick: fc.nat(),
      other: fc.constantFrom(...FIELDS),
      useOther: fc.boolean(),
      value,
      drop: fc.boolean(),
    })
    .map(({ base, pick, other, useOther, value: changed, drop }) => {
      const keys = Object.keys(base.params);
      const field = useOther && drop ? other : keys[pick % keys.length]!;
      const params = { ...base.params, [field]: changed };
      return {
        ...base,
        params,
        repeated: drop && !useOther ? field : null,
        raw: '',
        contentType: base.contentType,
      };
    });
  return fc.oneof(anyRequest, mutated);
}

function validRequests(known: Known) {
  const common = { repeated: null, raw: '', plusSpaces: false, authorization: null as string | null };
  return [
    {
      ...common,
      method: 'POST',
      path: '/v1/oauth/token',
      encoding: 'form',
      contentType: 'application/x-www-form-urlencoded',
      params: {
        grant_type: 'refresh_token',
        refresh_token: known.refreshToken,
        client_id: known.clientId,
      } as Record<string, unknown>,
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/oauth/token',
      encoding: 'form',
      contentType: 'application/x-www-form-urlencoded',
      params: {
        grant_type: 'authorization_code',
        code: 'c'.repeat(43),
        code_verifier: 'v'.repeat(43),
        redirect_uri: known.redirectUri,
        client_id: known.clientId,
      } as Record<string, unknown>,
    },
    {
      ...common,
      method: 'GET',
      path: '/v1/oauth/authorize',
      encoding: 'none',
      contentType: undefined,
      params: {
        response_type: 'code',
        client_id: known.clientId,
        redirect_uri: known.redirectUri,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        scope: 'fakture:read',
        state: 'fuzz',
      } as Record<string, unknown>,
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/oauth/revoke',
      encoding: 'json',
      contentType: 'application/json',
      params: { token: known.refreshToken, client_id: known.clientId } as Record<string, unknown>,
    },
    {
      ...common,
      method: 'POST',
      path: '/v1/oauth/register',
      encoding: 'json',
      contentType: 'application/json',
      params: {
        redirect_uris: ['https://a.example/cb'],
        client_name: 'Fuzz',
        scope: 'fakture:read',
      } as Record<string, unknown>,
    },
    {
      ...common,
      method: 'POST',
      path: '/mcp',
      encoding: 'json',
      contentType: 'application/json',
      authorization: `Bearer ${known.accessToken}`,
      params: { jsonrpc: '2.0', id: 1, method: 'tools/list' } as Record<string, unknown>,
    },
  ];
}

interface Generated {
  method: string;
  path: string;
  params: Record<string, unknown>;
  repeated: string | null;
  encoding: string;
  contentType: string | undefined;
  raw: string;
  /** Form encoding spells a space as "+" in values that also hold a "%" (what a hand-rolled client might send). */
  plusSpaces: boolean;
  authorization: string | null;
}

/** Form encoding that keeps what a hostile client sends: repeated fields, nested values flattened, bad escapes. */
function formEncode(params: Record<string, unknown>, repeated: string | null, plusSpaces: boolean): string {
  const parts: string[] = [];
  const add = (name: string, item: unknown) => {
    const text = typeof item === 'string' ? item : JSON.stringify(item);
    const encoded =
      text.includes('%') && plusSpaces ? text.replace(/\s/g, '+') : encodeURIComponent(text ?? '');
    parts.push(`${encodeURIComponent(name)}=${encoded}`);
  };
  for (const [name, item] of Object.entries(params)) {
    for (const one of Array.isArray(item) ? item : [item]) add(name, one);
  }
  if (repeated) add(repeated, 'again');
  return parts.join('&');
}

async function send(app: Express, generated: Generated) {
  const { method, path, params, repeated, encoding, contentType, raw, plusSpaces, authorization } = generated;
  const query = method === 'GET' || method === 'HEAD' ? formEncode(params, repeated, plusSpaces) : '';
  let req = request(app)
    [method.toLowerCase() as 'get'](query ? `${path}?${query}` : path)
    .timeout(5000);
  if (authorization !== null) req = req.set('Authorization', authorization);
  if (contentType) req = req.set('Content-Type', contentType);
  if (method === 'GET' || method === 'HEAD' || encoding === 'none') return req;
  if (encoding === 'json') return req.send(JSON.stringify(params));
  if (encoding === 'form') return req.send(formEncode(params, repeated, plusSpaces));
  return req.send(raw);
}

/**
 * What must hold whatever was sent: every row's parents exist (no grant without a client, no token or code without a
 * grant); each rotation is continued by one successor at most (a retry may issue another, but only one goes on to
 * be used); no secret is stored in plain text; no text holds a control character.
 */
async function checkInvariants(
  query: (sql: string) => Promise<Array<Record<string, unknown>>>,
  secrets: string[],
) {
  const orphans = await query(`
    SELECT 'grant' AS kind, g.grant_id AS id FROM oauth_grants g LEFT JOIN oauth_clients c ON c.client_id = g.client_id WHERE c.client_id IS NULL
    UNION ALL SELECT 'code', a.code_hash FROM oauth_authorization_codes a LEFT JOIN oauth_grants g ON g.grant_id = a.grant_id WHERE g.grant_id IS NULL
    UNION ALL SELECT 'token', t.token_hash FROM oauth_refresh_tokens t LEFT JOIN oauth_grants g ON g.grant_id = t.grant_id WHERE g.grant_id IS NULL
    UNION ALL SELECT 'latest', g.grant_id FROM oauth_grants g WHERE g.latest_token_hash IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens t WHERE t.token_hash = g.latest_token_hash)`);
  expect(orphans).toEqual([]);
  const forks = await query(`
    SELECT t.parent_hash FROM oauth_refresh_tokens t
     WHERE t.parent_hash IS NOT NULL
       AND EXISTS (SELECT 1 FROM oauth_refresh_tokens c WHERE c.parent_hash = t.token_hash)
     GROUP BY t.parent_hash HAVING count(*) > 1`);
  expect(forks).toEqual([]);
  // The tables that hold secrets (client names and the like are whatever a client sent, tokens included).
  const stored = JSON.stringify(
    await Promise.all(
      ['oauth_grants', 'oauth_authorization_codes', 'oauth_refresh_tokens', 'oauth_client_assertions'].map(
        (table) => query(`SELECT * FROM ${table}`),
      ),
    ),
  );
  expect(secrets.filter((secret) => stored.includes(secret))).toEqual([]);
  const clients = await query(
    'SELECT client_id, client_name, redirect_uris, metadata, scope FROM oauth_clients',
  );
  for (const row of clients) {
    for (const value of Object.values(row)) expect(String(value ?? '')).not.toMatch(/[\u0000-\u001f\u007f]/);
  }
}

function fuzzSuite(
  open: () => Promise<{
    store: OAuthStore;
    query: (sql: string) => Promise<Array<Record<string, unknown>>>;
    close(): Promise<void>;
  }>,
) {
  let opened: Awaited<ReturnType<typeof open>>;
  let server: Pick<TestServer, 'app' | 'oauth' | 'store' | 'signer' | 'clock'>;
  let known: Known;
  beforeAll(async () => {
    opened = await open();
    const clock = createFakeClock(Date.now());
    server = { ...mountTestApp(opened.store, clock), store: opened.store as TestServer['store'], clock };
    const { client, tokens } = await obtainTokens(server as TestServer, {
      token_endpoint_auth_method: 'none',
    });
    known = {
      clientId: client.client_id,
      refreshToken: tokens.refresh_token,
      accessToken: tokens.access_token,
      redirectUri: client.redirect_uris[0]!,
    };
  });
  afterAll(() => opened?.close());

  test(`${RUNS} generated requests (FUZZ_SEED=${SEED}): never a 5xx, never a hang; the store's invariants hold after`, async () => {
    await fc.assert(
      fc.asyncProperty(requests(known), async (generated) => {
        const res = await send(server.app, generated);
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // The refresh token's secret part (after its grant id) and the access token are never stored as they are.
    await checkInvariants(opened.query, [known.refreshToken.split('.').pop()!, known.accessToken]);
  }, 120_000);
}

describe('fuzzing every endpoint, on SQLite', () => {
  fuzzSuite(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fuzz-'));
    const store = createSqliteStore(join(dir, 'oauth.db'));
    return {
      store,
      query: async (sql) => store.database.prepare(sql).all() as Array<Record<string, unknown>>,
      close: async () => {
        store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});

describeWith('fuzzing every endpoint, on PostgreSQL', { postgres: true }, () => {
  fuzzSuite(async () => {
    const schema = `fuzz_${randomBytes(6).toString('hex')}`;
    const pool = new Pool({ connectionString: DATABASE_URL, max: 4 });
    const store = createPostgresStore(pool, { schema });
    await store.ready;
    await pool.query(`SET search_path TO ${schema}`);
    return {
      store,
      query: async (sql) => {
        const client = await pool.connect();
        try {
          await client.query(`SET search_path TO ${schema}`);
          return (await client.query(sql)).rows;
        } finally {
          client.release();
        }
      },
      close: async () => {
        await pool.query(`DROP SCHEMA ${schema} CASCADE`);
        await pool.end();
      },
    };
  });
});
