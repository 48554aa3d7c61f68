// createOAuthRouter's options: defaults, and every mistake refused at startup with a message that says the fix.
import express from 'express';
import request from 'supertest';
import { createJwtSigner } from '../../lib/crypto/signer';
import { createOAuthRouter } from '../../lib/router';
import type { OAuthRouterOptions } from '../../lib/options';
import { createSqliteStore } from '../../lib/store/sqlite';
import { createTestServer, registerClient } from '../helpers/oauth-app';

const store = createSqliteStore(':memory:');
const signer = createJwtSigner();
afterAll(() => store.close());
const SCOPES = { 'notes:read': 'Read your notes', 'notes:write': 'Change your notes' };
const base: OAuthRouterOptions = {
  issuer: 'https://api.example.com',
  scopes: SCOPES,
  authenticateUser: () => null,
};

test('defaults: /mcp as the resource, the spec’s lifetimes and paths; the host app’s scopes', () => {
  const { info } = createOAuthRouter(store, signer, base);
  expect(info).toEqual({
    issuer: 'https://api.example.com',
    resources: ['https://api.example.com/mcp'],
    scopes: SCOPES,
    lifetimes: {
      authorizationCode: 600,
      accessToken: 3600,
      refreshToken: 2_592_000,
      signIn: 1800,
    },
    endpoints: {
      authorization: 'https://api.example.com/v1/oauth/authorize',
      token: 'https://api.example.com/v1/oauth/token',
      registration: 'https://api.example.com/v1/oauth/register',
      revocation: 'https://api.example.com/v1/oauth/revoke',
      introspection: 'https://api.example.com/v1/oauth/introspect',
      jwks: 'https://api.example.com/v1/oauth/jwks',
    },
  });
});

test('the router shows public facts only: no secret, frozen', () => {
  const secret = 'x'.repeat(40);
  const { info } = createOAuthRouter(store, signer, { ...base, secret });
  expect(JSON.stringify(info)).not.toContain(secret);
  expect(Object.keys(info).sort()).toEqual(['endpoints', 'issuer', 'lifetimes', 'resources', 'scopes']);
  expect(Object.isFrozen(info) && Object.isFrozen(info.endpoints) && Object.isFrozen(info.scopes)).toBe(true);
  expect('config' in createOAuthRouter(store, signer, base)).toBe(false);
});

test('paths: each endpoint where the host app puts it, in the metadata and the routes', async () => {
  const oauth = createOAuthRouter(store, signer, {
    ...base,
    issuer: 'http://127.0.0.1:4000',
    paths: { token: '/oauth/token', registration: '/oauth/register', authorization: '/oauth/authorize' },
  });
  expect(oauth.info.endpoints.token).toBe('http://127.0.0.1:4000/oauth/token');
  const app = express().use(oauth);
  const metadata = await request(app).get('/.well-known/oauth-authorization-server');
  expect(metadata.body).toMatchObject({
    token_endpoint: 'http://127.0.0.1:4000/oauth/token',
    registration_endpoint: 'http://127.0.0.1:4000/oauth/register',
    authorization_endpoint: 'http://127.0.0.1:4000/oauth/authorize',
    revocation_endpoint: 'http://127.0.0.1:4000/v1/oauth/revoke',
  });
  const registered = await request(app)
    .post('/oauth/register')
    .send({ redirect_uris: ['https://client.example/cb'], token_endpoint_auth_method: 'none' });
  expect(registered.status).toBe(201);
  expect((await request(app).post('/v1/oauth/register').send({})).status).toBe(404);
  const token = await request(app).post('/oauth/token').type('form').send({ grant_type: 'password' });
  expect(token.body.error).toBe('invalid_client');
  const page = await request(app).get('/oauth/authorize').query({
    client_id: registered.body.client_id,
    response_type: 'code',
    redirect_uri: 'https://client.example/cb',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    scope: 'notes:read',
    state: 's',
  });
  // The sign-in form posts below the authorization path, and its cookies are scoped to it.
  expect(page.text).toContain('action="http://127.0.0.1:4000/oauth/authorize/sign-in"');
  const cookies = [page.headers['set-cookie'] ?? []].flat();
  expect(cookies.length).toBeGreaterThan(0);
  for (const cookie of cookies) expect(cookie).toContain('Path=/oauth/authorize');
});

