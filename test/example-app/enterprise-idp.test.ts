// Enterprise apps of the reference app (the jwt-bearer grant with an ID-JAG), as its contract states them:
// TRUSTED_IDPS naming a real IdP served over https on loopback (trusted through the test CA), `npm run client:create`
// as a real process registering the enterprise app, the token request with client_secret_basic (and private_key_jwt),
// and the official MCP client acting on the user the ID-JAG's email names. The app in process, and once as a real
// process trusting the IdP through NODE_EXTRA_CA_CERTS; each refusal, and each bad TRUSTED_IDPS, by a table.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import jwt from 'jsonwebtoken';
import { ConfigError, readConfig } from '../../example-app/config';
import { createUser } from '../../example-app/users';
import { ROOT, runCommand, startInstance, type CommandRun } from '../helpers/app-process';
import { resolveToLoopback } from '../helpers/document-server';
import { idJagFor, startEnterpriseIdp, type EnterpriseIdp } from '../helpers/enterprise-idp';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { freePort } from '../helpers/ports';
import { testCa } from '../helpers/test-ca';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CLI = join(ROOT, 'dist/example-app/cli');
const SERVER = join(ROOT, 'dist/example-app/server.js');

// The SQLite runs are of the default app: the PostgreSQL and Redis that CI exports are not theirs.
const { DATABASE_URL: _postgres, REDIS_URL: _redis, ...baseEnv } = process.env;

const cli = (command: string, env: Record<string, string>, args: string[]) =>
  runCommand(join(CLI, command), args, { ...baseEnv, ...env });

/** What `client:create` prints last. */
interface CreatedClient {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method: string;
  grant_types: string[];
  scope: string;
  jwks_uri?: string;
  acts_for?: string;
}

