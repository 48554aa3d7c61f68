// Attacks on upstream sign-in with a provider whose every answer the test writes (test/helpers/fake-openid-provider),
// two of them side by side, and a host app that also has a session of its own: an email with another address's
// verification, tokens of one person on another's grant, mix-ups between the providers, stray callbacks, broken
// answers; and revocation upstream on every way a grant ends.
import { createServer, type Server, type ServerResponse } from 'node:http';
import request from 'supertest';
import type { OAuthEvent } from '../../lib/events';
import { startFakeOp, type FakeOp } from '../helpers/fake-openid-provider';
import {
  authorizeQuery,
  createTestServer,
  registerClient,
  tokenRequest,
  type RegisteredClient,
} from '../helpers/oauth-app';
import { freePort } from '../helpers/ports';
import { openSignIn, providerLinks, type UpstreamWorld } from '../helpers/upstream-world';

jest.setTimeout(30_000);

let a: FakeOp;
let b: FakeOp;
let baseUrl: string;
let http: Server;
let server: ReturnType<typeof createTestServer>;
let client: RegisteredClient;
const events: OAuthEvent[] = [];
const errors: unknown[] = [];
let hostUser: string | undefined;
/** What findUser answers instead of the user of the email, when a test sets it. */
let findUserAnswer: (() => unknown) | undefined;

beforeAll(async () => {
  a = await startFakeOp({ clientId: 'client-a' });
  b = await startFakeOp({ clientId: 'client-b' });
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = createTestServer({
    issuer: baseUrl,
    onEvent: (event) => void events.push(event),
    onError: (error) => void errors.push(error),
    // The host app's own session, beside upstream sign-in.
    getSessionUser: () => (hostUser ? { id: hostUser } : undefined),
    upstream: {
      providers: [
        {
          id: 'a',
          name: 'A',
          issuer: a.issuer,
          clientId: 'client-a',
          clientSecret: 's',
          keepTokens: true,
          timeoutSeconds: 2,
        },
        { id: 'b', name: 'B', issuer: b.issuer, clientId: 'client-b', clientSecret: 's', keepTokens: true },
      ],
      findUser: (identity) => {
        if (findUserAnswer) return findUserAnswer() as null;
        return identity.email ? { id: `user:${identity.email}`, email: identity.email } : null;
      },
    },
  });
  http = createServer(server.app);
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  client = await registerClient(server.app, { redirect_uris: ['https://client.example/callback'] });
});
afterAll(async () => {
  http?.closeAllConnections();
  await new Promise((resolve) => http?.close(resolve));
  server?.close();
  await a?.close();
  await b?.close();
});
beforeEach(() => {
  a.script = {};
  b.script = {};
  a.authRequests.length = 0;
  events.length = 0;
  errors.length = 0;
  hostUser = undefined;
  findUserAnswer = undefined;
});

const world = () => ({ server: { ...server, baseUrl } }) as unknown as UpstreamWorld;
const signedIn = () =>
  events.filter((event) => event.type === 'sign_in.succeeded').map((event) => event.userId);

/** A browser sent to provider `id`: the state and nonce the provider was given. */
async function start(id: 'a' | 'b') {
  const page = await openSignIn(world(), client);
  const toProvider = await page.browser.visit(page.links[id]!);
  const location = new URL(toProvider.headers.get('location')!);
  return {
    ...page,
    toProvider,
    state: location.searchParams.get('state')!,
    nonce: location.searchParams.get('nonce') ?? undefined,
  };
}
const callback = (id: 'a' | 'b', params: Record<string, string>) =>
  `${baseUrl}/v1/oauth/upstream/callback/${id}?${new URLSearchParams(params)}`;
/** The provider's honest answer to the browser's request. */
const answer = (op: FakeOp, id: 'a' | 'b', s: Awaited<ReturnType<typeof start>>) =>
  s.browser.visit(callback(id, { code: op.mintCode(s.nonce), state: s.state, iss: op.issuer }));

/** Through provider A as `email` (verified), consent, and the code exchanged: the grant and what redeemed it. */
async function grantThroughA(email: string) {
  a.script.idClaims = () => ({ email, email_verified: true, sub: email });
  const s = await start('a');
  const landed = await answer(a, 'a', s);
  const consent = await s.browser.visit(landed.headers.get('location')!);
  const decided = await s.browser.submit(baseUrl, await consent.text(), [['decision', 'allow']]);
  const code = new URL(decided.headers.get('location')!).searchParams.get('code')!;
  const redeem = () =>
    tokenRequest(server.app, client, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirect_uris[0]!,
      code_verifier: s.pkce.verifier,
    });
  const tokens = (await redeem()).body as { access_token: string; refresh_token: string };
  const me = await request(server.app).post('/mcp').auth(tokens.access_token, { type: 'bearer' });
  return {
    tokens,
    redeem,
    grantId: me.body.auth.grantId as string,
    userId: me.body.auth.extra.userId as string,
  };
}

test('the start link and the callback are never cached, and leak no Referer', async () => {
  const s = await start('a');
  expect(s.toProvider.headers.get('cache-control')).toBe('no-store');
  expect(s.toProvider.headers.get('referrer-policy')).toBe('no-referrer');
  expect(s.html).toContain('rel="noreferrer"');
});