test('a trailing slash on the issuer is dropped so the issuer is byte-identical everywhere', () => {
  expect(createOAuthRouter(store, signer, { ...base, issuer: 'https://api.example.com/' }).info.issuer).toBe(
    'https://api.example.com',
  );
});

test.each<[string, Partial<OAuthRouterOptions> | null, RegExp]>([
  ['no options', null, /pass options/],
  ['no issuer', { issuer: undefined as never }, /issuer must be a URL string/],
  ['a relative issuer', { issuer: '/api' }, /not an absolute URL/],
  ['an http issuer on a public host', { issuer: 'http://api.example.com' }, /must use https/],
  ['an issuer with a query', { issuer: 'https://api.example.com/?a=1' }, /must not have a query or fragment/],
  [
    'a resource on another origin',
    { resources: ['https://other.example.com/mcp'] },
    /must be on the issuer's origin/,
  ],
  ['no resources', { resources: [] }, /at least one protected resource/],
  ['no scope catalogue', { scopes: undefined as never }, /scopes is required/],
  ['an empty scope catalogue', { scopes: {} }, /at least one scope/],
  ['a path that is not one', { paths: { token: 'token' } }, /paths.token must be a path/],
  ['a path with a trailing slash', { paths: { token: '/oauth/token/' } }, /paths.token must be a path/],
  ['a path under .well-known', { paths: { jwks: '/.well-known/jwks' } }, /paths.jwks must be a path/],
  ['two endpoints on one path', { paths: { token: '/v1/oauth/revoke' } }, /a path of its own/],
  [
    'an endpoint that does not exist',
    { paths: { userinfo: '/me' } as never },
    /paths.userinfo is not an endpoint/,
  ],
  ['a scope with a space', { scopes: { 'a b': 'x' } }, /RFC 6749 §3.3 forbids/],
  ['a scope without words', { scopes: { 'a:read': '' } }, /plain-language description/],
  [
    'a 20-minute code',
    { lifetimes: { authorizationCode: 1200 } },
    /lifetimes.authorizationCode must be a whole number of seconds from 1 to 600/,
  ],
  ['a fractional access token lifetime', { lifetimes: { accessToken: 1.5 } }, /lifetimes.accessToken/],
  [
    'the retry window under its old name',
    { lifetimes: { refreshRetryWindow: 60 } as never },
    /lifetimes.refreshRetryWindow is now refreshTokenReuse.window/,
  ],
  [
    'a reuse window longer than the refresh token',
    { lifetimes: { refreshToken: 3600 }, refreshTokenReuse: { window: 3601 } },
    /refreshTokenReuse.window must be a whole number of seconds from 0 to the refresh token lifetime \(3600\)/,
  ],
  [
    'a scope named offline_access, which clients add and the server drops',
    { scopes: { offline_access: 'Stay connected', 'notes:read': 'Read' } },
    /the scope "offline_access" is a request for a refresh token/,
  ],
  ['a negative reuse window', { refreshTokenReuse: { window: -1 } }, /refreshTokenReuse.window/],
  [
    'untilSuccessorUsed that is not a boolean',
    { refreshTokenReuse: { untilSuccessorUsed: 'yes' as never } },
    /refreshTokenReuse.untilSuccessorUsed must be true or false/,
  ],
  [
    'an unknown reuse preset',
    { refreshTokenReuse: 'lenient' as never },
    /refreshTokenReuse must be 'strict' or/,
  ],
  ['no way to sign in', { authenticateUser: undefined }, /say how users sign in/],
  [
    'authenticateUser not a function',
    { authenticateUser: 'yes' as never },
    /authenticateUser must be a function/,
  ],
  [
    'a host session with nowhere to sign in',
    { authenticateUser: undefined, getSessionUser: () => null },
    /give signInUrl/,
  ],
  ['a short secret', { secret: 'short' }, /at least 32 bytes/],
  ['an unknown view', { views: { home: '/x.ejs' } as never }, /views.home is not a page/],
  ['a relative view path', { views: { login: 'views/login.ejs' } }, /absolute path/],
  ['a missing view file', { views: { login: '/nonexistent/login.ejs' } }, /does not exist/],
  ['an http documentation URL', { serviceDocumentation: 'http://docs.example.com' }, /must use https/],
  ['a clock that is not a function', { now: 1 as never }, /now must be a function/],
  ['a rate limit of 0', { rateLimits: { token: { limit: 0 } } }, /rateLimits.token.limit/],
  [
    'a rate-limit window under a second',
    { rateLimits: { register: { windowMs: 10 } } },
    /rateLimits.register.windowMs/,
  ],
  [
    'a rate-limit store that is not a factory',
    { rateLimits: { store: {} as never } },
    /rateLimits.store must be a function/,
  ],
  [
    'documents options that are not an object',
    { clientMetadataDocuments: 'on' as never },
    /must be an object/,
  ],
  ['a negative cache floor', { clientMetadataDocuments: { minCacheSeconds: -1 } }, /minCacheSeconds/],
  [
    'a cache ceiling under the floor',
    { clientMetadataDocuments: { minCacheSeconds: 600, maxCacheSeconds: 60 } },
    /maxCacheSeconds must be a whole number from 600/,
  ],
  [
    'documents enabled as a string',
    { clientMetadataDocuments: { enabled: 'yes' as never } },
    /enabled must be true/,
  ],
  ['a fetch deadline of 10 ms', { clientMetadataDocuments: { timeoutMs: 10 } }, /timeoutMs/],
  ['a document cap of 100 bytes', { clientMetadataDocuments: { maxBytes: 100 } }, /maxBytes/],
  [
    'a resolver that is not a function',
    { clientMetadataDocuments: { resolveHost: 1 as never } },
    /resolveHost/,
  ],
  ['a CA that is not PEM', { clientMetadataDocuments: { ca: 'not a certificate' } }, /PEM certificates/],
  ['trusted clients that are not ids', { trustedClients: [1] as never }, /trustedClients must be an array/],
  [
    'resource servers as a list',
    { resourceServers: ['gateway'] as never },
    /resourceServers must map client ids/,
  ],
  ['a resource server with no resource', { resourceServers: { gateway: [] } }, /must list the resources/],
  [
    'a resource server of a resource this server does not protect',
    { resourceServers: { gateway: ['https://elsewhere.example/mcp'] } },
    /names "https:\/\/elsewhere.example\/mcp", which is none of resources, tokenExchange.s downstream resources and operatorResources/,
  ],
])('refuses %s', (_name, options, message) => {
  expect(() =>
    createOAuthRouter(store, signer, options === null ? (undefined as never) : { ...base, ...options }),
  ).toThrow(message);
});

