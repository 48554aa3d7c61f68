// The authorization endpoint: validation order, redirects with iss, the sign-in and consent pages, CSRF, headers.
import request from 'supertest';
import { hashSecret } from '../../lib/crypto/secrets';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  formOf,
  ISSUER,
  RESOURCE,
  registerClient,
  tokenRequest,
  USER,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';
import { MINUTE } from '../helpers/clock';
import { stallTest } from '../helpers/edit-loop';

describe('GET /v1/oauth/authorize', () => {
  let server: TestServer;
  let client: RegisteredClient;
  let trustedClient: RegisteredClient;
  const trusted = new Set<string>();
  beforeAll(async () => {
    server = createTestServer({ trustedClients: (clientId) => trusted.has(clientId) });
    client = await registerClient(server.app, { scope: 'fakture:read clients:read company:read' });
    trustedClient = await registerClient(server.app, { scope: 'fakture:read clients:read company:read' });
    trusted.add(trustedClient.client_id);
  });
  afterAll(() => server.close());
  const authorize = (overrides: Record<string, string | undefined> = {}, target = client) =>
    request(server.app).get(`/v1/oauth/authorize?${authorizeQuery(target, overrides).query}`);

  test('shows the sign-in page: Email, Password, Sign in', async () => {
    const res = await authorize();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toMatch(/<label for="email">Email<\/label>/);
    expect(res.text).toMatch(/<label for="password">Password<\/label>/);
    expect(res.text).toMatch(/<button[^>]*type="submit"[^>]*>Sign in<\/button>/);
  });

  test('clickjacking: pages forbid framing and carry a strict CSP, and are never cached', async () => {
    const res = await authorize();
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self' https://client.example");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  // Until the client and its redirect URI are verified, nothing is redirected: that would be an open redirect.
  test.each([
    ['no client_id', { client_id: undefined }],
    ['an unknown client_id', { client_id: 'nobody' }],
    ['no redirect_uri', { redirect_uri: undefined }],
    ['open redirect: an unregistered host', { redirect_uri: 'https://evil.example/callback' }],
    ['open redirect: another path', { redirect_uri: 'https://client.example/callback/../evil' }],
    [
      'open redirect: an extra query',
      { redirect_uri: 'https://client.example/callback?next=https://evil.example' },
    ],
    ['open redirect: a trailing slash', { redirect_uri: 'https://client.example/callback/' }],
    ['open redirect: another port on https', { redirect_uri: 'https://client.example:8443/callback' }],
    ['open redirect: a fragment', { redirect_uri: 'https://client.example/callback#x' }],
  ])('%s: an HTML error page, never a redirect', async (_name, overrides) => {
    const res = await authorize(overrides);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('This request cannot continue');
  });

  // Cursor changed its callback twice (cursor://anysphere.cursor-retrieval/..., cursor://anysphere.cursor-mcp/...,
  // https://www.cursor.com/agents/mcp/oauth/callback) while keeping the client_id it had registered with the first.
  // RFC 9700 §4.1.3: no match, no redirect; the page says what happened and what the app must do.
  test.each([
    'cursor://anysphere.cursor-mcp/oauth/callback',
    'https://www.cursor.com/agents/mcp/oauth/callback',
  ])(
    'a client whose callback changed (Cursor, now %s): a page saying the redirect URI is not registered and the app must register again',
    async (redirectUri) => {
      const cursor = await registerClient(server.app, {
        client_name: 'Cursor',
        redirect_uris: ['cursor://anysphere.cursor-retrieval/oauth/user-server/callback'],
        token_endpoint_auth_method: 'none',
      });
      const res = await authorize({ redirect_uri: redirectUri }, cursor);
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text.replace(/&#34;/g, '"')).toContain(
        `The redirect URI "${redirectUri}" is not registered for this app, so this service will not send you ` +
          'there. The app must register with this service again (in most apps: remove this server and add it again).',
      );
    },
  );

  test('a loopback redirect URI may use another port (RFC 8252 §7.3), but nothing else may change', async () => {
    const native = await registerClient(server.app, {
      redirect_uris: ['http://127.0.0.1:33418/cb'],
      token_endpoint_auth_method: 'none',
    });
    expect((await authorize({ redirect_uri: 'http://127.0.0.1:50123/cb' }, native)).status).toBe(200);
    expect((await authorize({ redirect_uri: 'http://127.0.0.1/cb' }, native)).status).toBe(200);
    expect((await authorize({ redirect_uri: 'http://127.0.0.1:50123/other' }, native)).status).toBe(400);
    expect((await authorize({ redirect_uri: 'http://localhost:33418/cb' }, native)).status).toBe(400);
  });

  // Once the redirect URI is verified, errors go back to the client with state and iss (RFC 6749 §4.1.2.1, RFC 9207):
  // at once for a client the host app trusts, through a "Return to" page for any other (open redirect, RFC 9700 §4.11.2).
  const errorCases = [
    ['no response_type', { response_type: undefined }, 'invalid_request'],
    ['response_type token (implicit)', { response_type: 'token' }, 'unsupported_response_type'],
    ['no code_challenge', { code_challenge: undefined }, 'invalid_request'],
    ['PKCE downgrade: method plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['PKCE downgrade: no method', { code_challenge_method: undefined }, 'invalid_request'],
    ['a short code_challenge', { code_challenge: 'a'.repeat(42) }, 'invalid_request'],
    ['a code_challenge with bad characters', { code_challenge: `${'a'.repeat(42)}+` }, 'invalid_request'],
    ['an unknown scope', { scope: 'fakture:read bank:write' }, 'invalid_scope'],
    ['a scope the client did not register', { scope: 'company:write' }, 'invalid_scope'],
    ['an unknown resource', { resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
  ] as const;

  test.each(errorCases)(
    '%s: a trusted client is redirected with error=%s',
    async (_name, overrides, error) => {
      const res = await authorize(overrides, trustedClient);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.location!);
      expect(location.origin + location.pathname).toBe('https://client.example/callback');
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('error_description')).toBeTruthy();
      expect(location.searchParams.get('state')).toBe('state-123');
      expect(location.searchParams.get('iss')).toBe(ISSUER);
    },
  );

  test.each(errorCases)(
    'open redirect: %s for a self-registered client shows where it would go, and does not go',
    async (_name, overrides, error) => {
      const res = await authorize(overrides);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['content-type']).toMatch(/html/);
      const link = /<a class="button" href="([^"]+)" rel="noreferrer">Return to ([^<]+)<\/a>/.exec(res.text)!;
      expect(link[2]).toBe('client.example');
      const location = new URL(link[1]!.replace(/&amp;/g, '&'));
      expect(location.origin + location.pathname).toBe('https://client.example/callback');
      expect(location.searchParams.get('error')).toBe(error);
      expect(location.searchParams.get('state')).toBe('state-123');
      expect(location.searchParams.get('iss')).toBe(ISSUER);
    },
  );

  test('a repeated parameter is invalid_request (RFC 6749 §3.1)', async () => {
    const { query } = authorizeQuery(trustedClient);
    const res = await request(server.app).get(`/v1/oauth/authorize?${query}&scope=company:read`);
    expect(res.status).toBe(302);
    expect(new URL(res.headers.location!).searchParams.get('error')).toBe('invalid_request');
  });

  test('two resources at once are invalid_target', async () => {
    const { query } = authorizeQuery(trustedClient);
    const res = await request(server.app).get(
      `/v1/oauth/authorize?${query}&resource=${encodeURIComponent(`${ISSUER}/mcp`)}`,
    );
    expect(new URL(res.headers.location!).searchParams.get('error')).toBe('invalid_target');
  });
});

