// The bearer check for the tool server (RFC 6750, RFC 9068 §4, RFC 9728 §5.1).
import express from 'express';
import request from 'supertest';
import jwt from 'jsonwebtoken';
import { createJwtSigner } from '../../lib/crypto/signer';
import {
  createTestServer,
  ISSUER,
  obtainTokens,
  RESOURCE,
  USER,
  type TestServer,
} from '../helpers/oauth-app';
import { HOUR, SECOND } from '../helpers/clock';

let server: TestServer;
beforeEach(() => {
  server = createTestServer({ resources: [RESOURCE, `${ISSUER}/other`] });
});
afterEach(() => server.close());

const METADATA = `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp"`;
/** RFC 9449 §7.2: a 401 names the DPoP scheme too, after the Bearer challenge. */
const DPOP_CHALLENGE = 'DPoP algs="ES256 RS256 PS256"';
const callApi = (authorization?: string, path = '/mcp') => {
  const req = request(server.app).post(path);
  return authorization === undefined ? req : req.set('Authorization', authorization);
};

test('a valid token passes and sets a typed req.auth', async () => {
  const { client, tokens } = await obtainTokens(server);
  const res = await callApi(`Bearer ${tokens.access_token}`);
  expect(res.status).toBe(200);
  expect(res.body.auth).toEqual({
    token: tokens.access_token,
    clientId: client.client_id,
    actor: 'user',
    userId: USER.id,
    scopes: ['fakture:read', 'clients:read'],
    grantId: expect.any(String),
    expiresAt: Math.floor(server.clock.now() / 1000) + 3600,
    resource: RESOURCE,
    extra: { userId: USER.id, grantId: expect.any(String) },
  });
});

test('the scheme is case-insensitive (RFC 7235 §2.1)', async () => {
  const { tokens } = await obtainTokens(server);
  expect((await callApi(`bearer ${tokens.access_token}`)).status).toBe(200);
});

test('no token: 401 with the challenge, resource_metadata and no error code (RFC 6750 §3.1)', async () => {
  const res = await callApi();
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toBe(`Bearer ${METADATA}, ${DPOP_CHALLENGE}`);
  expect(res.headers['access-control-expose-headers']).toContain('WWW-Authenticate');
});

test('another scheme counts as no token: 401 with the bare challenge', async () => {
  const { tokens } = await obtainTokens(server);
  const res = await callApi(`Token ${tokens.access_token}`);
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toBe(`Bearer ${METADATA}, ${DPOP_CHALLENGE}`);
});

test('a malformed Bearer header is 400 invalid_request (RFC 6750 §3.1)', async () => {
  const { tokens } = await obtainTokens(server);
  const res = await callApi(`Bearer ${tokens.access_token} ${tokens.access_token}`);
  expect(res.status).toBe(400);
  expect(res.headers['www-authenticate']).toContain('error="invalid_request"');
});

test('a header that only starts with a cached token is not accepted from the cache', async () => {
  const { tokens } = await obtainTokens(server);
  expect((await callApi(`Bearer ${tokens.access_token}`)).status).toBe(200); // now cached
  const res = await callApi(`Bearer ${tokens.access_token} ${tokens.access_token}`);
  expect(res.status).toBe(400);
  expect(res.headers['www-authenticate']).toContain('error="invalid_request"');
});

test('the scope hint names what a route needs', async () => {
  const res = await request(server.app).get('/mcp/invoices');
  expect(res.headers['www-authenticate']).toBe(`Bearer ${METADATA}, scope="fakture:read", ${DPOP_CHALLENGE}`);
});

const otherKey = createJwtSigner();
test.each<[string, (token: string, server: TestServer) => string]>([
  ['a garbled token', () => 'Bearer not-a-jwt'],
  [
    'a token signed by someone else',
    () =>
      `Bearer ${otherKey.signAccessToken({ issuer: ISSUER, subject: USER.id, audience: RESOURCE, clientId: 'c', scope: 'fakture:read', grantId: 'g', expiresIn: 3600 }).token}`,
  ],
  [
    'a token for another resource',
    (_t, s) =>
      `Bearer ${s.signer.signAccessToken({ issuer: ISSUER, subject: USER.id, audience: `${ISSUER}/other`, clientId: 'c', scope: 'fakture:read', grantId: 'g', expiresIn: 3600 }).token}`,
  ],
  [
    'a token of another issuer',
    (_t, s) =>
      `Bearer ${s.signer.signAccessToken({ issuer: 'https://evil.example', subject: USER.id, audience: RESOURCE, clientId: 'c', scope: 'fakture:read', grantId: 'g', expiresIn: 3600 }).token}`,
  ],
  [
    'an ID token (typ JWT) with the right claims',
    (t) => `Bearer ${jwt.sign(jwt.decode(t) as object, 'secret', { algorithm: 'HS256' })}`,
  ],
])('%s: 401 invalid_token', async (_name, make) => {
  const { tokens } = await obtainTokens(server);
  const res = await callApi(make(tokens.access_token, server));
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toMatch(
    /^Bearer resource_metadata="[^"]+", error="invalid_(token|request)", error_description="[^"]+", DPoP algs="ES256 RS256 PS256"$/,
  );
});