describe('the email and its verification are one claim', () => {
  test.each([
    [
      "the ID token's email without email_verified, user info verifying another address: that address, not the first",
      { email: 'victim@corp.test' },
      { sub: 'alice', email: 'alice@other.test', email_verified: true },
      303,
      'user:alice@other.test',
    ],
    [
      "the ID token's email without email_verified, user info saying nothing of email: unverified, refused",
      { email: 'victim@corp.test' },
      { sub: 'alice' },
      403,
      undefined,
    ],
    [
      'false in the ID token wins over true in user info',
      { email: 'x@t.test', email_verified: false },
      { sub: 'alice', email: 'x@t.test', email_verified: true },
      403,
      undefined,
    ],
    [
      'user info about another subject: refused',
      { email: 'x@t.test' },
      { sub: 'mallory', email: 'x@t.test', email_verified: true },
      400,
      undefined,
    ],
  ])('%s', async (_name, idClaims, userinfo, status, user) => {
    a.script.idClaims = () => idClaims;
    a.script.userinfo = () => userinfo;
    const landed = await answer(a, 'a', await start('a'));
    expect(landed.status).toBe(status);
    expect(signedIn()).toEqual(user ? [user] : []);
  });
});

test("an upstream sign-in's tokens never go to the grant of another user (the host app's session)", async () => {
  a.script.idClaims = () => ({ email: 'bob@t.test', email_verified: true, sub: 'bob' });
  const s = await start('a');
  const landed = await answer(a, 'a', s);
  expect(landed.status).toBe(303);
  // Before the consent, the browser is signed in to the host app as someone else (a shared computer).
  hostUser = 'user:alice-hosted';
  const consent = await s.browser.visit(landed.headers.get('location')!);
  const decided = await s.browser.submit(baseUrl, await consent.text(), [['decision', 'allow']]);
  const code = new URL(decided.headers.get('location')!).searchParams.get('code')!;
  const tokens = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: s.pkce.verifier,
  });
  const me = await request(server.app).post('/mcp').auth(tokens.body.access_token, { type: 'bearer' });
  expect(me.body.auth.extra.userId).toBe('user:alice-hosted');
  expect(await server.store.findUpstreamTokens(me.body.auth.grantId)).toBeUndefined();
  await expect(server.oauth.upstreamToken(me.body.auth)).rejects.toMatchObject({ code: 'invalid_token' });
});

describe('mix-up between the two providers', () => {
  test.each([
    ["B's code at B's callback, for A's request", 'b' as const, {}],
    ["B's code at A's callback, naming B as its issuer (RFC 9207)", 'a' as const, { iss: 'B' }],
  ])('%s: refused before any token request', async (_name, at, extra) => {
    const s = await start('a');
    const params: Record<string, string> = { code: b.mintCode(s.nonce), state: s.state };
    if ('iss' in extra) params.iss = b.issuer;
    const before = [a.tokenRequests.length, b.tokenRequests.length];
    const landed = await s.browser.visit(callback(at, params));
    expect(landed.status).toBeGreaterThanOrEqual(400);
    expect([a.tokenRequests.length, b.tokenRequests.length]).toEqual(before);
    expect(signedIn()).toEqual([]);
  });

  test('each provider is told its own callback (RFC 9700 §4.4.2)', async () => {
    for (const id of ['a', 'b'] as const) {
      const s = await start(id);
      expect(new URL(s.toProvider.headers.get('location')!).searchParams.get('redirect_uri')).toBe(
        `${baseUrl}/v1/oauth/upstream/callback/${id}`,
      );
    }
  });
});

test('a stray callback (another state) neither signs in nor cancels the sign-in in progress', async () => {
  a.script.idClaims = () => ({ email: 'carol@t.test', email_verified: true });
  const s = await start('a');
  const stray = await s.browser.visit(callback('a', { code: 'x', state: 'not-the-state' }));
  expect(stray.status).toBe(403);
  expect(stray.headers.get('set-cookie') ?? '').not.toContain('mcp_oauth_upstream=;');
  expect((await answer(a, 'a', s)).status).toBe(303);
  expect(signedIn()).toEqual(['user:carol@t.test']);
});

test.each<[string, FakeOp['script'], number]>([
  ['an HTML token answer', { token: (_q, res) => html(res, 200) }, 400],
  ['a 500 from the token endpoint', { token: (_q, res) => html(res, 500) }, 502],
  [
    'GitHub-style HTTP 200 with an error',
    { token: (_q, res) => json(res, 200, { error: 'bad_verification_code' }) },
    400,
  ],
  [
    'no id_token',
    { token: (_q, res, defaults) => json(res, 200, { ...defaults, id_token: undefined }) },
    400,
  ],
  ['an answer slower than timeoutSeconds', { delayMs: 3000 }, 502],
])('%s: the sign-in page with a message, never a 500', async (_name, script, status) => {
  const s = await start('a');
  a.script = script;
  const landed = await answer(a, 'a', s);
  expect(landed.status).toBe(status);
  expect(await landed.text()).toContain('Continue with A');
});

