// Sign-in through upstream providers, end to end with real ones on loopback: oidc-provider (OpenID Connect, keeping
// the user's tokens) and a GitHub-shaped OAuth 2 server. The whole journey (our sign-in page, upstream sign-in, our
// consent, our token, the user's upstream token for a tool, upstream refresh, revocation), then every refusal.
import { existsSync, readFileSync } from 'node:fs';
import request from 'supertest';
import { registerClient, tokenRequest, type RegisteredClient } from '../helpers/oauth-app';
import { freePort } from '../helpers/ports';
import { signInGithubWithFetch } from '../helpers/upstream-github';
import { signInUpstreamWithFetch } from '../helpers/upstream-oidc';
import {
  ANA,
  DENY,
  IVO,
  STRANGER,
  openSignIn,
  startUpstreamWorld,
  type UpstreamWorld,
} from '../helpers/upstream-world';

jest.setTimeout(30_000);

let world: UpstreamWorld;
let client: RegisteredClient;
beforeAll(async () => {
  world = await startUpstreamWorld();
  client = await registerClient(world.server.app, { redirect_uris: ['https://client.example/callback'] });
});
afterAll(() => world?.close());

/** Starts at our sign-in page, goes upstream through `provider`'s link, signs in there, and lands on our callback. */
async function throughUpstream(
  provider: 'oidc' | 'github',
  who: { email: string; password: string } | string,
  overrides = {},
) {
  const start = await openSignIn(world, client, overrides);
  const toProvider = await start.browser.visit(start.links[provider]!);
  expect(toProvider.status).toBe(302);
  const upstreamUrl = toProvider.headers.get('location')!;
  const callback =
    typeof who === 'string'
      ? await signInGithubWithFetch(upstreamUrl, who)
      : await signInUpstreamWithFetch(upstreamUrl, who);
  const landed = await start.browser.visit(callback);
  return { ...start, upstreamUrl, callback, landed, text: landed.status === 303 ? '' : await landed.text() };
}

/** From our callback's redirect to the code: the consent page, Allow, and the code exchange. */
async function consentAndRedeem(journey: Awaited<ReturnType<typeof throughUpstream>>) {
  expect(journey.landed.status).toBe(303);
  const consent = await journey.browser.visit(journey.landed.headers.get('location')!);
  const html = await consent.text();
  expect(html).toContain('Allow');
  const decided = await journey.browser.submit(world.server.baseUrl, html, [['decision', 'allow']]);
  const code = new URL(decided.headers.get('location')!).searchParams.get('code')!;
  const token = await tokenRequest(world.server.app, client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: journey.pkce.verifier,
  });
  expect(token.status).toBe(200);
  const me = await request(world.server.app).post('/mcp').auth(token.body.access_token, { type: 'bearer' });
  return { token: token.body, auth: me.body.auth as { grantId: string; extra: { userId: string } } };
}

test('the sign-in page offers each provider beside the email form, as links bound to this browser', async () => {
  const { html, links } = await openSignIn(world, client);
  expect(html).toContain('Continue with Upstream ID');
  expect(html).toContain('Continue with GitHub');
  expect(html).toContain('name="password"');
  expect(Object.keys(links)).toEqual(['oidc', 'github']);
  // The link carries the CSRF token of this browser's cookie: another browser following it is refused.
  const stranger = await fetch(links.oidc!, { redirect: 'manual' });
  expect(stranger.status).toBe(403);
});