test.each([
  ['no store', () => createOAuthRouter(undefined as never, signer, base), /first argument must be a store/],
  ['no signer', () => createOAuthRouter(store, {} as never, base), /second argument must be a signer/],
])('refuses %s', (_name, create, message) => {
  expect(create).toThrow(message);
});

describe('rate limits on the JSON endpoints', () => {
  test('registration beyond its limit is 429 JSON with standard RateLimit headers', async () => {
    const server = createTestServer({ rateLimits: { register: { limit: 2 } } });
    try {
      await registerClient(server.app);
      const second = await request(server.app)
        .post('/v1/oauth/register')
        .send({ redirect_uris: ['https://a.example/cb'] });
      expect(second.status).toBe(201);
      expect(second.headers.ratelimit).toMatch(/r=0/);
      const third = await request(server.app)
        .post('/v1/oauth/register')
        .send({ redirect_uris: ['https://a.example/cb'] });
      expect(third.status).toBe(429);
      expect(third.body).toEqual({ error: 'too_many_requests', error_description: expect.any(String) });
      expect(third.headers['retry-after']).toBeDefined();
    } finally {
      server.close();
    }
  });

  test('a shared store is asked for one store per limit', async () => {
    const names: string[] = [];
    const server = createTestServer({
      rateLimits: {
        store: (name) => {
          names.push(name);
          const hits = new Map<string, number>();
          return {
            async increment(key: string) {
              hits.set(key, (hits.get(key) ?? 0) + 1);
              return { totalHits: hits.get(key)!, resetTime: new Date(Date.now() + 60_000) };
            },
            async decrement(key: string) {
              hits.set(key, (hits.get(key) ?? 1) - 1);
            },
            async resetKey(key: string) {
              hits.delete(key);
            },
          };
        },
      },
    });
    try {
      expect(names.sort()).toEqual([
        'authorize',
        'deviceAuthorization',
        'introspect',
        'register',
        'revoke',
        'signIn',
        'signInPerAccount',
        'signInSlowdown',
        'token',
        'userCode',
        'userCodePerCode',
      ]);
      expect((await request(server.app).post('/v1/oauth/revoke').send({ token: 'x' })).status).toBe(200);
    } finally {
      server.close();
    }
  });

  test('each limit can be turned off alone', async () => {
    const server = createTestServer({ rateLimits: { revoke: false, token: { limit: 1 } } });
    try {
      for (let i = 0; i < 3; i += 1)
        expect((await request(server.app).post('/v1/oauth/revoke').send({ token: 'x' })).status).toBe(200);
      await request(server.app).post('/v1/oauth/token').send({});
      expect((await request(server.app).post('/v1/oauth/token').send({})).status).toBe(429);
    } finally {
      server.close();
    }
  });
});