test.each([
  ['code replay', async (g: Awaited<ReturnType<typeof grantThroughA>>) => g.redeem()],
  [
    'RFC 7009 revocation by the client',
    (g: Awaited<ReturnType<typeof grantThroughA>>) =>
      tokenRequest(server.app, client, { token: g.tokens.refresh_token }, '/v1/oauth/revoke'),
  ],
  [
    'an administrator (router.revokeGrant)',
    (g: Awaited<ReturnType<typeof grantThroughA>>) => server.oauth.revokeGrant(g.grantId),
  ],
])('a grant ended by %s: its upstream tokens are deleted and revoked upstream', async (_name, end) => {
  const grant = await grantThroughA(`end-${a.revocations.length}@t.test`);
  const before = a.revocations.length;
  await end(grant);
  expect(a.revocations.length - before).toBe(2);
  expect(await server.store.findUpstreamTokens(grant.grantId)).toBeUndefined();
});

function html(res: ServerResponse, status: number): true {
  res.writeHead(status, { 'Content-Type': 'text/html' });
  res.end('<html>maintenance</html>');
  return true;
}
function json(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
  return true;
}

describe('the start link', () => {
  test('the transaction cookie: HttpOnly, SameSite=Lax, ten minutes, sent to the callbacks only', async () => {
    const s = await start('a');
    const cookie = s.toProvider.headers
      .getSetCookie()
      .find((line) => line.startsWith('mcp_oauth_upstream='))!;
    expect(cookie.split('; ').slice(1).sort()).toEqual([
      'HttpOnly',
      'Max-Age=600',
      'Path=/v1/oauth/upstream/callback',
      'SameSite=Lax',
    ]);
  });

  test.each([
    ['an unknown provider', (link: URL) => link.searchParams.set('provider', 'nope')],
    ['a provider given twice', (link: URL) => link.searchParams.append('provider', 'b')],
  ])('%s: refused, nobody sent anywhere', async (_name, alter) => {
    const page = await openSignIn(world(), client);
    const link = new URL(page.links.a!);
    alter(link);
    const res = await page.browser.visit(link);
    // An error for the client (its page, or a redirect back to it), never a 500, never the provider.
    expect(res.status).toBeGreaterThanOrEqual(300);
    expect(res.status).toBeLessThan(500);
    expect(res.headers.get('location') ?? '').not.toContain(a.url);
    expect(a.authRequests).toEqual([]);
  });

  test('a link older than the pending request (30 minutes): a page, never a 500', async () => {
    const page = await openSignIn(world(), client);
    server.clock.advance(31 * 60 * 1000);
    const res = await page.browser.visit(page.links.a!);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('expired');
  });
});

test('a refusal is an event with the provider, the reason and the detail; only a bug of the host app is an error', async () => {
  a.script = { token: (_q, res) => html(res, 500) };
  await answer(a, 'a', await start('a'));
  expect(events.filter((event) => event.type === 'sign_in.failed')).toEqual([
    expect.objectContaining({
      clientId: client.client_id,
      provider: 'a',
      reason: 'upstream_unavailable',
      detail: expect.any(String),
    }),
  ]);
  expect(errors).toEqual([]);
  a.script = { idClaims: () => ({ email: 'x@t.test', email_verified: true }) };
  findUserAnswer = () => ({ id: '' });
  const landed = await answer(a, 'a', await start('a'));
  expect(landed.status).toBe(400);
  expect(String(errors[0])).toContain('findUser returned a user without a string id');
  findUserAnswer = () => {
    throw new Error('the host app failed');
  };
  expect((await answer(a, 'a', await start('a'))).status).toBe(400);
  expect(String(errors[1])).toContain('the host app failed');
});

test('on https, the transaction cookie is __Host- and Secure, for the whole site (a sibling subdomain cannot plant one)', async () => {
  const secure = createTestServer({
    issuer: 'https://mcp.example',
    upstream: {
      providers: [{ id: 'a', name: 'A', issuer: a.issuer, clientId: 'client-a', clientSecret: 's' }],
      findUser: () => null,
    },
  });
  try {
    const httpsClient = await registerClient(secure.app, {
      redirect_uris: ['https://client.example/callback'],
    });
    const { query } = authorizeQuery(httpsClient, { resource: 'https://mcp.example/mcp' });
    const page = await request(secure.app).get(`/v1/oauth/authorize?${query}`);
    const csrf = page.headers['set-cookie']![0]!.split(';')[0]!;
    const link = new URL(providerLinks(page.text).a!);
    const started = await request(secure.app)
      .get(link.pathname + link.search)
      .set('Cookie', csrf);
    expect(started.status).toBe(302);
    const cookie = ([] as string[])
      .concat(started.headers['set-cookie'] ?? [])
      .find((line) => line.startsWith('__Host-mcp_oauth_upstream='))!;
    expect(cookie.split('; ').slice(1).sort()).toEqual([
      'HttpOnly',
      'Max-Age=600',
      'Path=/',
      'SameSite=Lax',
      'Secure',
    ]);
  } finally {
    secure.close();
  }
});