async function enterpriseApp(env: Record<string, string>, extra: string[] = []): Promise<CreatedClient> {
  const result = await cli('client-create.js', env, [
    '--name',
    'Chat for Work',
    '--grant-types',
    JWT_BEARER,
    ...extra,
  ]);
  if (result.code !== 0) throw new Error(`client:create exited with ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as CreatedClient;
}

/** The ID-JAG an IdP mints for the app's user, for the app at `base` and the client `clientId`. */
const idJag = (from: EnterpriseIdp, base: string, clientId: string, claims: Record<string, unknown> = {}) =>
  idJagFor(from, { base, clientId, email: APP_USER.email }, claims);

/** The token endpoint's answer to the jwt-bearer grant, the client authenticated with its secret or a signed JWT. */
async function exchange(
  base: string,
  client: CreatedClient,
  assertion: string,
  privateKey?: { key: KeyObject; kid: string },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const body = new URLSearchParams({ grant_type: JWT_BEARER, assertion });
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (privateKey) {
    // RFC 7523 §2.2: private_key_jwt, its aud the issuer (the app's BASE_URL).
    body.set('client_id', client.client_id);
    body.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    body.set(
      'client_assertion',
      jwt.sign({ jti: randomUUID() }, privateKey.key, {
        algorithm: 'ES256',
        keyid: privateKey.kid,
        issuer: client.client_id,
        subject: client.client_id,
        audience: base,
        expiresIn: 60,
      }),
    );
  } else {
    headers.Authorization = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
  }
  const res = await fetch(`${base}/v1/oauth/token`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** get_company through the official MCP client with a Bearer token: the company's name. */
async function companyName(base: string, token: string): Promise<string> {
  const client = new Client({ name: 'enterprise-app', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  try {
    const result = await client.callTool({ name: 'get_company', arguments: {} });
    return (result.structuredContent as { name: string }).name;
  } finally {
    await client.close();
  }
}

let idp: EnterpriseIdp;
/** A real IdP too, with keys of its own, that TRUSTED_IDPS does not name. */
let stranger: EnterpriseIdp;
let app: RunningExampleApp;
let sqlite: Record<string, string>;
beforeAll(async () => {
  [idp, stranger] = await Promise.all([startEnterpriseIdp(), startEnterpriseIdp()]);
  // The IdP's metadata and keys are fetched like client documents: from loopback, trusted through the test CA.
  // The contract's fourth-wave form: the IdP speaks for example.com and example.org (the app's user is at example.com).
  app = await startExampleApp(
    { CIMD_ALLOW_LOOPBACK: '1', TRUSTED_IDPS: `${idp.issuer}=example.com|example.org` },
    { clientMetadataDocuments: { ca: testCa().caPem, resolveHost: resolveToLoopback } },
  );
  sqlite = { DATABASE_PATH: app.databasePath };
  // A user the IdP does not speak for (another domain), so that its refusal is the domain's and not "no such user".
  await createUser(app.db, { email: 'partner@example.net', password: 'a long enough password' });
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await idp?.stop();
  await stranger?.stop();
});

describe('npm run client:create for an enterprise app', () => {
  test('the jwt-bearer grant type: its id and secret as JSON on the last line, no user of its own', async () => {
    const result = await cli('client-create.js', sqlite, [
      '--name',
      'Chat for Work',
      '--grant-types',
      JWT_BEARER,
      '--scope',
      'company:read clients:read',
    ]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const created = JSON.parse(result.stdout.trim().split('\n').pop()!) as CreatedClient;
    expect(created).toEqual({
      client_id: expect.stringMatching(/^[\w-]{22}$/),
      client_secret: expect.stringMatching(/^[\w-]{40,}$/),
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: [JWT_BEARER],
      scope: 'company:read clients:read',
    });
    const record = await app.store.findClient(created.client_id);
    expect(record).toMatchObject({ clientName: 'Chat for Work', grantTypes: [JWT_BEARER] });
    expect(record!.metadata).not.toHaveProperty('acts_for_user');
  });

  test.each([
    [
      '--user (the user comes from each ID-JAG)',
      [JWT_BEARER, '--user', APP_USER.email],
      /^--user goes with client_credentials only: .*an enterprise app \(jwt-bearer\) for the user each ID-JAG names, a token-exchange client for the user of each subject token\.$/,
    ],
    [
      'refresh_token without authorization_code',
      [`${JWT_BEARER},refresh_token`],
      /^refresh_token goes with authorization_code: a client_credentials or jwt-bearer client gets no refresh token\.$/,
    ],
    [
      'a misspelt URN',
      ['urn:ietf:params:oauth:grant-type:jwt'],
      /is not a grant type a client may have here: use client_credentials, authorization_code, refresh_token, urn:ietf:params:oauth:grant-type:jwt-bearer, urn:ietf:params:oauth:grant-type:token-exchange\.$/,
    ],
  ])('refuses %s: exit 1 and one line', async (_name, [grantTypes, ...rest], message) => {
    const result = await cli('client-create.js', sqlite, [
      '--name',
      'Chat for Work',
      '--grant-types',
      grantTypes!,
      ...rest,
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('an enterprise app, through the token endpoint and the MCP client', () => {
  test('the metadata lists the jwt-bearer grant and the ID-JAG profile, beside client_credentials', async () => {
    const meta = (await (await fetch(`${app.baseUrl}/.well-known/oauth-authorization-server`)).json()) as {
      grant_types_supported: string[];
      authorization_grant_profiles_supported?: string[];
    };
    expect(meta.grant_types_supported).toEqual(expect.arrayContaining([JWT_BEARER, 'client_credentials']));
    expect(meta.authorization_grant_profiles_supported).toEqual([
      'urn:ietf:params:oauth:grant-profile:id-jag',
    ]);
  });

  test('client_secret_basic: an ID-JAG for a user’s email (any case) gets a token; get_company answers THAT user’s company', async () => {
    await createUser(app.db, {
      email: 'bob@example.com',
      password: 'a long enough password',
      company: 'Bob Builders',
    });
    const created = await enterpriseApp(sqlite, ['--scope', 'company:read']);
    const res = await exchange(
      app.baseUrl,
      created,
      idJag(idp, app.baseUrl, created.client_id, { email: 'Bob@Example.COM' }),
    );
    // No refresh token (draft §4.4.3): the app presents a new ID-JAG instead.
    expect(res).toEqual({
      status: 200,
      body: {
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        scope: 'company:read',
      },
    });
    expect(await companyName(app.baseUrl, res.body.access_token as string)).toBe('Bob Builders');
    // The same app, another user's ID-JAG: that user's company.
    const owners = await exchange(app.baseUrl, created, idJag(idp, app.baseUrl, created.client_id));
    expect(await companyName(app.baseUrl, owners.body.access_token as string)).not.toBe('Bob Builders');
  });

  test('private_key_jwt: an app registered with --jwks-uri (served over https) authenticates with a signed JWT', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const kid = 'enterprise-app-1';
    idp.server.json('/apps/chat/jwks.json', {
      keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' }],
    });
    const created = await enterpriseApp(sqlite, ['--jwks-uri', idp.server.url('/apps/chat/jwks.json')]);
    expect(created).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt' });
    expect(created.client_secret).toBeUndefined();
    const res = await exchange(
      app.baseUrl,
      created,
      idJag(idp, app.baseUrl, created.client_id, { scope: 'company:read' }),
      { key: privateKey, kid },
    );
    expect(res).toMatchObject({ status: 200, body: { scope: 'company:read' } });
    const owners = await companyName(app.baseUrl, await app.mintToken(['company:read']));
    expect(await companyName(app.baseUrl, res.body.access_token as string)).toBe(owners);
  });

  // The IdP by name: the table is read before beforeAll starts them.
  test.each([
    ['an email that names no user of the app', 'trusted', { email: 'nobody@example.com' }, /names no user/],
    ['no email claim at all', 'trusted', { email: undefined }, /names no user/],
    [
      'a malformed email',
      'trusted',
      { email: 'owner@example.com\u0000' },
      /not an address this service can match/,
    ],
    // Security round four: the attack's ID-JAG (another sub, the user's email, email_verified false) named the user.
    [
      "another account's unverified email (email_verified false)",
      'trusted',
      { sub: 'someone-else', email_verified: false },
      /not verified/,
    ],
    ['an email with email_verified absent', 'trusted', { email_verified: undefined }, /not verified/],
    ['email_verified the string "true"', 'trusted', { email_verified: 'true' }, /not verified/],
    [
      "a verified email of a user outside the IdP's domains in TRUSTED_IDPS",
      'trusted',
      { email: 'partner@example.net' },
      /may not name users of that email domain/,
    ],
    [
      'the Kelvin sign standing for a "k" (PostgreSQL\'s lower() folds it)',
      'trusted',
      { email: 'ow\u212aner@example.com' },
      /not an address this service can match/,
    ],
    [
      'an IdP that TRUSTED_IDPS does not name (its own keys, its own iss)',
      'stranger',
      {},
      /not a trusted identity provider/,
    ],
  ] as const)('refuses %s with invalid_grant, and issues no token', async (_name, from, claims, reason) => {
    const created = await enterpriseApp(sqlite);
    const res = await exchange(
      app.baseUrl,
      created,
      idJag(from === 'trusted' ? idp : stranger, app.baseUrl, created.client_id, claims),
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringMatching(reason),
    });
    expect(res.body).not.toHaveProperty('access_token');
  });

  test('a client that is not an enterprise app (a machine client) is refused the grant: unauthorized_client', async () => {
    const result = await cli('client-create.js', sqlite, [
      '--name',
      'Nightly export',
      '--grant-types',
      'client_credentials',
      '--user',
      APP_USER.email,
    ]);
    const machine = JSON.parse(result.stdout.trim().split('\n').pop()!) as CreatedClient;
    const res = await exchange(app.baseUrl, machine, idJag(idp, app.baseUrl, machine.client_id));
    expect(res).toMatchObject({ status: 400, body: { error: 'unauthorized_client' } });
  });
});

describe('TRUSTED_IDPS', () => {
  test.each([
    ['an http URL', 'http://idp.example.com', {}, /"http:\/\/idp\.example\.com", which is not an https URL/],
    ['not a URL', 'acme.okta.com', {}, /"acme\.okta\.com", which is not an https URL/],
    ['a query', 'https://idp.example.com/?tenant=1', {}, /no query, fragment or credentials/],
    [
      'a loopback issuer without CIMD_ALLOW_LOOPBACK=1',
      'https://idp.example.com, https://localhost:8443',
      {},
      /"https:\/\/localhost:8443", a loopback address: .*set CIMD_ALLOW_LOOPBACK=1 \(tests only\)/,
    ],
    [
      'a loopback address without CIMD_ALLOW_LOOPBACK=1',
      'https://127.0.0.1:8443',
      { CIMD_ALLOW_LOOPBACK: '0' },
      /a loopback address/,
    ],
    ['an issuer listed twice', 'https://idp.example.com,https://idp.example.com=example.com', {}, /twice/],
    ['an empty domain list', 'https://idp.example.com=', {}, /the email domain "", which is not a domain/],
    [
      'an address for a domain',
      'https://idp.example.com=bob@example.com',
      {},
      /"bob@example.com", which is not/,
    ],
    ['a wildcard domain', 'https://idp.example.com=*.example.com', {}, /which is not a domain/],
    ['an empty domain between two', 'https://idp.example.com=a.example||b.example', {}, /"", which is not/],
  ])('refuses %s with a message saying what to fix', (_name, value, env, message) => {
    expect(() => readConfig({ ...env, TRUSTED_IDPS: value })).toThrow(ConfigError);
    expect(() => readConfig({ ...env, TRUSTED_IDPS: value })).toThrow(message);
  });

  test.each([
    ['unset: the grant is off', {}, []],
    [
      'comma-separated, spaces trimmed, each as given',
      { TRUSTED_IDPS: ' https://acme.okta.com , https://login.example.com/tenant-1/,' },
      [{ issuer: 'https://acme.okta.com' }, { issuer: 'https://login.example.com/tenant-1/' }],
    ],
    [
      'a loopback issuer with CIMD_ALLOW_LOOPBACK=1 (tests)',
      { TRUSTED_IDPS: 'https://localhost:8443', CIMD_ALLOW_LOOPBACK: '1' },
      [{ issuer: 'https://localhost:8443' }],
    ],
    [
      'the email domains an IdP speaks for, after =, separated by | (lower case, each once)',
      { TRUSTED_IDPS: 'https://idp.example.com=Example.com| example.org|example.com,https://acme.okta.com' },
      [
        { issuer: 'https://idp.example.com', emailDomains: ['example.com', 'example.org'] },
        { issuer: 'https://acme.okta.com' },
      ],
    ],
  ])('reads %s', (_name, env, issuers) => {
    expect(readConfig(env).trustedIdps).toEqual(issuers);
  });

  test('without it, the metadata does not offer the jwt-bearer grant', async () => {
    const plain = await startExampleApp();
    try {
      const meta = (await (
        await fetch(`${plain.baseUrl}/.well-known/oauth-authorization-server`)
      ).json()) as {
        grant_types_supported: string[];
      };
      expect(meta.grant_types_supported).not.toContain(JWT_BEARER);
      expect(meta.grant_types_supported).toContain('client_credentials');
    } finally {
      await plain.stop();
    }
  });
});

describe('npm start with TRUSTED_IDPS (a real process)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'enterprise-idp-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('an http TRUSTED_IDPS stops the app at once with one line saying what to fix', async () => {
    const child = spawn(process.execPath, [SERVER], {
      env: {
        ...baseEnv,
        PORT: String(await freePort()),
        DATABASE_PATH: join(dir, 'app.db'),
        TRUSTED_IDPS: 'http://idp.example.com',
      },
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect({ code, stderr: stderr.trim() }).toEqual({
      code: 1,
      stderr:
        'Cannot start: TRUSTED_IDPS holds "http://idp.example.com", which is not an https URL; ' +
        'list issuers like https://acme.okta.com.',
    });
  });

  test('a loopback IdP trusted through NODE_EXTRA_CA_CERTS: client:create, the token, the user’s company', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_PATH: join(dir, 'app.db'),
      BASE_URL: base,
      LOG_LEVEL: 'silent',
      CIMD_ALLOW_LOOPBACK: '1',
      NODE_EXTRA_CA_CERTS: testCa().caFile,
      TRUSTED_IDPS: idp.issuer,
    };
    const made = await cli('user-create.js', env, [
      '--email',
      'carol@example.com',
      '--password',
      'a long enough password',
      '--name',
      'Carol',
    ]);
    expect(made.code).toBe(0);
    const created = await enterpriseApp(env, ['--scope', 'company:read']);
    const child = await startInstance(port, { ...baseEnv, DATABASE_URL: '', REDIS_URL: '', ...env });
    try {
      const res = await exchange(
        base,
        created,
        idJag(idp, base, created.client_id, { email: 'carol@example.com' }),
      );
      expect(res).toMatchObject({ status: 200, body: { token_type: 'Bearer', scope: 'company:read' } });
      expect(await companyName(base, res.body.access_token as string)).toBe("Carol's company");
    } finally {
      await new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')));
    }
  });
});