test('an unexpected error is answered 500 server_error as JSON and reported to onError', async () => {
  const errors: unknown[] = [];
  const server = createTestServer({ onError: (error) => errors.push(error) });
  try {
    (server.store as { registerClient: unknown }).registerClient = () => {
      throw new Error('disk full');
    };
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .send({ redirect_uris: ['https://a.example/cb'] });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'server_error', error_description: expect.any(String) });
    expect(res.body.error_description).not.toContain('disk full');
    expect(errors).toHaveLength(1);
  } finally {
    server.close();
  }
});

test.each<[string, string, string, number, Record<string, string>?]>([
  ['an unsupported charset', 'application/json; charset=klingon', '{}', 415],
  ['a corrupt compressed body', 'application/json', '{}', 400, { 'Content-Encoding': 'br' }],
])('%s is a 4xx', async (_name, type, body, status, headers = {}) => {
  const server = createTestServer();
  try {
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .set('Content-Type', type)
      .set(headers)
      .send(body);
    expect(res.status).toBe(status);
    expect(res.body.error).toBe('invalid_request');
  } finally {
    server.close();
  }
});

test("each endpoint has its own name in Express's stack (and stack traces), not a shared wrapper's", () => {
  const oauth = createOAuthRouter(store, signer, base);
  const names = (oauth.stack as Array<{ route?: { stack: Array<{ name: string }> } }>).flatMap(
    (layer) => layer.route?.stack.map((entry) => entry.name) ?? [],
  );
  for (const name of [
    'tokenEndpoint',
    'registrationEndpoint',
    'revocationEndpoint',
    'authorizationPage',
    'signInForm',
    'consentDecision',
  ])
    expect(names).toContain(name);
  expect(names).not.toContain('asyncHandler');
});

describe('a request for a path the router does not serve', () => {
  const app = express();
  app.use(createOAuthRouter(store, signer, base));
  app.use((_req, res) => void res.status(299).send('the host app'));

  // Express matches routes without regard to case and with or without one trailing slash: so must the shortcut.
  test.each([
    ['GET', '/.well-known/oauth-authorization-server', 200],
    ['GET', '/.WELL-KNOWN/OAuth-Authorization-Server/', 200],
    ['GET', '/.well-known/oauth-protected-resource/mcp', 200],
    ['GET', '/v1/oauth/jwks/', 200],
    ['POST', '/v1/oauth/Token', 401],
    ['GET', '/v1/oauth/token', 405],
    ['POST', '/v1/oauth/revoke/', 400],
    ['POST', '/mcp', 299],
    ['GET', '/v1/oauth', 299],
    ['GET', '/v1/oauth/token/more', 299],
    ['GET', '/v1/oauth/token//', 299],
    ['GET', '/', 299],
  ])('%s %s answers %d', async (method, path, status) => {
    const res = await request(app)[method === 'GET' ? 'get' : 'post'](path);
    expect(res.status).toBe(status);
  });

  test('leaves the router at its first layer, without being matched against each route', () => {
    const router = createOAuthRouter(store, signer, base);
    const first = (router.stack as Array<{ handle: express.RequestHandler }>)[0]!.handle;
    const next = jest.fn();
    first({ path: '/mcp' } as express.Request, {} as express.Response, next);
    first({ path: '/V1/OAUTH/TOKEN/' } as express.Request, {} as express.Response, next);
    expect(next.mock.calls).toEqual([['router'], [undefined]]);
  });
});