test('an expired token is refused (fake clock: 60 minutes plus the skew allowance)', async () => {
  const { tokens } = await obtainTokens(server);
  server.clock.advance(HOUR + 4 * SECOND);
  expect((await callApi(`Bearer ${tokens.access_token}`)).status).toBe(200);
  server.clock.advance(2 * SECOND);
  const res = await callApi(`Bearer ${tokens.access_token}`);
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toContain('The access token has expired.');
});

test('a revoked grant stops its access tokens at once', async () => {
  const { tokens } = await obtainTokens(server);
  const grantId = (await callApi(`Bearer ${tokens.access_token}`)).body.auth.grantId;
  await server.oauth.revokeGrant(grantId);
  const res = await callApi(`Bearer ${tokens.access_token}`);
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
});

test('a missing scope is 403 insufficient_scope naming the scope', async () => {
  const { tokens } = await obtainTokens(server, { scope: 'clients:read' }, { scope: 'clients:read' });
  const res = await request(server.app)
    .get('/mcp/invoices')
    .set('Authorization', `Bearer ${tokens.access_token}`);
  expect(res.status).toBe(403);
  expect(res.body.error).toBe('insufficient_scope');
  expect(res.headers['www-authenticate']).toMatch(/scope="fakture:read", error="insufficient_scope"/);
});

test('requireBearer refuses bad options at startup', () => {
  expect(() => server.oauth.requireBearer({ resource: 'https://elsewhere.example/mcp' })).toThrow(
    /is none of the router's resources .*, its tokenExchange's downstream resources and its operatorResources/,
  );
  expect(() => server.oauth.requireBearer({ scopes: ['bank:write'] })).toThrow(/not in the scope catalogue/);
});

test('an error thrown by the store reaches the app’s error handler instead of hanging', async () => {
  const { tokens } = await obtainTokens(server);
  const app = express();
  const broken = createTestServer();
  (broken.store as { isGrantActive: unknown }).isGrantActive = () =>
    Promise.reject(new Error('database down'));
  app.use(broken.oauth);
  app.post('/mcp', broken.oauth.requireBearer(), (_req, res) => res.json({}));
  app.use(((_error, _req, res, _next) =>
    res.status(503).json({ error: 'temporarily_unavailable' })) as express.ErrorRequestHandler);
  // A token from the first server is refused on signature before the store is asked; sign one here instead.
  const own = broken.signer.signAccessToken({
    issuer: ISSUER,
    subject: USER.id,
    audience: RESOURCE,
    clientId: 'c',
    scope: '',
    grantId: 'g',
    expiresIn: 60,
  });
  expect(tokens.access_token).toBeTruthy();
  const res = await request(app).post('/mcp').set('Authorization', `Bearer ${own.token}`);
  expect(res.status).toBe(503);
  broken.close();
});

describe('the bearer check’s memory never lets a revoked or expired token through', () => {
  const grantOf = async (token: string) => (await callApi(`Bearer ${token}`)).body.auth.grantId as string;

  test('a cached token is refused once it expires', async () => {
    const { tokens } = await obtainTokens(server);
    expect((await callApi(`Bearer ${tokens.access_token}`)).status).toBe(200); // now cached
    server.clock.advance(HOUR + 6 * SECOND);
    expect((await callApi(`Bearer ${tokens.access_token}`)).status).toBe(401);
  });

  test('a revocation through this process is refused at once, although the grant was cached as active', async () => {
    const { tokens } = await obtainTokens(server);
    const grantId = await grantOf(tokens.access_token);
    await request(server.app).post('/v1/oauth/revoke').send({ token: tokens.refresh_token });
    expect((await callApi(`Bearer ${tokens.access_token}`)).status).toBe(401);
    expect(await server.store.isGrantActive(grantId)).toBe(false);
  });

  test('a revocation by another instance (straight in the shared store) is refused within grantStatusMs (1 s)', async () => {
    const { tokens } = await obtainTokens(server);
    const grantId = await grantOf(tokens.access_token);
    await server.store.revokeGrant(grantId);
    server.clock.advance(999);
    // The documented window: this process still trusts its recent "active" answer...
    expect((await callApi(`Bearer ${tokens.access_token}`)).status).toBe(200);
    server.clock.advance(1);
    // ...and no longer than grantStatusMs.
    expect((await callApi(`Bearer ${tokens.access_token}`)).status).toBe(401);
  });

  test('with grantStatusMs 0 every check asks the store', async () => {
    const strict = createTestServer({ cache: { grantStatusMs: 0 } });
    try {
      const { tokens } = await obtainTokens(strict);
      const call = () =>
        request(strict.app).post('/mcp').set('Authorization', `Bearer ${tokens.access_token}`);
      const grantId = (await call()).body.auth.grantId;
      await strict.store.revokeGrant(grantId);
      expect((await call()).status).toBe(401);
    } finally {
      strict.close();
    }
  });
});
