// Operator resources (the operatorResources option): an API of the host's own, such as an admin API for automation,
// whose tokens only the operator's client_credentials clients get, with scopes no person is ever asked for. Every
// other way to a token for it (a consent, a device, a refresh, a registration naming its scope) is refused, and its
// tokens are refused everywhere else.
import request from 'supertest';
import { createOAuthRouter } from '../../lib';
import { createMemoryStore } from '../../lib/store/memory';
import { createJwtSigner } from '../../lib/crypto/signer';
import { registerOperatorClient } from '../../lib/grants/operator-clients';
import type { AuthenticatedRequest } from '../../lib/middleware/bearer';
import { BUSINESS_SCOPES } from '../../example-app/scopes';
import {
  authorizeQuery,
  createTestServer,
  ISSUER,
  obtainTokens,
  RESOURCE,
  registerClient,
  tokenRequest,
  type TestServer,
} from '../helpers/oauth-app';

const ADMIN = `${ISSUER}/admin/api`;
const ADMIN_SCOPES = { admin: 'List and end clients and grants' };

let server: TestServer;
beforeEach(() => {
  server = createTestServer({ operatorResources: [{ resource: ADMIN, scopes: ADMIN_SCOPES }] });
  server.app.get(
    '/admin/api/ping',
    server.oauth.requireBearer({ resource: ADMIN, scopes: ['admin'] }),
    (req, res) => {
      res.json({ auth: (req as AuthenticatedRequest).auth });
    },
  );
});
afterEach(() => server.close());

const machine = (scope: string[] = ['fakture:read', 'admin']) =>
  server.oauth.registerOperatorClient({ name: 'Ops robot', grantTypes: ['client_credentials'], scope });

const grant = (client: { clientId: string; clientSecret?: string }, body: Record<string, string> = {}) =>
  request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .auth(client.clientId, client.clientSecret!)
    .send({ grant_type: 'client_credentials', ...body });

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
const ping = (token: string) =>
  request(server.app).get('/admin/api/ping').set('Authorization', `Bearer ${token}`);

