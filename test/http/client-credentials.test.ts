// The client_credentials grant (RFC 6749 §4.4, MCP's client credentials extension): only for clients the operator
// registered, authenticated with a secret or a private_key_jwt assertion; a token for the client itself, no refresh
// token; and every way a stranger might get one, refused.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import type { OAuthEvent } from '../../lib/events';
import { registerOperatorClient } from '../../lib/grants/operator-clients';
import { clientRecord } from '../../lib/testing/fixtures';
import { BUSINESS_SCOPES } from '../../example-app/scopes';
import {
  authorizeInBrowser,
  createTestServer,
  ISSUER,
  RESOURCE,
  registerClient,
  tokenRequest,
  USER,
  type TestServer,
} from '../helpers/oauth-app';

let server: TestServer;
let events: OAuthEvent[];
beforeEach(() => {
  events = [];
  server = createTestServer({ onEvent: (event) => void events.push(event) });
});
afterEach(() => server.close());

const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const publicJwk = { ...keys.publicKey.export({ format: 'jwk' }), kid: 'machine-1', use: 'sig', alg: 'ES256' };
const assertion = (clientId: string, aud = ISSUER) =>
  jwt.sign({ jti: randomUUID() }, keys.privateKey, {
    algorithm: 'ES256',
    keyid: 'machine-1',
    issuer: clientId,
    subject: clientId,
    audience: aud,
    expiresIn: 60,
  });

async function machineClient(
  options: Partial<Parameters<typeof server.oauth.registerOperatorClient>[0]> = {},
) {
  return server.oauth.registerOperatorClient({
    name: 'Nightly export',
    grantTypes: ['client_credentials'],
    scope: ['fakture:read', 'company:read'],
    ...options,
  });
}

const grant = (client: { clientId: string; clientSecret?: string }, body: Record<string, string> = {}) =>
  request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .auth(client.clientId, client.clientSecret ?? '')
    .send({ grant_type: 'client_credentials', ...body });

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());

test('an operator client with a secret gets a token for itself: sub is the client, no refresh token (§4.4.3)', async () => {
  const client = await machineClient();
  expect(client.tokenEndpointAuthMethod).toBe('client_secret_basic');
  const res = await grant(client);
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toEqual({
    access_token: expect.any(String),
    token_type: 'Bearer',
    expires_in: 3600,
    scope: 'fakture:read company:read',
  });
  expect(claimsOf(res.body.access_token)).toMatchObject({
    sub: client.clientId,
    client_id: client.clientId,
    aud: RESOURCE,
  });
  const call = await request(server.app).post('/mcp').set('Authorization', `Bearer ${res.body.access_token}`);
  expect(call.body.auth).toMatchObject({
    actor: 'client',
    userId: client.clientId,
    clientId: client.clientId,
  });
  const issued = events.filter((event) => event.type === 'token.issued');
  expect(issued).toEqual([
    expect.objectContaining({
      clientId: client.clientId,
      grantType: 'client_credentials',
      scopes: expect.any(Array),
    }),
  ]);
  // A machine's token names no user, and a bearer token no key.
  expect(Object.keys(issued[0]!)).not.toContain('userId');
  expect(Object.keys(issued[0]!)).not.toContain('jkt');
});

test('a user’s token says actor user', async () => {
  const client = await registerClient(server.app);
  const { code, pkce } = await authorizeInBrowser(server.app, client);
  const tokens = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: pkce.verifier,
  });
  const call = await request(server.app)
    .post('/mcp')
    .set('Authorization', `Bearer ${tokens.body.access_token}`);
  expect(call.body.auth).toMatchObject({ actor: 'user', userId: USER.id });
});

test('an operator client with keys authenticates with private_key_jwt (RFC 7523 §2.2) and gets its token', async () => {
  const client = await machineClient({ jwks: { keys: [publicJwk] } });
  expect(client).not.toHaveProperty('clientSecret');
  expect(client.tokenEndpointAuthMethod).toBe('private_key_jwt');
  const res = await request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .send({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion(client.clientId),
    });
  expect(res.status).toBe(200);
  expect(claimsOf(res.body.access_token).sub).toBe(client.clientId);
});

test.each([
  ['a narrower scope', 'fakture:read', 200, 'fakture:read'],
  [
    'offline_access alone (dropped: the client’s whole scope)',
    'offline_access',
    200,
    'fakture:read company:read',
  ],
  ['a scope the operator did not allow it', 'fakture:read clients:write', 400, 'invalid_scope'],
  ['a scope nobody has', 'root', 400, 'invalid_scope'],
])('scope (RFC 6749 §3.3): %s', async (_name, scope, status, expected) => {
  const res = await grant(await machineClient(), { scope });
  expect(res.status).toBe(status);
  expect(status === 200 ? res.body.scope : res.body.error).toBe(expected);
});

test('the resource (RFC 8707): this server’s is the audience, another is invalid_target', async () => {
  const client = await machineClient();
  expect(claimsOf((await grant(client, { resource: `${RESOURCE}/` })).body.access_token).aud).toBe(RESOURCE);
  expect((await grant(client, { resource: 'https://elsewhere.example/mcp' })).body.error).toBe(
    'invalid_target',
  );
});

test('revoking the grant of a machine token ends it at the bearer check; introspection names the client', async () => {
  const client = await machineClient();
  const { access_token: token } = (await grant(client)).body;
  const seen = await request(server.app)
    .post('/v1/oauth/introspect')
    .type('form')
    .auth(client.clientId, client.clientSecret!)
    .send({ token });
  expect(seen.body).toMatchObject({ active: true, sub: client.clientId, client_id: client.clientId });
  expect(await server.oauth.revokeGrant(claimsOf(token).grant_id)).toBe(true);
  expect((await request(server.app).post('/mcp').set('Authorization', `Bearer ${token}`)).status).toBe(401);
});