test('OpenID: sign in upstream, consent, and a tool gets the user’s upstream token, refreshed once, revoked with the grant', async () => {
  const journey = await throughUpstream('oidc', ANA);
  const upstreamUrl = new URL(journey.upstreamUrl);
  // PKCE, state and nonce upstream; the callback is ours.
  expect(upstreamUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(upstreamUrl.searchParams.get('nonce')).toBeTruthy();
  expect(upstreamUrl.searchParams.get('redirect_uri')).toBe(
    `${world.server.baseUrl}/v1/oauth/upstream/callback/oidc`,
  );
  const { auth } = await consentAndRedeem(journey);
  expect(auth.extra.userId).toBe('user-ana');

  const statsAtConsent = await world.oidc.stats();
  const upstream = await world.server.oauth.upstreamToken(auth);
  expect(upstream).toMatchObject({ provider: 'oidc', tokenType: expect.stringMatching(/^bearer$/i) });
  // Fresh for an hour (the provider's expires_in), so not refreshed now.
  expect(upstream.expiresAt).toBe(world.server.clock.now() + 3600 * 1000);
  expect((await world.oidc.stats()).tokenRequests.refresh_token).toBe(
    statsAtConsent.tokenRequests.refresh_token,
  );
  const userinfo = await fetch(`${world.oidc.issuer}/me`, {
    headers: { Authorization: `Bearer ${upstream.accessToken}` },
  });
  expect(await userinfo.json()).toMatchObject({ sub: 'ana', email: ANA.email });
  // Sealed at rest: the database files hold the token only encrypted.
  const files = ['', '-wal']
    .map((suffix) => world.server.dbPath + suffix)
    .filter(existsSync)
    .map((file) => readFileSync(file).toString('latin1'))
    .join('');
  expect(files).toContain((await world.server.store.findUpstreamTokens(auth.grantId))!.sealed);
  expect(files).not.toContain(upstream.accessToken);

  // Two hours later the upstream access token has expired: concurrent callers of two instances (two routers, two
  // connections to one database) share one upstream refresh, as the provider counts them.
  const before = await world.oidc.stats();
  world.server.clock.advance(2 * 3600 * 1000);
  const other = world.secondInstance();
  const instances = [world.server.oauth, other.oauth];
  const fresh = await Promise.all(
    Array.from({ length: 6 }, (_, i) => instances[i % 2]!.upstreamToken(auth.grantId)),
  ).finally(other.close);
  expect(new Set(fresh.map((token) => token.accessToken)).size).toBe(1);
  expect(fresh[0]!.accessToken).not.toBe(upstream.accessToken);
  expect((await world.oidc.stats()).tokenRequests.refresh_token).toBe(before.tokenRequests.refresh_token + 1);

  // Revoking the grant deletes the tokens here and revokes them upstream.
  await world.server.oauth.revokeGrant(auth.grantId);
  expect((await world.oidc.stats()).revocations).toBeGreaterThan(before.revocations);
  await expect(world.server.oauth.upstreamToken(auth)).rejects.toMatchObject({ code: 'invalid_token' });
  expect(await world.server.store.findUpstreamTokens(auth.grantId)).toBeUndefined();
});

test('GitHub-shaped OAuth 2: the verified email comes from /user/emails; no tokens are kept', async () => {
  const journey = await throughUpstream('github', 'octo');
  expect(new URL(journey.upstreamUrl).searchParams.get('nonce')).toBeNull();
  // Keeping no tokens, the sign-in is an ordinary one: another request in this browser goes straight to consent.
  const other = await journey.browser.visit(journey.page.url.replace('state-123', 'state-456'));
  expect(await other.text()).toContain('Allow');
  const { auth } = await consentAndRedeem(journey);
  expect(auth.extra.userId).toBe('user-octo');
  expect(world.github.requests.emails).toBeGreaterThan(0);
  await expect(world.server.oauth.upstreamToken(auth)).rejects.toMatchObject({ code: 'invalid_token' });
});

test.each([
  ['an unverified email', IVO, 403, 'has not verified the email address', 'unverified_email'],
  ['no account of the host app', STRANGER, 403, 'No account here matches', 'no_account'],
  ['the provider refusing (an upstream error)', DENY, 403, 'did not sign you in', 'upstream_error'],
])(
  '%s: the sign-in page again with a clear message, nobody signed in',
  async (_name, account, status, text) => {
    const journey = await throughUpstream('oidc', account);
    expect(journey.landed.status).toBe(status);
    expect(journey.text).toContain(text);
    expect(journey.text).toContain('Continue with Upstream ID');
    // Still signed out: the authorization request shows the sign-in page, not consent.
    const again = await journey.browser.visit(journey.page.url);
    expect(await again.text()).toContain('Continue with Upstream ID');
  },
);

test('GitHub without a verified email is refused', async () => {
  const journey = await throughUpstream('github', 'nomail');
  expect(journey.landed.status).toBe(403);
  expect(journey.text).toContain('has not verified');
});

describe('the callback is bound to the browser and the request that started it', () => {
  test.each([
    ['a wrong state', (url: URL) => url.searchParams.set('state', 'forged')],
    ['no state', (url: URL) => url.searchParams.delete('state')],
  ])('%s: refused, nothing exchanged upstream', async (_name, alter) => {
    const start = await openSignIn(world, client);
    const toProvider = await start.browser.visit(start.links.oidc!);
    const callback = new URL(await signInUpstreamWithFetch(toProvider.headers.get('location')!, ANA));
    alter(callback);
    const before = (await world.oidc.stats()).tokenRequests.authorization_code;
    const landed = await start.browser.visit(callback);
    expect(landed.status).toBe(403);
    expect(await landed.text()).toContain('did not start in this browser');
    expect((await world.oidc.stats()).tokenRequests.authorization_code).toBe(before);
  });

  test('login CSRF: the attacker’s own callback URL, opened in the victim’s browser, signs nobody in', async () => {
    const attacker = await openSignIn(world, client);
    const toProvider = await attacker.browser.visit(attacker.links.oidc!);
    const callback = await signInUpstreamWithFetch(toProvider.headers.get('location')!, ANA);
    const victim = await openSignIn(world, client);
    const landed = await victim.browser.visit(callback);
    expect(landed.status).toBe(403);
    expect(landed.headers.get('set-cookie') ?? '').not.toContain('mcp_oauth_session');
  });

  test('a replayed callback (with the transaction cookie copied) is refused', async () => {
    const start = await openSignIn(world, client);
    const toProvider = await start.browser.visit(start.links.github!);
    const transaction = start.browser.cookies.get('mcp_oauth_upstream')!;
    const callback = await signInGithubWithFetch(toProvider.headers.get('location')!, 'octo');
    expect((await start.browser.visit(callback)).status).toBe(303);
    start.browser.cookies.set('mcp_oauth_upstream', transaction);
    const replay = await start.browser.visit(callback);
    expect(replay.status).toBe(403);
    expect(await replay.text()).toContain('was already used');
  });

  test('a mix-up: an answer naming another issuer (RFC 9207 iss) is refused', async () => {
    const start = await openSignIn(world, client);
    const toProvider = await start.browser.visit(start.links.oidc!);
    const callback = new URL(await signInUpstreamWithFetch(toProvider.headers.get('location')!, ANA));
    callback.searchParams.set('iss', world.github.url);
    const landed = await start.browser.visit(callback);
    expect(landed.status).toBe(400);
    expect(await landed.text()).toContain('Signing in with Upstream ID did not work');
  });

  test('an upstream sign-in that keeps tokens holds for its own request only, and its consent only once', async () => {
    const journey = await throughUpstream('oidc', ANA);
    // Another authorization request in the same browser asks for a sign-in of its own.
    const other = await journey.browser.visit(journey.page.url.replace('state-123', 'state-456'));
    expect(await other.text()).toContain('Continue with Upstream ID');
    const consent = await journey.browser.visit(journey.landed.headers.get('location')!);
    const html = await consent.text();
    const first = await journey.browser.submit(world.server.baseUrl, html, [['decision', 'allow']]);
    expect(new URL(first.headers.get('location')!).searchParams.get('code')).toBeTruthy();
    const second = await journey.browser.submit(world.server.baseUrl, html, [['decision', 'allow']]);
    expect(new URL(second.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
  });
});

test('a provider that is down: a clear page (502), never a 500', async () => {
  const closed = `http://127.0.0.1:${await freePort()}`;
  const down = await startUpstreamWorld({
    upstream: {
      providers: [{ id: 'down', name: 'Down ID', issuer: closed, clientId: 'x', clientSecret: 'y' }],
    },
  });
  try {
    const downClient = await registerClient(down.server.app, {
      redirect_uris: ['https://client.example/callback'],
    });
    const start = await openSignIn(down, downClient);
    const page = await start.browser.visit(start.links.down!);
    expect(page.status).toBe(502);
    expect(await page.text()).toContain('Down ID cannot be reached right now');
  } finally {
    await down.close();
  }
});
