// Token introspection (RFC 7662) on SQLite and on PostgreSQL: who may ask, what an active token tells, and that
// everything else is { active: false } and nothing more.
import request from 'supertest';
import { createJwtSigner, type OAuthRouterOptions, type OAuthStore } from '../../lib';
import { createPostgresStore } from '../../lib/postgres';
import { createSqliteStore } from '../../lib/store/sqlite';
import { createFakeClock, MINUTE, SECOND, type FakeClock } from '../helpers/clock';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import {
  ISSUER,
  mountTestApp,
  obtainTokens,
  registerClient,
  RESOURCE,
  tokenRequest,
  USER,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';
import { describeWith } from '../helpers/services';
import { hashSecret } from '../../lib/crypto/secrets';
import { clientRecord } from '../../lib/testing/fixtures';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PATH = '/v1/oauth/introspect';
const GATEWAY = { client_name: 'Another client', redirect_uris: ['https://other.example/cb'] };
const RS_SECRET = 'resource-server-secret-0123456789abcdef';
const RESOURCE_SERVER = clientRecord({
  clientId: 'billing-gateway',
  clientSecretHash: hashSecret(RS_SECRET),
  redirectUris: [],
  grantTypes: [],
  responseTypes: [],
});

type Harness = Pick<TestServer, 'app' | 'clock' | 'oauth'> & { store: OAuthStore; close(): Promise<void> };
type MakeHarness = (options: Partial<OAuthRouterOptions>) => Promise<Harness>;

const sqliteHarness: MakeHarness = async (options) => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-introspect-'));
  const clock = createFakeClock(Date.now());
  const store = createSqliteStore(join(dir, 'oauth.db'), { now: clock.now });
  return {
    ...mountTestApp(store, clock, options),
    store,
    clock,
    close: async () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

let database: TestDatabase | undefined;
/** Schemas made so far in this file's own database: each harness gets a new one. */
let schemas = 0;
const postgresHarness: MakeHarness = async (options) => {
  database ??= await createTestDatabase();
  const clock = createFakeClock(Date.now());
  const schema = `introspect_${(schemas += 1)}`;
  const store = createPostgresStore(database.url, { schema, now: clock.now });
  await store.ready;
  return { ...mountTestApp(store, clock, options), store, clock, close: () => store.close() };
};
afterAll(() => database?.drop());

/** An introspection request authenticated as the client registered (Basic, post, or a bare client_id). */
const introspect = (
  app: Harness['app'],
  caller: RegisteredClient | undefined,
  body: Record<string, string>,
) => (caller ? tokenRequest(app, caller, body, PATH) : request(app).post(PATH).type('form').send(body));

function describeIntrospection(name: string, make: MakeHarness) {
  describe(`POST ${PATH} (${name})`, () => {
    let h: Harness;
    let gateway: RegisteredClient;
    const open = async (options: Partial<OAuthRouterOptions> = {}) => {
      h = await make({ resourceServers: { [RESOURCE_SERVER.clientId]: [RESOURCE] }, ...options });
      // The resource server is set up by its operator, with an id the options can name before it exists.
      await h.store.registerClient(RESOURCE_SERVER);
      gateway = await registerClient(h.app, GATEWAY);
    };
    afterEach(() => h.close());
    const server = () => h as unknown as TestServer;

    test('the metadata advertises it, for authenticated clients only', async () => {
      await open();
      const metadata = (await request(h.app).get('/.well-known/oauth-authorization-server')).body;
      expect(metadata.introspection_endpoint).toBe(`${ISSUER}${PATH}`);
      expect(metadata.introspection_endpoint_auth_methods_supported).toEqual([
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ]);
    });

    test('its own access token: active, with the claims a resource server needs, never cached', async () => {
      await open();
      const { client, tokens } = await obtainTokens(server());
      const res = await introspect(h.app, client, { token: tokens.access_token });
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        active: true,
        scope: 'fakture:read clients:read',
        client_id: client.client_id,
        sub: USER.id,
        aud: RESOURCE,
        iss: ISSUER,
        exp: expect.any(Number),
        iat: expect.any(Number),
        jti: expect.any(String),
        token_type: 'Bearer',
      });
      expect(res.body.exp - res.body.iat).toBe(3600);
    });

    test('its own refresh token (client_secret_post): active, and asking does not use it up', async () => {
      await open();
      const { client, tokens } = await obtainTokens(server(), {
        token_endpoint_auth_method: 'client_secret_post',
      });
      const res = await introspect(h.app, client, {
        token: tokens.refresh_token,
        token_type_hint: 'refresh_token',
      });
      expect(res.body).toMatchObject({
        active: true,
        client_id: client.client_id,
        sub: USER.id,
        aud: RESOURCE,
      });
      expect(res.body.scope).toBe('fakture:read clients:read');
      expect(res.body.exp - res.body.iat).toBe(30 * 86_400);
      const refreshed = await tokenRequest(h.app, client, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
      });
      expect(refreshed.status).toBe(200);
    });

    type Tokens = Awaited<ReturnType<typeof obtainTokens>>;
    const inactive: Array<[string, (t: Tokens, clock: FakeClock) => Promise<string> | string]> = [
      ['an unknown string', () => 'not-a-token'],
      ['an empty-looking JWT', () => 'a.b.c'],
      [
        'an access token signed by another key',
        (t) => {
          const other = createJwtSigner();
          const claims = JSON.parse(
            Buffer.from(t.tokens.access_token.split('.')[1]!, 'base64url').toString(),
          );
          return other.signAccessToken({
            issuer: ISSUER,
            subject: claims.sub,
            audience: RESOURCE,
            clientId: claims.client_id,
            scope: claims.scope,
            grantId: claims.grant_id,
            expiresIn: 600,
          }).token;
        },
      ],
      ['an expired access token', (t, clock) => (clock.advance(60 * MINUTE), t.tokens.access_token)],
      [
        'an access token of a revoked grant',
        async (t) => {
          await request(h.app).post('/v1/oauth/revoke').send({ token: t.tokens.refresh_token });
          return t.tokens.access_token;
        },
      ],
      [
        'a refresh token of a revoked grant',
        async (t) => {
          await request(h.app).post('/v1/oauth/revoke').send({ token: t.tokens.access_token });
          return t.tokens.refresh_token;
        },
      ],
      [
        'a refresh token whose successor was used, past its reuse window',
        async (t, clock) => {
          const next = await tokenRequest(h.app, t.client, {
            grant_type: 'refresh_token',
            refresh_token: t.tokens.refresh_token,
          });
          await tokenRequest(h.app, t.client, {
            grant_type: 'refresh_token',
            refresh_token: next.body.refresh_token,
          });
          clock.advance(86_400 * SECOND + 1);
          return t.tokens.refresh_token;
        },
      ],
      [
        'an expired refresh token',
        (t, clock) => (clock.advance(31 * 86_400 * SECOND), t.tokens.refresh_token),
      ],
    ];
    test.each(inactive)('%s is { active: false } and nothing more', async (_name, arrange) => {
      await open();
      const t = await obtainTokens(server());
      const token = await arrange(t, h.clock);
      const res = await introspect(h.app, t.client, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ active: false });
    });

    // RFC 7662 §2.2 (active: not expired) and RFC 7519 §4.1.4, which RFC 9068 §4 applies: the token is expired from the
    // instant of exp on. The signature check forgives 5 s of skew; introspection answers by this server's own clock.
    test.each([
      ['a minute before exp', -MINUTE, true],
      ['a second before exp', -SECOND, true],
      ['a millisecond before exp', -1, true],
      ['at exp', 0, false],
      ['a second after exp', SECOND, false],
      ['4.999 s after exp (within the signature check’s skew)', 5 * SECOND - 1, false],
      ['a minute after exp', MINUTE, false],
    ])('an access token %s (%i ms from exp) is active: %s', async (_name, offset, active) => {
      await open();
      const { client, tokens } = await obtainTokens(server());
      const { exp } = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString());
      h.clock.set(exp * 1000 + offset);
      const res = await introspect(h.app, client, { token: tokens.access_token });
      expect(res.status).toBe(200);
      expect(res.body.active).toBe(active);
      if (!active) expect(res.body).toEqual({ active: false });
    });

    test('a refresh token just used is still active within its retry window (it can be retried)', async () => {
      await open();
      const { client, tokens } = await obtainTokens(server());
      await tokenRequest(h.app, client, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      h.clock.advance(30 * SECOND);
      expect((await introspect(h.app, client, { token: tokens.refresh_token })).body.active).toBe(true);
    });

    test("another client sees nothing of a token not its own; a resource server sees its audience's access tokens", async () => {
      await open();
      const { tokens } = await obtainTokens(server());
      for (const token of [tokens.access_token, tokens.refresh_token]) {
        expect((await introspect(h.app, gateway, { token })).body).toEqual({ active: false });
      }
      const rs = { client_id: RESOURCE_SERVER.clientId, client_secret: RS_SECRET, redirect_uris: [] };
      const seen = await introspect(
        h.app,
        { ...rs, token_endpoint_auth_method: 'client_secret_basic' },
        {
          token: tokens.access_token,
        },
      );
      expect(seen.body).toMatchObject({ active: true, aud: RESOURCE, sub: USER.id });
      // A refresh token is its own client's business only.
      const refresh = await introspect(
        h.app,
        { ...rs, token_endpoint_auth_method: 'client_secret_basic' },
        {
          token: tokens.refresh_token,
        },
      );
      expect(refresh.body).toEqual({ active: false });
    });

    test.each([
      ['no credentials', undefined, 401],
      ['a wrong secret', 'wrong', 401],
    ] as const)('%s: invalid_client', async (_name, secret, status) => {
      await open();
      const { tokens } = await obtainTokens(server());
      const res = secret
        ? await request(h.app)
            .post(PATH)
            .auth(gateway.client_id, secret)
            .type('form')
            .send({ token: tokens.access_token })
        : await request(h.app).post(PATH).type('form').send({ token: tokens.access_token });
      expect(res.status).toBe(status);
      expect(res.body.error).toBe('invalid_client');
    });

    test('a public client cannot introspect, not even its own token', async () => {
      await open();
      const { client, tokens } = await obtainTokens(server(), { token_endpoint_auth_method: 'none' });
      const res = await introspect(h.app, client, { token: tokens.access_token });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
    });

    test('no token: invalid_request; GET: 405; no CORS for browsers', async () => {
      await open();
      const missing = await introspect(h.app, gateway, {});
      expect(missing.status).toBe(400);
      expect(missing.body.error).toBe('invalid_request');
      expect((await request(h.app).get(PATH)).status).toBe(405);
      const fromPage = await request(h.app)
        .post(PATH)
        .set('Origin', 'https://evil.example')
        .auth(gateway.client_id, gateway.client_secret!)
        .type('form')
        .send({ token: 'x' });
      expect(fromPage.headers['access-control-allow-origin']).toBeUndefined();
    });

    test('rate-limited per address', async () => {
      await open({ rateLimits: { introspect: { limit: 2 } } });
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await introspect(h.app, gateway, { token: 'x' })).status);
      expect(statuses).toEqual([200, 200, 429]);
    });
  });
}

describeIntrospection('SQLite', sqliteHarness);
describeWith('introspection on PostgreSQL', { postgres: true }, () =>
  describeIntrospection('PostgreSQL', postgresHarness),
);
