// The upstream sign-in fixtures, proved with a client written elsewhere (openid-client, ESM-only: loaded with a
// dynamic import, so Jest needs NODE_OPTIONS=--experimental-vm-modules). Neither upstream knows our server.
import { signInGithubWithFetch, startGithubDouble, type GithubDouble } from '../helpers/upstream-github';
import {
  signInUpstreamWithFetch,
  startOidcUpstream,
  UPSTREAM_ACCOUNTS,
  type OidcUpstream,
} from '../helpers/upstream-oidc';

type OpenidClient = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });
type Configuration = InstanceType<OpenidClient['Configuration']>;

const REDIRECT_URI = 'http://127.0.0.1:9/upstream/callback';
const account = (sub: string) => UPSTREAM_ACCOUNTS.find((candidate) => candidate.sub === sub)!;

let client: OpenidClient;
beforeAll(async () => {
  client = await import('openid-client').catch((error: Error) => {
    throw new Error(
      `openid-client is ESM-only: run Jest with NODE_OPTIONS=--experimental-vm-modules (${error.message})`,
    );
  });
});

/** An authorization URL with PKCE and state (and a nonce for `openid`), and the checks for its callback. */
const authorize = async (config: Configuration, scope: string) => {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  const expectedState = client.randomState();
  const expectedNonce = scope.includes('openid') ? client.randomNonce() : undefined;
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    state: expectedState,
    ...(expectedNonce && { nonce: expectedNonce }),
  });
  return { url: url.href, checks: { pkceCodeVerifier, expectedState, expectedNonce } };
};

describe('the OpenID upstream (oidc-provider in a process)', () => {
  let upstream: OidcUpstream;
  let config: Configuration;
  const discover = (auth?: 'basic') =>
    client.discovery(
      new URL(upstream.issuer),
      upstream.clientId,
      upstream.clientSecret,
      auth && client.ClientSecretBasic(upstream.clientSecret),
      { execute: [client.allowInsecureRequests] },
    );
  beforeAll(async () => {
    upstream = await startOidcUpstream({ redirectUris: [REDIRECT_URI] });
    config = await discover();
  });
  afterAll(() => upstream.close());

  test.each([
    ['ana', true, undefined],
    ['ivo', false, 'basic' as const],
  ])('%s signs in: claims, userinfo, refresh, revocation', async (sub, verified, auth) => {
    const config = await discover(auth);
    const { email, name, password } = account(sub);
    const before = await upstream.stats();
    const { url, checks } = await authorize(config, 'openid email profile');
    const location = await signInUpstreamWithFetch(url, { email, password });
    expect(new URL(location).searchParams.get('iss')).toBe(upstream.issuer);

    const tokens = await client.authorizationCodeGrant(config, new URL(location), checks);
    expect(tokens.claims()).toMatchObject({
      iss: upstream.issuer,
      sub,
      email,
      email_verified: verified,
      name,
    });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(tokens.expires_in).toBe(3600);
    const info = await client.fetchUserInfo(config, tokens.access_token, sub);
    expect(info).toMatchObject({ sub, email, email_verified: verified, name });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    const refreshToken = refreshed.refresh_token ?? tokens.refresh_token!;
    await client.tokenRevocation(config, refreshToken, { token_type_hint: 'refresh_token' });
    await expect(client.refreshTokenGrant(config, refreshToken)).rejects.toMatchObject({
      error: 'invalid_grant',
    });

    const after = await upstream.stats();
    expect(after.tokenRequests.authorization_code - before.tokenRequests.authorization_code).toBe(1);
    expect(after.tokenRequests.refresh_token - before.tokenRequests.refresh_token).toBe(2);
    expect(after.revocations - before.revocations).toBe(1);
    expect(after.userinfo - before.userinfo).toBe(1);
  });

  test('the deny account comes back with an upstream error', async () => {
    const { url, checks } = await authorize(config, 'openid');
    const location = new URL(await signInUpstreamWithFetch(url, account('deny')));
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The user refused.',
      state: checks.expectedState,
      iss: upstream.issuer,
    });
  });

  test('a wrong password stays on the upstream', async () => {
    const { url } = await authorize(config, 'openid');
    await expect(
      signInUpstreamWithFetch(url, { email: 'ana@upstream.test', password: 'nope' }),
    ).rejects.toThrow('Wrong email or password.');
  });
});

describe('the GitHub-shaped upstream', () => {
  let github: GithubDouble;
  let config: Configuration;
  beforeAll(async () => {
    github = await startGithubDouble({ redirectUris: [REDIRECT_URI] });
    config = new client.Configuration(
      {
        issuer: github.url,
        authorization_endpoint: `${github.url}/login/oauth/authorize`,
        token_endpoint: `${github.url}/login/oauth/access_token`,
      },
      github.clientId,
      github.clientSecret,
    );
    client.allowInsecureRequests(config);
  });
  afterAll(() => github.close());

  test.each([
    ['octo', { id: 1, email: 'octo@github.test' }, true],
    ['nomail', { id: 2, email: null }, false],
  ])('%s: code with PKCE, then /user and /user/emails', async (login, user, verified) => {
    const { url, checks } = await authorize(config, 'read:user user:email');
    const location = new URL(await signInGithubWithFetch(url, login));
    expect(location.searchParams.has('iss')).toBe(false);
    const tokens = await client.authorizationCodeGrant(config, location, checks);
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read:user,user:email' });

    const get = async (path: string) =>
      (
        await client.fetchProtectedResource(config, tokens.access_token, new URL(github.url + path), 'GET')
      ).json();
    expect(await get('/user')).toEqual({ ...user, login, name: expect.any(String) });
    expect(await get('/user/emails')).toEqual([expect.objectContaining({ verified, primary: true })]);

    // The code was single-use; GitHub says so with HTTP 200.
    const reused = await client.authorizationCodeGrant(config, location, checks).catch((error) => error);
    expect([reused.code, reused.cause?.cause?.body?.error]).toEqual([
      'OAUTH_INVALID_RESPONSE',
      'bad_verification_code',
    ]);
  });

  test('a refusal, an unknown redirect_uri, bad credentials', async () => {
    const { url, checks } = await authorize(config, 'read:user user:email');
    const refused = new URL(await signInGithubWithFetch(url, 'refuse'));
    expect(refused.searchParams.get('error')).toBe('access_denied');
    expect(refused.searchParams.get('state')).toBe(checks.expectedState);

    const elsewhere = new URL(url);
    elsewhere.searchParams.set('redirect_uri', 'http://127.0.0.1:9/elsewhere');
    expect((await fetch(elsewhere)).status).toBe(400);
    const anonymous = await fetch(`${github.url}/user`, { headers: { Authorization: 'token nope' } });
    expect([anonymous.status, await anonymous.json()]).toEqual([
      401,
      expect.objectContaining({ message: 'Bad credentials' }),
    ]);
    expect(github.requests).toMatchObject({ token: 4, user: 3, emails: 2 });
  });
});
