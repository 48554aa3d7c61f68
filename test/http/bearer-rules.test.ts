// The bearer check's rules, each named after what it stops (RFC 6750 §2.1, §3, RFC 9068 §4, RFC 8707): a header
// smuggling a second token, a token meant for another resource or issuer, missing scopes, a key another instance
// rotated in, and a store that is down (503, the client may retry) as opposed to a fault (the host app's handler).
import request from 'supertest';
import { createJwtSigner, UnknownKeyError } from '../../lib/crypto/signer';
import { OAuthError } from '../../lib/errors';
import {
  createTestServer,
  ISSUER,
  obtainTokens,
  RESOURCE,
  USER,
  type TestServer,
} from '../helpers/oauth-app';

const OTHER_RESOURCE = `${ISSUER}/other`;
const METADATA = `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp"`;
/** RFC 9449 §7.2: a 401 names the DPoP scheme too, after the Bearer challenge. */
const DPOP_CHALLENGE = 'DPoP algs="ES256 RS256 PS256"';
const errors: unknown[] = [];
let server: TestServer;
beforeEach(() => {
  errors.length = 0;
  server = createTestServer({
    resources: [RESOURCE, OTHER_RESOURCE],
    onError: (error) => void errors.push(error),
  });
  const { app, oauth } = server;
  app.get('/two-scopes', oauth.requireBearer({ scopes: ['fakture:read', 'clients:read'] }), (_req, res) =>
    res.json({ ok: true }),
  );
  app.get('/other', oauth.requireBearer({ resource: OTHER_RESOURCE }), (_req, res) => res.json({ ok: true }));
});
afterEach(() => server.close());

const call = (authorization: string, path = '/mcp') =>
  request(server.app).post(path).set('Authorization', authorization);
const get = (path: string, authorization?: string) => {
  const req = request(server.app).get(path);
  return authorization === undefined ? req : req.set('Authorization', authorization);
};
/** The grant behind a token that passed. */
const grantOf = async (token: string) => (await call(`Bearer ${token}`)).body.auth.grantId as string;
/** An access token this server's signer makes, for a grant of our choosing. */
const mint = (grantId: string, overrides: { issuer?: string; audience?: string } = {}) =>
  server.signer.signAccessToken({
    issuer: overrides.issuer ?? ISSUER,
    subject: USER.id,
    audience: overrides.audience ?? RESOURCE,
    clientId: 'c',
    scope: '',
    grantId,
    expiresIn: 600,
  }).token;