describe('who may not use it', () => {
  test.each([
    ['a dynamically registered confidential client', { token_endpoint_auth_method: 'client_secret_basic' }],
    [
      'a dynamically registered client that asked for client_secret_post',
      { token_endpoint_auth_method: 'client_secret_post' },
    ],
  ])('%s: unauthorized_client (registration cannot give the grant)', async (_name, metadata) => {
    const client = await registerClient(server.app, metadata);
    expect(client.grant_types).not.toContain('client_credentials');
    const res = await tokenRequest(server.app, client, { grant_type: 'client_credentials' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unauthorized_client');
  });

  test('registration asking for client_credentials is refused (RFC 7591 §3.2.2)', async () => {
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .send({
        redirect_uris: ['https://a.example/cb'],
        grant_types: ['authorization_code', 'client_credentials'],
      });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });

  test('a public client is refused even with the grant type in its record (§4.4: confidential clients only)', async () => {
    const record = clientRecord({ grantTypes: ['client_credentials'], tokenEndpointAuthMethod: 'none' });
    await server.store.registerClient(record);
    const res = await request(server.app)
      .post('/v1/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: record.clientId });
    expect(res.body).toEqual({
      error: 'unauthorized_client',
      error_description: 'A public client cannot use the client_credentials grant.',
    });
  });

  // The operator's scope list was checked against the catalogue when the client was registered; the catalogue may
  // have changed since (a scope renamed or dropped): a token never carries a scope the server no longer serves.
  test.each([
    ['a scope the catalogue dropped is left out', 'fakture:read retired:scope', 200, 'fakture:read'],
    ['a client left with no scope the catalogue serves is refused', 'retired:scope', 400, undefined],
  ])('%s', async (_name, scope, status, granted) => {
    const client = await machineClient();
    const stored = (await server.store.findClient(client.clientId))!;
    await server.store.registerClient({ ...stored, clientId: `${client.clientId}-2`, scope });
    const res = await grant({ clientId: `${client.clientId}-2`, clientSecret: client.clientSecret! });
    expect(res.status).toBe(status);
    if (granted) expect(res.body.scope).toBe(granted);
    else
      expect(res.body).toEqual({
        error: 'invalid_scope',
        error_description: 'This client may ask for no scope of this resource.',
      });
  });

  test('a wrong secret is invalid_client, with a Basic challenge', async () => {
    const client = await machineClient();
    const res = await grant({ ...client, clientSecret: 'wrong' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  test('an operator client without the grant type cannot use it; one with only it cannot exchange a code', async () => {
    const browserOnly = await server.oauth.registerOperatorClient({
      name: 'Portal',
      grantTypes: ['authorization_code', 'refresh_token'],
      redirectUris: ['https://portal.example/cb'],
    });
    expect((await grant(browserOnly)).body.error).toBe('unauthorized_client');
    const machine = await machineClient();
    const res = await grant(machine, {
      grant_type: 'authorization_code',
      code: 'x',
      redirect_uri: 'https://x',
      code_verifier: 'v'.repeat(43),
    });
    expect(res.body.error).toBe('unauthorized_client');
  });

  test('a user whose id is a client’s id cannot consent to that client: its token would read as a machine’s', async () => {
    await server.store.registerClient(
      clientRecord({
        clientId: USER.id,
        redirectUris: ['https://client.example/callback'],
        scope: 'fakture:read clients:read',
      }),
    );
    const { location } = await authorizeInBrowser(server.app, {
      client_id: USER.id,
      redirect_uris: ['https://client.example/callback'],
    });
    expect(location.searchParams.get('error')).toBe('access_denied');
  });
});

describe('registerOperatorClient refuses what an operator would regret, saying how to fix it', () => {
  test.each<[string, Record<string, unknown>, RegExp]>([
    ['no name', { name: ' ' }, /give the client a name/],
    ['no grant type', { grantTypes: [] }, /grantTypes must list one or more/],
    ['an unknown grant type', { grantTypes: ['password'] }, /grantTypes must list one or more/],
    [
      'refresh_token without authorization_code',
      { grantTypes: ['client_credentials', 'refresh_token'] },
      /refresh_token goes with authorization_code/,
    ],
    ['a scope outside the catalogue', { scope: ['root'] }, /The scope "root"/],
    [
      'authorization_code without redirect URIs',
      { grantTypes: ['authorization_code'] },
      /redirect_uris is required/,
    ],
    ['an http jwks_uri', { jwksUri: 'http://keys.example/jwks.json' }, /jwks_uri/],
    [
      'both jwks and jwks_uri',
      { jwksUri: 'https://keys.example/jwks.json', jwks: { keys: [publicJwk] } },
      /not both/,
    ],
  ])('%s', async (_name, change, message) => {
    await expect(
      registerOperatorClient(server.store, BUSINESS_SCOPES, {
        name: 'Job',
        grantTypes: ['client_credentials'],
        ...change,
      } as never),
    ).rejects.toThrow(message);
  });

  test('the secret is returned once and stored only as its hash; the metadata is kept', async () => {
    const client = await machineClient({ metadata: { acts_for_user: 'user-1' } });
    const stored = await server.store.findClient(client.clientId);
    expect(JSON.stringify(stored)).not.toContain(client.clientSecret);
    expect(stored).toMatchObject({
      grantTypes: ['client_credentials'],
      redirectUris: [],
      scope: 'fakture:read company:read',
      metadata: { acts_for_user: 'user-1' },
    });
  });
});