describe('sign-in and consent', () => {
  let server: TestServer;
  let client: RegisteredClient;
  beforeEach(async () => {
    server = createTestServer();
    client = await registerClient(server.app, {
      client_name: 'Claude <script>alert(1)</script>',
      scope: 'fakture:read clients:read',
    });
  });
  afterEach(() => server.close());

  async function signInPage(overrides: Record<string, string | undefined> = {}) {
    const browser = request.agent(server.app);
    const page = await browser.get(`/v1/oauth/authorize?${authorizeQuery(client, overrides).query}`);
    return { browser, page, form: formOf(page.text) };
  }

  test('account enumeration: a wrong password and an unknown email get the same answer', async () => {
    const answers = [];
    for (const credentials of [
      { email: USER.email, password: 'wrong password' },
      { email: 'nobody@example.com', password: 'wrong password' },
    ]) {
      const { browser, form } = await signInPage();
      const res = await browser
        .post(form.action)
        .type('form')
        .send({ ...form.fields, ...credentials });
      answers.push({ status: res.status, message: /role="alert">([^<]+)</.exec(res.text)?.[1] });
    }
    expect(answers[0]).toEqual({ status: 401, message: 'The email or password is incorrect.' });
    expect(answers[1]).toEqual(answers[0]);
  });

  test('signing in sets a short-lived HttpOnly SameSite cookie and leads to consent', async () => {
    const { browser, form } = await signInPage();
    const res = await browser
      .post(form.action)
      .type('form')
      .send({ ...form.fields, email: USER.email, password: USER.password });
    expect(res.status).toBe(303);
    const cookie = (res.headers['set-cookie'] as unknown as string[]).find((value) =>
      value.startsWith('mcp_oauth_session='),
    )!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Max-Age=1800/);
    expect(cookie).toMatch(/Path=\/v1\/oauth/);
    const consent = await browser.get(
      new URL(res.headers.location!, ISSUER).pathname + new URL(res.headers.location!).search,
    );
    expect(consent.text).toContain('Claude &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(consent.text).not.toContain('<script>alert(1)</script>');
    expect(consent.text).toContain('client.example');
    expect(consent.text).toContain('Read your invoices and quotes');
    expect(consent.text).toContain('Read your client records');
    expect(consent.text).toMatch(/>Allow<\/button>/);
    expect(consent.text).toMatch(/>Deny<\/button>/);
  });

  test('a second authorization in the same browser asks only for consent', async () => {
    const { browser } = await authorizeInBrowser(server.app, client);
    const page = await browser.get(`/v1/oauth/authorize?${authorizeQuery(client).query}`);
    expect(page.text).toMatch(/>Allow<\/button>/);
    expect(page.text).not.toContain('Password');
  });

  test('the sign-in is forgotten after its lifetime', async () => {
    const { browser } = await authorizeInBrowser(server.app, client);
    server.clock.advance(31 * MINUTE);
    const page = await browser.get(`/v1/oauth/authorize?${authorizeQuery(client).query}`);
    expect(page.text).toContain('Password');
  });

  test('Allow redirects with code, state and iss; the code is stored only as its hash', async () => {
    const { decided, location, code } = await authorizeInBrowser(server.app, client, { state: 'a b&c=d/é' });
    expect(decided.status).toBe(303);
    expect(location.origin + location.pathname).toBe('https://client.example/callback');
    expect(location.searchParams.get('state')).toBe('a b&c=d/é');
    expect(location.searchParams.get('iss')).toBe(ISSUER);
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await server.store.findAuthorizationCode(hashSecret(code!));
    expect(stored).toMatchObject({
      clientId: client.client_id,
      userId: USER.id,
      scopes: ['fakture:read', 'clients:read'],
    });
  });

  test('Deny redirects with error=access_denied, state and iss, and issues nothing', async () => {
    const { decided, location } = await authorizeInBrowser(server.app, client, {}, 'deny');
    expect(decided.status).toBe(303);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('state-123');
    expect(location.searchParams.get('iss')).toBe(ISSUER);
    expect(location.searchParams.get('code')).toBeNull();
    expect(await server.store.listActiveGrants(USER.id)).toEqual([]);
  });

  test('with no scope requested, consent covers the client’s registered scope', async () => {
    const { code } = await authorizeInBrowser(server.app, client, { scope: undefined });
    expect((await server.store.findAuthorizationCode(hashSecret(code!)))?.scopes).toEqual([
      'fakture:read',
      'clients:read',
    ]);
  });

  describe('the user chooses the scopes', () => {
    async function decide(scope: string[]) {
      // Signed in by a first request the user denies: no grant, so the page asks about every scope.
      const { browser } = await authorizeInBrowser(server.app, client, {}, 'deny');
      const page = await browser.get(`/v1/oauth/authorize?${authorizeQuery(client).query}`);
      const form = formOf(page.text);
      expect(form.fields.scope).toEqual(['fakture:read', 'clients:read']);
      const res = await browser
        .post(form.action)
        .type('form')
        .send({ ...form.fields, scope, decision: 'allow' });
      return new URL(res.headers.location!);
    }

    test('an unticked scope is not granted', async () => {
      const location = await decide(['clients:read']);
      const code = location.searchParams.get('code')!;
      expect((await server.store.findAuthorizationCode(hashSecret(code)))?.scopes).toEqual(['clients:read']);
    });

    test('a scope added to the form that the client did not request is ignored', async () => {
      const location = await decide(['clients:read', 'company:write']);
      const code = location.searchParams.get('code')!;
      expect((await server.store.findAuthorizationCode(hashSecret(code)))?.scopes).toEqual(['clients:read']);
    });

    test('Allow with every scope unticked is a denial', async () => {
      const location = await decide([]);
      expect(location.searchParams.get('error')).toBe('access_denied');
      expect(location.searchParams.get('code')).toBeNull();
    });
  });

  describe('CSRF on the consent form', () => {
    async function consentForm() {
      const { browser } = await authorizeInBrowser(server.app, client);
      const page = await browser.get(`/v1/oauth/authorize?${authorizeQuery(client).query}`);
      return { browser, form: formOf(page.text) };
    }

    test('a cross-site post (no CSRF cookie) is refused and issues no code', async () => {
      const { form } = await consentForm();
      const res = await request(server.app)
        .post(form.action)
        .type('form')
        .send({ ...form.fields, decision: 'allow' });
      expect(res.status).toBe(403);
      expect(res.headers.location).toBeUndefined();
    });

    test('a forged token is refused', async () => {
      const { browser, form } = await consentForm();
      const res = await browser
        .post(form.action)
        .type('form')
        .send({ ...form.fields, csrf_token: 'forged', decision: 'allow' });
      expect(res.status).toBe(403);
    });

    test("another browser's form is refused in this one", async () => {
      const { form } = await consentForm();
      const { browser } = await consentForm();
      const res = await browser
        .post(form.action)
        .type('form')
        .send({ ...form.fields, decision: 'allow' });
      expect(res.status).toBe(403);
    });

    test('a pending request altered in the form (a wider scope) is refused', async () => {
      const { browser, form } = await consentForm();
      const [body, mac] = (form.fields.request as string).split('.');
      const params = JSON.parse(Buffer.from(body!, 'base64url').toString());
      params.scope = 'fakture:read clients:read company:write';
      const forged = `${Buffer.from(JSON.stringify(params)).toString('base64url')}.${mac}`;
      const res = await browser
        .post(form.action)
        .type('form')
        .send({ ...form.fields, request: forged, decision: 'allow' });
      expect(res.status).toBe(403);
    });

    test('a pending request older than 30 minutes has expired', async () => {
      const { browser, form } = await consentForm();
      server.clock.advance(31 * MINUTE);
      const res = await browser
        .post(form.action)
        .type('form')
        .send({ ...form.fields, decision: 'allow' });
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toContain('expired');
    });
  });

  test('a decision after the sign-in expired asks to sign in again', async () => {
    const { browser } = await authorizeInBrowser(server.app, client);
    server.clock.advance(20 * MINUTE);
    const page = await browser.get(`/v1/oauth/authorize?${authorizeQuery(client).query}`);
    const form = formOf(page.text);
    // The sign-in (30 minutes) has now expired; the pending request (30 minutes from the page) has not.
    server.clock.advance(15 * MINUTE);
    const res = await browser
      .post(form.action)
      .type('form')
      .send({ ...form.fields, decision: 'allow' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Your sign-in has expired');
  });
});

describe('signing in through the host app (getSessionUser)', () => {
  test('a signed-in host user goes straight to consent; a signed-out one is sent to signInUrl', async () => {
    const server = createTestServer({
      authenticateUser: undefined,
      getSessionUser: (req) =>
        req.headers['x-test-user'] ? { id: String(req.headers['x-test-user']) } : null,
      signInUrl: (returnTo) => `/login?return_to=${encodeURIComponent(returnTo)}`,
    });
    try {
      const client = await registerClient(server.app);
      const { query } = authorizeQuery(client);
      const signedIn = await request(server.app)
        .get(`/v1/oauth/authorize?${query}`)
        .set('x-test-user', 'host-user-7');
      expect(signedIn.text).toMatch(/>Allow<\/button>/);
      const signedOut = await request(server.app).get(`/v1/oauth/authorize?${query}`);
      expect(signedOut.status).toBe(302);
      const returnTo = new URL(signedOut.headers.location!, ISSUER).searchParams.get('return_to')!;
      expect(returnTo.startsWith(`${ISSUER}/v1/oauth/authorize?`)).toBe(true);
      expect(new URL(returnTo).searchParams.get('client_id')).toBe(client.client_id);
    } finally {
      server.close();
    }
  });
});

describe('failed sign-ins are rate limited', () => {
  test('per account and address, and per address; a correct sign-in is not counted', async () => {
    const server = createTestServer({ rateLimits: { signInPerAccount: { limit: 3 }, signIn: { limit: 5 } } });
    try {
      const client = await registerClient(server.app);
      const attempt = async (email: string, password: string) => {
        const browser = request.agent(server.app);
        const page = await browser.get(`/v1/oauth/authorize?${authorizeQuery(client).query}`);
        const form = formOf(page.text);
        return browser
          .post(form.action)
          .type('form')
          .send({ ...form.fields, email, password });
      };
      expect((await attempt(USER.email, USER.password)).status).toBe(303);
      for (let i = 0; i < 3; i += 1) expect((await attempt(USER.email, 'guess')).status).toBe(401);
      const blocked = await attempt(USER.email.toUpperCase(), USER.password);
      expect(blocked.status).toBe(429);
      expect(blocked.headers['ratelimit-policy']).toBeDefined();
      expect(blocked.text).toContain('Too many requests');
      // Other accounts from the same address are limited per IP, after 5 failures in all.
      // The blocked attempt counted as a failure from this address too: 4 so far, so one more is allowed.
      expect((await attempt('b@example.com', 'guess')).status).toBe(401);
      expect((await attempt('c@example.com', 'guess')).status).toBe(429);
    } finally {
      server.close();
    }
  });
});

describe('no lock-out: an owner is never held back by guesses from elsewhere', () => {
  const setup = (rateLimits: Record<string, unknown>) => {
    const server = createTestServer({ rateLimits });
    // The tests speak for several client addresses through X-Forwarded-For, as behind a proxy.
    server.app.set('trust proxy', true);
    return server;
  };
  const attemptFrom =
    (server: TestServer, client: RegisteredClient) => async (from: string, password: string) => {
      const browser = request.agent(server.app);
      const page = await browser
        .get(`/v1/oauth/authorize?${authorizeQuery(client).query}`)
        .set('X-Forwarded-For', from);
      const form = formOf(page.text);
      const started = Date.now();
      const res = await browser
        .post(form.action)
        .set('X-Forwarded-For', from)
        .type('form')
        .send({ ...form.fields, email: USER.email, password });
      return { status: res.status, ms: Date.now() - started };
    };

  test('five wrong passwords for an email from one address do not stop its owner at another (reproduced)', async () => {
    const server = setup({});
    try {
      const attempt = attemptFrom(server, await registerClient(server.app));
      for (let i = 0; i < 5; i += 1) expect((await attempt('203.0.113.7', 'guess')).status).toBe(401);
      expect((await attempt('203.0.113.7', USER.password)).status).toBe(429);
      expect((await attempt('198.51.100.20', USER.password)).status).toBe(303);
    } finally {
      server.close();
    }
  });

  stallTest(
    'a guess spread over many addresses meets growing delays on the addresses that failed, not on new ones',
    async () => {
      const server = setup({ signInSlowdown: { after: 3, maxDelayMs: 1000 } });
      try {
        const attempt = attemptFrom(server, await registerClient(server.app));
        for (const from of ['192.0.2.1', '192.0.2.2', '192.0.2.3'])
          expect((await attempt(from, 'guess')).status).toBe(401);
        // Three failures for the account: a second try from an address that failed waits 250 ms, then 500 ms, ...
        const second = await attempt('192.0.2.1', 'guess');
        expect(second.status).toBe(401);
        expect(second.ms).toBeGreaterThanOrEqual(240);
        const third = await attempt('192.0.2.2', 'guess');
        expect(third.ms).toBeGreaterThanOrEqual(490);
        // ... while the owner, from an address that never failed, signs in at once.
        const owner = await attempt('198.51.100.20', USER.password);
        expect(owner.status).toBe(303);
        expect(owner.ms).toBeLessThan(240);
      } finally {
        server.close();
      }
    },
  );

  stallTest('the delay stops growing at maxDelayMs', async () => {
    const server = setup({ signInSlowdown: { after: 1, maxDelayMs: 300 }, signInPerAccount: { limit: 50 } });
    try {
      const attempt = attemptFrom(server, await registerClient(server.app));
      for (let i = 0; i < 4; i += 1) await attempt('192.0.2.9', 'guess');
      const capped = await attempt('192.0.2.9', 'guess');
      expect(capped.ms).toBeGreaterThanOrEqual(290);
      expect(capped.ms).toBeLessThan(1000);
    } finally {
      server.close();
    }
  });
});

describe('cookies on https (login CSRF)', () => {
  test('carry the __Host- prefix: Secure, Path=/, no Domain, so a sibling subdomain cannot plant one', async () => {
    const server = createTestServer({ issuer: 'https://auth.example.com' });
    try {
      const client = await registerClient(server.app);
      const page = await request(server.app)
        .get(
          `/v1/oauth/authorize?${authorizeQuery(client, { resource: 'https://auth.example.com/mcp' }).query}`,
        )
        .set('Host', 'auth.example.com');
      const cookies = page.headers['set-cookie'] as unknown as string[];
      expect(cookies).toHaveLength(1);
      expect(cookies[0]).toMatch(
        /^__Host-mcp_oauth_csrf=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=86400; HttpOnly; SameSite=Lax; Secure$/,
      );
      // A CSRF cookie without the prefix (as a sibling subdomain could set for the parent domain) is not read.
      const form = formOf(page.text);
      const planted = cookies[0]!.split(';')[0]!.replace('__Host-', '');
      const res = await request(server.app)
        .post(form.action)
        .set('Cookie', planted)
        .type('form')
        .send({ ...form.fields, email: USER.email, password: USER.password });
      expect(res.status).toBe(403);
    } finally {
      server.close();
    }
  });
});

// RFC 8707 §2: a client may spell the resource with a trailing slash (`https://host/mcp/`, as some derive it from
// the URL they were given); it names the same resource. The code remembers the resource without the slash, and the
// token endpoint compares the exchange's resource the same way, so the two spellings agree in either place.
describe('resource with a trailing slash (RFC 8707 §2)', () => {
  let server: TestServer;
  beforeAll(() => {
    server = createTestServer();
  });
  afterAll(() => server.close());

  test.each([
    ['/mcp/', undefined],
    ['/mcp/', '/mcp'],
    ['/mcp/', '/mcp/'],
    ['/mcp', '/mcp/'],
  ])(
    'authorized for %s, exchanged with resource %s: one resource, the access token for /mcp',
    async (atAuthorize, atToken) => {
      const client = await registerClient(server.app);
      const page = await request(server.app).get(
        `/v1/oauth/authorize?${authorizeQuery(client, { resource: ISSUER + atAuthorize }).query}`,
      );
      expect(page.status).toBe(200);
      const { code, pkce } = await authorizeInBrowser(server.app, client, { resource: ISSUER + atAuthorize });
      const token = await tokenRequest(server.app, client, {
        grant_type: 'authorization_code',
        code: code!,
        redirect_uri: client.redirect_uris[0]!,
        code_verifier: pkce.verifier,
        ...(atToken === undefined ? {} : { resource: ISSUER + atToken }),
      });
      expect(token.status).toBe(200);
      const claims = server.signer.verifyAccessToken(token.body.access_token, {
        issuer: ISSUER,
        audience: RESOURCE,
      });
      expect(claims.aud).toBe(RESOURCE);
      const grants = await server.store.listActiveGrants(USER.id);
      expect(grants.every((grant) => grant.resource === RESOURCE)).toBe(true);
    },
  );

  test.each([
    ['another path', '/mcp/other'],
    ['another resource behind the slash', '/mcpx/'],
  ])('a resource that differs by more than the slash is invalid_target: %s', async (_name, path) => {
    const client = await registerClient(server.app);
    const { code, pkce } = await authorizeInBrowser(server.app, client, { resource: `${RESOURCE}/` });
    const token = await tokenRequest(server.app, client, {
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: client.redirect_uris[0]!,
      code_verifier: pkce.verifier,
      resource: ISSUER + path,
    });
    expect(token.status).toBe(400);
    expect(token.body.error).toBe('invalid_target');
  });
});