describe('tokens for an operator resource', () => {
  test('a client_credentials client that has its scope gets one, for that resource alone', async () => {
    const client = await machine();
    const res = await grant(client, { resource: ADMIN });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('admin');
    expect(claimsOf(res.body.access_token)).toMatchObject({
      aud: ADMIN,
      sub: client.clientId,
      scope: 'admin',
    });
    const admitted = await ping(res.body.access_token);
    expect(admitted.status).toBe(200);
    expect(admitted.body.auth).toMatchObject({
      actor: 'client',
      clientId: client.clientId,
      scopes: ['admin'],
    });
    // Not at the tool server: another audience.
    const mcp = await request(server.app)
      .post('/mcp')
      .set('Authorization', `Bearer ${res.body.access_token}`);
    expect(mcp.status).toBe(401);
  });

  test('the default resource never carries an operator scope, asked for or not', async () => {
    const client = await machine();
    const plain = await grant(client);
    expect(plain.status).toBe(200);
    expect(plain.body.scope).toBe('fakture:read');
    expect(claimsOf(plain.body.access_token).aud).toBe(RESOURCE);
    expect((await ping(plain.body.access_token)).status).toBe(401);
    const asked = await grant(client, { scope: 'admin' });
    expect(asked.status).toBe(400);
    expect(asked.body.error).toBe('invalid_scope');
    const both = await grant(client, { resource: RESOURCE, scope: 'fakture:read admin' });
    expect(both.body.error).toBe('invalid_scope');
  });

  test.each([
    ['a catalogue scope for the operator resource', ['fakture:read', 'admin'], { scope: 'fakture:read' }],
    ['an operator scope the client was not given', ['fakture:read'], {}],
  ])('refused: %s (invalid_scope)', async (_name, scope, body) => {
    const client = await machine(scope);
    const res = await grant(client, { resource: ADMIN, ...body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
  });

  test('a token of the tool server is refused by the operator resource, with a challenge naming its metadata', async () => {
    const { tokens } = await obtainTokens(server);
    const res = await ping(tokens.access_token);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain(
      `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/admin/api"`,
    );
  });

  test('its client may introspect and revoke it, and a revoked one is refused', async () => {
    const client = await machine();
    const token = (await grant(client, { resource: ADMIN })).body.access_token as string;
    const seen = await request(server.app)
      .post('/v1/oauth/introspect')
      .type('form')
      .auth(client.clientId, client.clientSecret!)
      .send({ token });
    expect(seen.body).toMatchObject({ active: true, aud: ADMIN, scope: 'admin' });
    const revoked = await request(server.app)
      .post('/v1/oauth/revoke')
      .type('form')
      .auth(client.clientId, client.clientSecret!)
      .send({ token });
    expect(revoked.status).toBe(200);
    server.clock.advance(5_000);
    expect((await ping(token)).status).toBe(401);
  });
});

describe('no other way to one', () => {
  test('a registration cannot name an operator scope', async () => {
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .send({ redirect_uris: ['https://client.example/callback'], scope: 'fakture:read admin' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });

  test('an authorization request for the operator resource is refused (invalid_target)', async () => {
    const client = await registerClient(server.app);
    const { query } = authorizeQuery(client, { resource: ADMIN });
    const res = await request(server.app).get(`/v1/oauth/authorize?${query}`);
    // An untrusted client's error is not redirected: a page says what went wrong.
    expect(res.status).toBe(400);
    expect(res.text).toContain('invalid_target');
  });

  test('a refresh for the operator resource is refused (invalid_target)', async () => {
    const { client, tokens } = await obtainTokens(server);
    const res = await tokenRequest(server.app, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      resource: ADMIN,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_target');
  });

  test('an operator client without client_credentials cannot be given an operator scope', async () => {
    await expect(
      server.oauth.registerOperatorClient({
        name: 'Web',
        grantTypes: ['authorization_code'],
        redirectUris: ['https://ops.example/cb'],
        scope: ['admin'],
      }),
    ).rejects.toThrow(/only the client_credentials grant issues: add client_credentials/);
  });

  test('an operator client registered without a scope gets the catalogue, not the operator scopes', async () => {
    const client = await server.oauth.registerOperatorClient({
      name: 'Export',
      grantTypes: ['client_credentials'],
    });
    expect(client.record.scope.split(' ')).not.toContain('admin');
    expect((await grant(client, { resource: ADMIN })).body.error).toBe('invalid_scope');
  });

  test('a client whose scope names it without the operator having given it by name gets none', async () => {
    // As when a scope moves from the consent catalogue into an operator resource: clients registered with the whole
    // catalogue before hold its name in their scope; and a host's own metadata cannot say it was given.
    for (const options of [{}, { metadata: { operator_scopes: ['admin'] } }]) {
      const before = await registerOperatorClient(
        server.store,
        { ...BUSINESS_SCOPES, ...ADMIN_SCOPES },
        {
          name: 'Registered before the move',
          grantTypes: ['client_credentials'],
          ...options,
        },
      );
      expect(before.record.scope.split(' ')).toContain('admin');
      expect(before.record.metadata.operator_scopes).toBeUndefined();
      const res = await grant(before, { resource: ADMIN });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_scope');
    }
  });

  test('the standalone registerOperatorClient gives an operator scope only when told it is one', async () => {
    const store = createMemoryStore();
    await expect(
      registerOperatorClient(store, BUSINESS_SCOPES, {
        name: 'x',
        grantTypes: ['client_credentials'],
        scope: ['admin'],
      }),
    ).rejects.toThrow(TypeError);
    const told = await registerOperatorClient(
      store,
      BUSINESS_SCOPES,
      { name: 'x', grantTypes: ['client_credentials'], scope: ['admin'] },
      Date.now(),
      ['admin'],
    );
    expect(told.record.scope).toBe('admin');
  });
});

describe('discovery', () => {
  test('the operator resource has its own metadata; the server’s lists no operator scope', async () => {
    const own = await request(server.app).get('/.well-known/oauth-protected-resource/admin/api');
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({
      resource: ADMIN,
      authorization_servers: [ISSUER],
      scopes_supported: ['admin'],
    });
    const as = await request(server.app).get('/.well-known/oauth-authorization-server');
    expect(as.body.scopes_supported).not.toContain('admin');
    const mcp = await request(server.app).get('/.well-known/oauth-protected-resource/mcp');
    expect(mcp.body.scopes_supported).not.toContain('admin');
  });
});

describe('the option, checked at startup', () => {
  const create =
    (operatorResources: unknown, extra: Record<string, unknown> = {}) =>
    () =>
      createOAuthRouter(createMemoryStore(), createJwtSigner(), {
        issuer: ISSUER,
        scopes: BUSINESS_SCOPES,
        authenticateUser: () => null,
        rateLimits: false,
        operatorResources: operatorResources as never,
        ...extra,
      });

  test.each([
    ['not an array', { resource: ADMIN, scopes: ADMIN_SCOPES }, /must be an array/],
    ['an entry that is no object', ['x'], /operatorResources\[0\] must be \{ resource, scopes \}/],
    [
      'another origin',
      [{ resource: 'https://elsewhere.example/admin', scopes: ADMIN_SCOPES }],
      /on the issuer's origin/,
    ],
    ['a query', [{ resource: `${ADMIN}?x=1`, scopes: ADMIN_SCOPES }], /must not have a query/],
    ['one of resources', [{ resource: RESOURCE, scopes: ADMIN_SCOPES }], /is named already/],
    [
      'twice',
      [
        { resource: ADMIN, scopes: ADMIN_SCOPES },
        { resource: `${ADMIN}/`, scopes: ADMIN_SCOPES },
      ],
      /is named already/,
    ],
    ['no scopes', [{ resource: ADMIN, scopes: {} }], /must name at least one scope/],
    ['scopes as a list', [{ resource: ADMIN, scopes: ['admin'] }], /must name at least one scope/],
    [
      'a catalogue scope',
      [{ resource: ADMIN, scopes: { 'fakture:read': 'x' } }],
      /a scope of the consent catalogue/,
    ],
    [
      'offline_access',
      [{ resource: ADMIN, scopes: { offline_access: 'x' } }],
      /a scope of the consent catalogue/,
    ],
    ['a forbidden character', [{ resource: ADMIN, scopes: { 'a"b': 'x' } }], /RFC 6749 §3.3 forbids/],
    ['no description', [{ resource: ADMIN, scopes: { admin: '' } }], /needs a description/],
    [
      'one scope for two resources',
      [
        { resource: ADMIN, scopes: { read: 'x' } },
        { resource: `${ISSUER}/billing`, scopes: { read: 'y' } },
      ],
      /"read" is already a scope of another operator resource/,
    ],
  ])('refused: %s', (_name, given, message) => {
    expect(create(given)).toThrow(message);
  });

  test('a downstream resource of tokenExchange is named already', () => {
    expect(
      create([{ resource: `${ISSUER}/renderer`, scopes: ADMIN_SCOPES }], {
        tokenExchange: { resources: [`${ISSUER}/renderer`] },
      }),
    ).toThrow(/is named already/);
  });

  test('requireBearer takes only the resource’s own scopes', () => {
    expect(() => server.oauth.requireBearer({ resource: ADMIN, scopes: ['fakture:read'] })).toThrow(
      /"fakture:read" is not a scope of the operator resource/,
    );
    expect(() => server.oauth.requireBearer({ scopes: ['admin'] })).toThrow(/not in the scope catalogue/);
  });
});
