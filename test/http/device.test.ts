// The device authorization grant (RFC 8628) by HTTP: registration of a device client, the device authorization
// response, the page where a person types the code (a browser's cookies kept by a supertest agent), sign-in and
// consent there, and every answer to the device's polling: authorization_pending, slow_down, access_denied,
// expired_token, invalid_grant, and the tokens once.
import request from 'supertest';
import type { OAuthEvent, OAuthRouterOptions } from '../../lib';
import { createMemoryStore } from '../../lib/store/memory';
import { createFakeClock, SECOND } from '../helpers/clock';
import { claimsOf, createDpopKey } from '../helpers/dpop';
import {
  ISSUER,
  RESOURCE,
  USER,
  authorizeInBrowser,
  createTestServer,
  formOf,
  mountTestApp,
  registerClient,
  tokenRequest,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

let server: TestServer;
let events: OAuthEvent[];
function start(options: Partial<OAuthRouterOptions> = {}) {
  events = [];
  server = createTestServer({
    deviceAuthorization: true,
    onEvent: (event) => void events.push(event),
    ...options,
  });
}
afterEach(() => server?.close());

/** A public client with the device grant and refresh tokens, and no redirect URIs. */
async function deviceClient(metadata: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const res = await request(server.app)
    .post('/v1/oauth/register')
    .send({
      client_name: 'Build agent',
      grant_types: [DEVICE_GRANT, 'refresh_token'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    });
  if (res.status !== 201) throw new Error(`registration: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as RegisteredClient;
}

interface DeviceAnswer {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

const authorizeDevice = (client: RegisteredClient, body: Record<string, string> = {}) =>
  tokenRequest(server.app, client, body, '/v1/oauth/device_authorization');

const poll = (client: RegisteredClient, deviceCode: string) =>
  tokenRequest(server.app, client, { grant_type: DEVICE_GRANT, device_code: deviceCode });

/** The path and query of a URL of the issuer (absolute, or a path already), as supertest asks for them. */
const local = (url: string) => {
  const parsed = new URL(url, ISSUER);
  return parsed.pathname + parsed.search;
};

/** A person in a browser: types the code, signs in, and decides on the consent page, which is returned. */
async function decide(
  userCode: string,
  decision: 'allow' | 'deny' = 'allow',
  ticked?: string[],
): Promise<{ consent: string; decided: request.Response; browser: ReturnType<typeof request.agent> }> {
  const browser = request.agent(server.app);
  const entry = await browser.get(`/device?${new URLSearchParams({ user_code: userCode })}`);
  const typed = await browser.get(
    local(`${formOf(entry.text).action}?${new URLSearchParams({ user_code: userCode })}`),
  );
  if (typed.status !== 200) throw new Error(`code page: ${typed.status} ${typed.text}`);
  const signIn = formOf(typed.text);
  const signedIn = await browser
    .post(local(signIn.action))
    .type('form')
    .send({ ...signIn.fields, email: USER.email, password: USER.password });
  if (signedIn.status !== 303) throw new Error(`sign-in: ${signedIn.status} ${signedIn.text}`);
  const consent = await browser.get(local(new URL(signedIn.headers.location!, ISSUER).href));
  const form = formOf(consent.text);
  const decided = await browser
    .post(local(form.action))
    .type('form')
    .send({ ...form.fields, ...(ticked ? { scope: ticked } : {}), decision });
  return { consent: consent.text, decided, browser };
}

describe('discovery and registration', () => {
  test('the metadata names the endpoint and the grant type', async () => {
    start();
    const { body } = await request(server.app).get('/.well-known/oauth-authorization-server').expect(200);
    expect(body.device_authorization_endpoint).toBe(`${ISSUER}/v1/oauth/device_authorization`);
    expect(body.grant_types_supported).toContain(DEVICE_GRANT);
  });

  test('without the option, neither is offered, and a registration naming the grant is refused', async () => {
    start({ deviceAuthorization: undefined });
    const { body } = await request(server.app).get('/.well-known/oauth-authorization-server').expect(200);
    expect(body.device_authorization_endpoint).toBeUndefined();
    expect(body.grant_types_supported).not.toContain(DEVICE_GRANT);
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .send({ grant_types: [DEVICE_GRANT], token_endpoint_auth_method: 'none' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
    expect((await request(server.app).post('/v1/oauth/device_authorization')).status).toBe(404);
    expect((await request(server.app).get('/device')).status).toBe(404);
  });

  test('a public client registers the device grant with no redirect URIs and no response types', async () => {
    start();
    const client = await deviceClient();
    expect(client).toMatchObject({
      grant_types: [DEVICE_GRANT, 'refresh_token'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'none',
    });
  });

  test.each([
    ['response types without the code grant', { response_types: ['code'] }, /response_types must be \[\]/],
    ['an unknown grant type', { grant_types: ['password'] }, /grant type "password" is not supported/],
    [
      'no grant a person can authorize',
      { grant_types: ['refresh_token'] },
      /must include authorization_code or/,
    ],
  ])('registration with %s is refused', async (_name, metadata, message) => {
    start();
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .send({ grant_types: [DEVICE_GRANT], token_endpoint_auth_method: 'none', ...metadata });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
    expect(res.body.error_description).toMatch(message);
  });
});

describe('the device authorization endpoint', () => {
  test('answers codes, the page, its lifetime and the interval, never cached', async () => {
    start();
    const client = await deviceClient();
    const res = await authorizeDevice(client, { scope: 'fakture:read' });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const answer = res.body as DeviceAnswer;
    expect(answer.user_code).toMatch(USER_CODE);
    expect(answer.device_code).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(answer).toMatchObject({
      verification_uri: `${ISSUER}/device`,
      verification_uri_complete: `${ISSUER}/device?user_code=${answer.user_code}`,
      expires_in: 600,
      interval: 5,
    });
  });

  test('stores neither code, only their hashes', async () => {
    start();
    const client = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    const rows = JSON.stringify(
      server.store.database.prepare('SELECT * FROM oauth_device_authorizations').all(),
    );
    expect(rows).not.toContain(answer.device_code);
    expect(rows).not.toContain(answer.user_code.replace('-', ''));
    expect(rows).not.toContain(answer.user_code);
  });

  test.each([
    ['a client without the grant', 'code', {}, 'unauthorized_client'],
    ['a scope the client did not register', 'device', { scope: 'company:write' }, 'invalid_scope'],
    [
      'a resource of another server',
      'device',
      { resource: 'https://elsewhere.example/mcp' },
      'invalid_target',
    ],
  ])('refuses %s', async (_name, kind, body, error) => {
    start();
    const client =
      kind === 'code' ? await registerClient(server.app) : await deviceClient({ scope: 'fakture:read' });
    const res = await authorizeDevice(client, body as Record<string, string>);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
  });
});

describe('polling the token endpoint', () => {
  test('each slow_down adds 5 seconds to the interval of every later poll, up to a minute (RFC 8628 §3.5)', async () => {
    start();
    const client = await deviceClient();
    const answer = (await authorizeDevice(client, { scope: 'fakture:read' })).body as DeviceAnswer;
    expect((await poll(client, answer.device_code)).body.error).toBe('authorization_pending');
    const slowed = await poll(client, answer.device_code);
    expect(slowed.body).toEqual({
      error: 'slow_down',
      error_description:
        'Poll at most once every 10 seconds: 5 seconds more after each slow_down (RFC 8628 §3.5).',
    });
    server.clock.advance(5 * SECOND);
    // The poll before the slow_down set a 5-second wait; this one sets the new 10.
    expect((await poll(client, answer.device_code)).body.error).toBe('authorization_pending');
    server.clock.advance(9 * SECOND);
    expect((await poll(client, answer.device_code)).body.error).toBe('slow_down');
    // However often: never more than a minute.
    for (let poll_ = 0; poll_ < 12; poll_ += 1) await poll(client, answer.device_code);
    expect((await poll(client, answer.device_code)).body.error_description).toContain(
      'once every 60 seconds',
    );
  });

  test('pending, too fast, then the tokens once after Allow: the same tokens as the code grant', async () => {
    start();
    const client = await deviceClient();
    const answer = (await authorizeDevice(client, { scope: 'fakture:read clients:read' }))
      .body as DeviceAnswer;
    const pending = await poll(client, answer.device_code);
    expect(pending.status).toBe(400);
    expect(pending.body.error).toBe('authorization_pending');
    // Within the interval: slow down (RFC 8628 §3.5).
    expect((await poll(client, answer.device_code)).body.error).toBe('slow_down');
    server.clock.advance(5 * SECOND);
    expect((await poll(client, answer.device_code)).body.error).toBe('authorization_pending');

    const { consent, decided } = await decide(answer.user_code);
    // The consent page says a device asks, with its code, and names the client.
    expect(consent).toContain('A device, not this browser, asks for this access');
    expect(consent).toContain(`<code>${answer.user_code}</code>`);
    expect(consent).toContain('Build agent');
    expect(decided.status).toBe(200);
    expect(decided.text).toContain('Your device may continue now');
    expect(decided.headers.location).toBeUndefined();

    // The slow_down made the interval 10 seconds.
    server.clock.advance(10 * SECOND);
    const tokens = await poll(client, answer.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({
      token_type: 'Bearer',
      scope: 'fakture:read clients:read',
      expires_in: 3600,
    });
    const claims = claimsOf(tokens.body.access_token);
    expect(claims).toMatchObject({ sub: USER.id, client_id: client.client_id, aud: RESOURCE });
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['consent.granted', 'token.issued']),
    );
    // Once: the same device code again is invalid_grant, and the tokens still work.
    server.clock.advance(5 * SECOND);
    expect((await poll(client, answer.device_code)).body.error).toBe('invalid_grant');
    const refreshed = await tokenRequest(server.app, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    const call = await request(server.app)
      .post('/mcp')
      .set('Authorization', `Bearer ${refreshed.body.access_token}`);
    expect(call.status).toBe(200);
  });

  test('the person’s unticked scopes are left out', async () => {
    start();
    const client = await deviceClient();
    const answer = (await authorizeDevice(client, { scope: 'fakture:read clients:read' }))
      .body as DeviceAnswer;
    await decide(answer.user_code, 'allow', ['clients:read']);
    expect((await poll(client, answer.device_code)).body.scope).toBe('clients:read');
  });

  test('after Deny, access_denied (400, as every token endpoint error)', async () => {
    start();
    const client = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    const { decided } = await decide(answer.user_code, 'deny');
    expect(decided.status).toBe(200);
    expect(decided.text).toContain('was not allowed');
    const denied = await poll(client, answer.device_code);
    expect(denied.status).toBe(400);
    expect(denied.body.error).toBe('access_denied');
    expect(events.map((event) => event.type)).toContain('consent.denied');
  });

  test('after its lifetime, expired_token, and the page no longer takes the code', async () => {
    start();
    const client = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    server.clock.advance(600 * SECOND);
    expect((await poll(client, answer.device_code)).body.error).toBe('expired_token');
    const page = await request(server.app).get(`/v1/oauth/authorize/device?user_code=${answer.user_code}`);
    expect(page.status).toBe(400);
  });

  test('an unknown device code, or another client’s, is invalid_grant', async () => {
    start();
    const client = await deviceClient();
    const other = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    expect((await poll(client, 'made-up-device-code')).body.error).toBe('invalid_grant');
    expect((await poll(other, answer.device_code)).body.error).toBe('invalid_grant');
    // The owner is not slowed down by the other's tries.
    expect((await poll(client, answer.device_code)).body.error).toBe('authorization_pending');
  });

  test('a client that registered no device grant cannot poll', async () => {
    start();
    const client = await registerClient(server.app);
    const res = await poll(client, 'x');
    expect(res.body.error).toBe('unauthorized_client');
  });

  test('a poll with a DPoP proof gets tokens bound to its key', async () => {
    start();
    const client = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    await decide(answer.user_code);
    const key = createDpopKey();
    const res = await request(server.app)
      .post('/v1/oauth/token')
      .set('DPoP', key.proof(server.clock.now(), { htu: `${ISSUER}/v1/oauth/token` }))
      .type('form')
      .send({ grant_type: DEVICE_GRANT, device_code: answer.device_code, client_id: client.client_id });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
  });

  test('a grant revoked before the device redeems gives it nothing', async () => {
    start();
    const client = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    await decide(answer.user_code);
    const [grant] = await server.store.listActiveGrants(USER.id);
    await server.oauth.revokeGrant(grant!.grantId, { by: 'user' });
    expect((await poll(client, answer.device_code)).body.error).toBe('invalid_grant');
  });
});

test('a device request carries nothing over from an earlier grant of its client, and replaces none', async () => {
  // A public client's id is no secret: anyone may start a device request in its name. The person who allows it
  // gives that device what they tick now, and the real installation keeps its own grant.
  start();
  const client = await registerClient(server.app, {
    grant_types: ['authorization_code', 'refresh_token', DEVICE_GRANT],
    token_endpoint_auth_method: 'none',
  });
  const { code, pkce } = await authorizeInBrowser(server.app, client, { scope: 'fakture:read' });
  const installed = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: pkce.verifier,
  });
  expect(installed.status).toBe(200);
  const answer = (await authorizeDevice(client, { scope: 'clients:read' })).body as DeviceAnswer;
  const { consent } = await decide(answer.user_code);
  expect(consent).not.toContain('It can already:');
  const device = await poll(client, answer.device_code);
  expect(device.body.scope).toBe('clients:read');
  // The installation's grant is still there, and still refreshes.
  const refreshed = await tokenRequest(server.app, client, {
    grant_type: 'refresh_token',
    refresh_token: installed.body.refresh_token,
  });
  expect(refreshed.body.scope).toBe('fakture:read');
  expect(await server.store.listActiveGrants(USER.id)).toHaveLength(2);
});

describe('the device page', () => {
  test('shows a labelled code field and Continue, filled in from verification_uri_complete', async () => {
    start();
    const page = await request(server.app).get('/device?user_code=BCDF-GHJK');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<label for="user_code">Code<\/label>/);
    expect(page.text).toContain('value="BCDF-GHJK"');
    expect(page.text).toMatch(/<button class="primary" type="submit">Continue<\/button>/);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  test.each([
    ['lower case', (code: string) => code.toLowerCase()],
    ['no dash', (code: string) => code.replace('-', '')],
    ['spaces', (code: string) => ` ${code.slice(0, 4)} ${code.slice(5)} `],
  ])('takes the code typed in %s', async (_name, typed) => {
    start();
    const client = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    const page = await request(server.app).get(
      `/v1/oauth/authorize/device?${new URLSearchParams({ user_code: typed(answer.user_code) })}`,
    );
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sign in');
  });

  test.each([
    ['a code nobody was given', 'BCDF-GHJK'],
    ['letters outside the alphabet', 'AEIO-U01!'],
    ['nothing', ''],
  ])('answers %s with the form again and a 400', async (_name, typed) => {
    start();
    const page = await request(server.app).get(
      `/v1/oauth/authorize/device?${new URLSearchParams({ user_code: typed })}`,
    );
    expect(page.status).toBe(400);
    expect(page.text).toContain('That code is not right');
    expect(page.text).toMatch(/<label for="user_code">Code<\/label>/);
  });

  test('a decision without its CSRF token is refused, and the device stays pending', async () => {
    start();
    const other = await deviceClient();
    const second = (await authorizeDevice(other)).body as DeviceAnswer;
    const forged = await request(server.app)
      .post('/v1/oauth/authorize/device/decision')
      .type('form')
      .send({ request: 'x', csrf_token: 'y', decision: 'allow' });
    expect(forged.status).toBe(403);
    expect(forged.headers['content-type']).toMatch(/^text\/html/);
    expect((await poll(other, second.device_code)).body.error).toBe('authorization_pending');
  });

  test('a request decided in another tab cannot be decided again, and leaves one grant', async () => {
    start();
    const client = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    const browser = request.agent(server.app);
    const typed = await browser.get(`/v1/oauth/authorize/device?user_code=${answer.user_code}`);
    const signIn = formOf(typed.text);
    const signedIn = await browser
      .post(local(signIn.action))
      .type('form')
      .send({ ...signIn.fields, email: USER.email, password: USER.password });
    const consent = formOf((await browser.get(local(new URL(signedIn.headers.location!, ISSUER).href))).text);
    const first = await browser
      .post(local(consent.action))
      .type('form')
      .send({ ...consent.fields, decision: 'allow' });
    expect(first.status).toBe(200);
    const again = await browser
      .post(local(consent.action))
      .type('form')
      .send({ ...consent.fields, decision: 'allow' });
    expect(again.status).toBe(400);
    expect(await server.store.listActiveGrants(USER.id)).toHaveLength(1);
    // A decided code no longer leads anywhere.
    expect((await browser.get(`/v1/oauth/authorize/device?user_code=${answer.user_code}`)).status).toBe(400);
  });
});

describe('a host app that signs people in itself (getSessionUser and signInUrl, no password form)', () => {
  const SIGN_IN = 'https://app.example/login';
  beforeEach(() =>
    start({
      authenticateUser: undefined,
      getSessionUser: (req) => (req.headers['x-signed-in'] === 'yes' ? USER : null),
      signInUrl: (returnTo) => `${SIGN_IN}?${new URLSearchParams({ return_to: returnTo })}`,
    }),
  );

  test('the code, the consent and the decision each send a signed-out browser to the host’s sign-in', async () => {
    const client = await deviceClient();
    const answer = (await authorizeDevice(client, { scope: 'fakture:read' })).body as DeviceAnswer;
    const browser = request.agent(server.app);
    const codePage = `/v1/oauth/authorize/device?${new URLSearchParams({ user_code: answer.user_code })}`;
    const signedOut = await browser.get(codePage);
    expect(signedOut.status).toBe(302);
    const back = new URL(signedOut.headers.location!);
    expect(back.origin + back.pathname).toBe(SIGN_IN);
    expect(back.searchParams.get('return_to')).toBe(`${ISSUER}${codePage}`);

    const consent = await browser.get(codePage).set('x-signed-in', 'yes');
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('A device, not this browser, asks for this access');
    const form = formOf(consent.text);
    // Signed out before deciding: the host's sign-in again, never a password form this router does not have.
    const expired = await browser
      .post(local(form.action))
      .type('form')
      .send({ ...form.fields, decision: 'allow' });
    expect(expired.status).toBe(303);
    expect(new URL(expired.headers.location!).searchParams.get('return_to')).toBe(`${ISSUER}${codePage}`);
    expect(expired.text).not.toContain('password');
    // A post to the device flow's sign-in form goes there too.
    const signInPost = await browser
      .post('/v1/oauth/authorize/device/sign-in')
      .type('form')
      .send({ ...form.fields, email: USER.email, password: USER.password });
    expect(signInPost.status).toBe(303);
    expect(signInPost.headers.location).toMatch(/^https:\/\/app\.example\/login\?/);
    expect((await poll(client, answer.device_code)).body.error).toBe('authorization_pending');

    const decided = await browser
      .post(local(form.action))
      .set('x-signed-in', 'yes')
      .type('form')
      .send({ ...form.fields, decision: 'allow' });
    expect(decided.status).toBe(200);
    expect(decided.text).toContain('Your device may continue now');
    server.clock.advance(5 * SECOND);
    expect((await poll(client, answer.device_code)).status).toBe(200);
  });
});

describe('guessing codes', () => {
  test('wrong codes are limited per address; a right one from another address still works', async () => {
    start({ rateLimits: { userCode: { limit: 3 } } });
    const client = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    const from = (address: string, code: string) =>
      request(server.app).get(`/v1/oauth/authorize/device?user_code=${code}`).set('X-Forwarded-For', address);
    server.app.set('trust proxy', true);
    for (const code of ['BCDF-GHJK', 'BCDF-GHJL', 'BCDF-GHJM'])
      expect((await from('203.0.113.9', code)).status).toBe(400);
    const limited = await from('203.0.113.9', answer.user_code);
    expect(limited.status).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^text\/html/);
    expect((await from('198.51.100.7', answer.user_code)).status).toBe(200);
    expect(events.filter((event) => event.type === 'rate_limit.hit')).toMatchObject([{ limit: 'userCode' }]);
  });

  test('passwords guessed on the device flow’s sign-in form meet the sign-in limits, as on the code flow’s', async () => {
    start({ rateLimits: { signIn: { limit: 2 } } });
    const client = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    const browser = request.agent(server.app);
    const typed = await browser.get(`/v1/oauth/authorize/device?user_code=${answer.user_code}`);
    const signIn = formOf(typed.text);
    const attempt = (password: string) =>
      browser
        .post(local(signIn.action))
        .type('form')
        .send({ ...signIn.fields, email: USER.email, password });
    expect((await attempt('wrong one')).status).toBe(401);
    expect((await attempt('wrong two')).status).toBe(401);
    // Even the right password waits now: the limit counts failures, and refuses the next try from this address.
    expect((await attempt(USER.password)).status).toBe(429);
    expect(events.filter((event) => event.type === 'sign_in.rate_limited')).toMatchObject([
      { limit: 'signIn' },
    ]);
  });

  test('one code is entered a limited number of times, from any addresses', async () => {
    start({ rateLimits: { userCodePerCode: { limit: 2 } } });
    const client = await deviceClient();
    const answer = (await authorizeDevice(client)).body as DeviceAnswer;
    server.app.set('trust proxy', true);
    const from = (address: string, code: string) =>
      request(server.app).get(`/v1/oauth/authorize/device?user_code=${code}`).set('X-Forwarded-For', address);
    expect((await from('203.0.113.1', answer.user_code)).status).toBe(200);
    // Typed another way, it is the same code.
    expect((await from('203.0.113.2', answer.user_code.toLowerCase())).status).toBe(200);
    expect((await from('203.0.113.3', answer.user_code.replace('-', ''))).status).toBe(429);
    // Another code is not held back.
    const other = (await authorizeDevice(client)).body as DeviceAnswer;
    expect((await from('203.0.113.3', other.user_code)).status).toBe(200);
  });
});

test('a store without the device methods turns the grant off, saying so once at start', async () => {
  const clock = createFakeClock(Date.now());
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  const { app } = mountTestApp(createMemoryStore({ now: clock.now, deviceAuthorizations: false }), clock, {
    deviceAuthorization: true,
  });
  expect(warn.mock.calls).toEqual([[expect.stringMatching(/so the device authorization grant is off/)]]);
  warn.mockRestore();
  const { body } = await request(app).get('/.well-known/oauth-authorization-server').expect(200);
  expect(body.device_authorization_endpoint).toBeUndefined();
  expect(body.grant_types_supported).not.toContain(DEVICE_GRANT);
  expect((await request(app).get('/device')).status).toBe(404);
});

test('a device authorization lives at most 900 seconds', () => {
  expect(() => start({ deviceAuthorization: { expiresIn: 901 } })).toThrow(
    'createOAuthRouter: deviceAuthorization.expiresIn must be a whole number of seconds from 60 to 900.',
  );
  expect(() => start({ deviceAuthorization: { interval: 0 } })).toThrow(/interval must be a whole number/);
});