describe('the Authorization header', () => {
  test.each([
    ['a second Bearer credential after junk', (t: string) => `Bearer junk Bearer ${t}`],
    ['two tokens', (t: string) => `Bearer ${t} ${t}`],
    ['a token with a character outside b64token', (t: string) => `Bearer ${t}!`],
  ])('smuggling: %s is 400 invalid_request, never the token it hides', async (_name, header) => {
    const { tokens } = await obtainTokens(server);
    expect((await call(`Bearer ${tokens.access_token}`)).status).toBe(200); // verified and remembered
    const res = await call(header(tokens.access_token));
    expect(res.status).toBe(400);
    expect(res.headers['www-authenticate']).toBe(
      `Bearer ${METADATA}, error="invalid_request", error_description="Send the token as Authorization: Bearer <token>."`,
    );
  });

  test.each([
    ['several spaces after the scheme', (t: string) => `Bearer   ${t}`],
    ['trailing spaces', (t: string) => `Bearer ${t}  `],
    ['an upper-case scheme', (t: string) => `BEARER ${t}`],
  ])('%s: the token is accepted (RFC 6750 §2.1)', async (_name, header) => {
    const { tokens } = await obtainTokens(server);
    expect((await call(header(tokens.access_token))).status).toBe(200);
  });

  test.each([
    ['a scheme whose name ends in Bearer', (t: string) => `XBearer ${t}`],
    ['Basic', () => `Basic ${Buffer.from('a:b').toString('base64')}`],
  ])('%s counts as no credentials: 401 with the bare challenge', async (_name, header) => {
    const { tokens } = await obtainTokens(server);
    const res = await call(header(tokens.access_token));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer ${METADATA}, ${DPOP_CHALLENGE}`);
  });
});

describe('audience and issuer', () => {
  test('audience confusion: a live token issued for another resource of this server is refused here', async () => {
    const { tokens } = await obtainTokens(server, {}, { resource: OTHER_RESOURCE });
    expect((await get('/other', `Bearer ${tokens.access_token}`)).status).toBe(200);
    const res = await call(`Bearer ${tokens.access_token}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  test('issuer confusion: a token of a live grant signed with our key but another issuer is refused', async () => {
    const { tokens } = await obtainTokens(server);
    const grantId = await grantOf(tokens.access_token);
    expect((await call(`Bearer ${mint(grantId)}`)).status).toBe(200);
    const res = await call(`Bearer ${mint(grantId, { issuer: 'https://evil.example' })}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  test('a revoked grant is refused with the reason', async () => {
    const { tokens } = await obtainTokens(server);
    await server.oauth.revokeGrant(await grantOf(tokens.access_token));
    const res = await call(`Bearer ${tokens.access_token}`);
    expect(res.headers['www-authenticate']).toContain(
      'error="invalid_token", error_description="The access token has been revoked."',
    );
  });
});

describe('scopes of a route that needs two', () => {
  test('without a token, the challenge names both scopes', async () => {
    const res = await get('/two-scopes');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(
      `Bearer ${METADATA}, scope="fakture:read clients:read", ${DPOP_CHALLENGE}`,
    );
  });

  test.each([
    ['both', 'fakture:read clients:read', 200, undefined],
    ['one of them', 'clients:read', 403, 'This needs the scope fakture:read.'],
    ['neither', 'user:read', 403, 'This needs the scope fakture:read clients:read.'],
  ])('a token with %s', async (_name, scope, status, description) => {
    const { tokens } = await obtainTokens(server, { scope }, { scope });
    const res = await get('/two-scopes', `Bearer ${tokens.access_token}`);
    expect(res.status).toBe(status);
    if (description) {
      expect(res.body).toEqual({ error: 'insufficient_scope', error_description: description });
    }
  });
});

describe('requireBearer options', () => {
  test.each([
    ['one trailing slash', `${RESOURCE}/`],
    ['several trailing slashes', `${RESOURCE}//`],
  ])('a resource written with %s is the same resource', async (_name, resource) => {
    const { tokens } = await obtainTokens(server);
    server.app.get('/spelled', server.oauth.requireBearer({ resource }), (_req, res) => res.json({}));
    expect((await get('/spelled', `Bearer ${tokens.access_token}`)).status).toBe(200);
  });

  test('an unknown resource is refused at startup, listing the ones there are', () => {
    expect(() => server.oauth.requireBearer({ resource: 'https://elsewhere.example/mcp' })).toThrow(
      `requireBearer: "https://elsewhere.example/mcp" is none of the router's resources (${RESOURCE}, ` +
        `${OTHER_RESOURCE}), its tokenExchange's downstream resources and its operatorResources.`,
    );
  });
});

describe('a key another instance rotated in (a shared key set)', () => {
  const rotated = createJwtSigner();
  const foreign = (grantId: string) =>
    rotated.signAccessToken({
      issuer: ISSUER,
      subject: USER.id,
      audience: RESOURCE,
      clientId: 'c',
      scope: '',
      grantId,
      expiresIn: 600,
    }).token;

  test('is read again and the token is accepted', async () => {
    const { tokens } = await obtainTokens(server);
    const grantId = await grantOf(tokens.access_token);
    const fresh: unknown[] = [];
    server.signer.verifyAccessTokenFresh = async (token, expected) => {
      fresh.push(expected);
      return rotated.verifyAccessToken(token, expected);
    };
    const res = await call(`Bearer ${foreign(grantId)}`);
    expect(res.status).toBe(200);
    expect(res.body.auth.grantId).toBe(grantId);
    expect(fresh).toEqual([{ issuer: ISSUER, audience: RESOURCE }]);
  });

  test('still unknown after the read: 401 with the reason the read gave', async () => {
    server.signer.verifyAccessTokenFresh = async () => {
      throw new OAuthError('invalid_token', 'Still no such key.', { cause: new UnknownKeyError('k') });
    };
    const res = await call(`Bearer ${foreign('g')}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error_description="Still no such key."');
  });

  test('a read that fails is a fault for the host app, not a refusal of the token', async () => {
    const failure = new Error('key set unreadable');
    let seen: unknown;
    server.signer.verifyAccessTokenFresh = async () => {
      throw failure;
    };
    server.app.use(((error, _req, res, _next) => {
      seen = error;
      res.status(500).json({ fault: true });
    }) as import('express').ErrorRequestHandler);
    const res = await call(`Bearer ${foreign('g')}`);
    expect(res.status).toBe(500);
    expect(seen).toBe(failure);
  });
});

describe('failures that are not about the token', () => {
  const faultHandler = () => {
    const seen: unknown[] = [];
    server.app.use(((error, _req, res, _next) => {
      seen.push(error);
      res.status(500).json({ fault: true });
    }) as import('express').ErrorRequestHandler);
    return seen;
  };

  test('a signer that throws something other than an OAuthError reaches the host app’s error handler', async () => {
    const bug = new TypeError('signer bug');
    server.signer.verifyAccessToken = () => {
      throw bug;
    };
    const seen = faultHandler();
    const res = await call('Bearer some.token.here');
    expect(res.status).toBe(500);
    expect(seen).toEqual([bug]);
  });

  test('a store that cannot be reached: 503 temporarily_unavailable with Retry-After, reported to onError', async () => {
    const outage = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    server.store.isGrantActive = () => Promise.reject(outage);
    const seen = faultHandler();
    const res = await call(`Bearer ${mint('g')}`);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body.error).toBe('temporarily_unavailable');
    expect(errors).toEqual([outage]);
    expect(seen).toEqual([]);
  });

  test('a store that fails otherwise reaches the host app’s error handler, not a 503', async () => {
    const bug = new Error('no such column: revoked_at');
    server.store.isGrantActive = () => Promise.reject(bug);
    const seen = faultHandler();
    const res = await call(`Bearer ${mint('g')}`);
    expect(res.status).toBe(500);
    expect(seen).toEqual([bug]);
    expect(errors).toEqual([]);
  });
});
