// Attack probes against upstream sign-in (scratch). Each test prints what happened; expectations document findings.
import { createServer, type Server } from 'node:http';
import request from 'supertest';
import { createTestServer, registerClient, tokenRequest, type RegisteredClient } from '../helpers/oauth-app';
import { freePort } from '../helpers/ports';
import { openSignIn, type UpstreamWorld } from '../helpers/upstream-world';
import { startFakeOp, type FakeOp } from './fake-op';

jest.setTimeout(60_000);

let a: FakeOp;
let b: FakeOp;
let baseUrl: string;
let http: Server;
let server: ReturnType<typeof createTestServer>;
let client: RegisteredClient;
const errors: unknown[] = [];
const events: Array<[string, unknown]> = [];
let hostUser: string | undefined;

beforeAll(async () => {
  a = await startFakeOp({ clientId: 'client-a' });
  b = await startFakeOp({ clientId: 'client-b' });
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = createTestServer({
    issuer: baseUrl,
    onError: (e) => void errors.push(e),
    onEvent: (e: { type: string }) => void events.push([e.type, e]),
    getSessionUser: () => (hostUser ? { id: hostUser } : undefined),
    upstream: {
      providers: [
        { id: 'a', name: 'A', issuer: a.issuer, clientId: 'client-a', clientSecret: 's', keepTokens: true, timeoutSeconds: 2 },
        { id: 'b', name: 'B', issuer: b.issuer, clientId: 'client-b', clientSecret: 's', keepTokens: true },
      ],
      findUser: (identity) =>
        identity.email ? { id: `user:${identity.email}`, email: identity.email } : null,
    },
  } as never);
  http = createServer(server.app);
  await new Promise<void>((r) => http.listen(port, '127.0.0.1', r));
  client = await registerClient(server.app, { redirect_uris: ['https://client.example/callback'] });
});
afterAll(async () => {
  http.closeAllConnections();
  await new Promise((r) => http.close(r));
  server.close();
  await a.close();
  await b.close();
});
beforeEach(() => {
  a.script = {};
  b.script = {};
  errors.length = 0;
  events.length = 0;
  hostUser = undefined;
});

const world = () => ({ server: { ...server, baseUrl } }) as unknown as UpstreamWorld;

async function start(provider: 'a' | 'b') {
  const s = await openSignIn(world(), client);
  const toProvider = await s.browser.visit(s.links[provider]!);
  const location = new URL(toProvider.headers.get('location')!);
  return { ...s, toProvider, location, state: location.searchParams.get('state')!, nonce: location.searchParams.get('nonce') };
}
const callback = (params: Record<string, string>) =>
  `${baseUrl}/v1/oauth/upstream/callback?${new URLSearchParams(params)}`;

async function consent(browser: Awaited<ReturnType<typeof start>>['browser'], landed: Response) {
  const page = await browser.visit(landed.headers.get('location')!);
  const html = await page.text();
  const decided = await browser.submit(baseUrl, html, [['decision', 'allow']]);
  return { html, decided };
}

test('start link headers: cache, referrer', async () => {
  const s = await start('a');
  console.log('START', s.toProvider.status, Object.fromEntries(s.toProvider.headers));
  const page = await s.browser.visit(s.page.url);
  console.log('SIGN-IN PAGE', Object.fromEntries(page.headers));
});

test('email from ID token, email_verified from userinfo are merged', async () => {
  a.script.idClaims = () => ({ email: 'victim@corp.test' }); // no email_verified in the ID token
  a.script.userinfo = () => ({ sub: 'alice', email: 'alice@other.test', email_verified: true });
  const s = await start('a');
  const landed = await s.browser.visit(callback({ code: a.mintCode(s.nonce), state: s.state, iss: a.issuer }));
  console.log('MERGE', landed.status, landed.headers.get('location'), events.map((e) => e[0]), events.at(-1));
});

test('email_verified string variants and sub mismatch', async () => {
  for (const [name, id, info] of [
    ['string "true" in ID token', { email: 'x@t.test', email_verified: 'true' }, undefined],
    ['string "false"', { email: 'x@t.test', email_verified: 'false' }, undefined],
    ['sub mismatch userinfo', { email: 'x@t.test' }, { sub: 'mallory', email: 'x@t.test', email_verified: true }],
    ['verified false in id token, true in userinfo, no email in id', { email_verified: false }, { sub: 'alice', email: 'x@t.test', email_verified: true }],
    ['email array', { email: ['x@t.test'], email_verified: true }, undefined],
  ] as const) {
    a.script.idClaims = () => ({ ...id });
    a.script.userinfo = info ? () => ({ ...info }) : undefined;
    const s = await start('a');
    const landed = await s.browser.visit(callback({ code: a.mintCode(s.nonce), state: s.state, iss: a.issuer }));
    console.log('VARIANT', name, landed.status, events.filter((e) => e[0].startsWith('sign_in')).map((e) => JSON.stringify(e[1])).join(' | '));
    events.length = 0;
  }
});

test('mix-up: code for B sent to transaction of A, with and without iss', async () => {
  for (const iss of [b.issuer, undefined, a.issuer]) {
    const s = await start('a');
    const params: Record<string, string> = { code: b.mintCode(s.nonce), state: s.state };
    if (iss) params.iss = iss;
    const before = a.tokenRequests.length;
    const landed = await s.browser.visit(callback(params));
    console.log('MIXUP iss=', iss === b.issuer ? 'B' : iss === a.issuer ? 'A' : 'none', landed.status,
      'A token requests +', a.tokenRequests.length - before,
      'code sent to A:', a.tokenRequests.at(-1)?.get('code') === params.code,
      'verifier sent to A:', Boolean(a.tokenRequests.at(-1)?.get('code_verifier')));
  }
});

test('provider failures: html, 500, 200 {error}, missing fields, slow', async () => {
  const cases: Array<[string, FakeOp['script']]> = [
    ['html 200', { token: (_q, res) => (res.writeHead(200, { 'Content-Type': 'text/html' }), res.end('<html>'), true) }],
    ['500', { token: (_q, res) => (res.writeHead(500), res.end('boom'), true) }],
    ['200 {error}', { token: (_q, res) => (res.writeHead(200, { 'Content-Type': 'application/json' }), res.end('{"error":"bad_verification_code"}'), true) }],
    ['no id_token', { token: (_q, res, d) => (res.writeHead(200, { 'Content-Type': 'application/json' }), res.end(JSON.stringify({ ...d, id_token: undefined })), true) }],
    ['no token_type', { token: (_q, res, d) => (res.writeHead(200, { 'Content-Type': 'application/json' }), res.end(JSON.stringify({ ...d, token_type: undefined })), true) }],
    ['userinfo html', { idClaims: () => ({}), userinfo: () => { throw new Error('x'); } }],
    ['slow 3s (timeout 2s)', { delayMs: 3000 }],
  ];
  for (const [name, script] of cases) {
    const s = await start('a');
    a.script = script;
    const t0 = Date.now();
    const landed = await s.browser.visit(callback({ code: a.mintCode(s.nonce), state: s.state, iss: a.issuer }));
    console.log('FAIL', name, landed.status, `${Date.now() - t0}ms`, 'onError:', errors.length, errors.map((e) => (e as Error).name + ':' + String((e as Error).message).slice(0, 80)));
    errors.length = 0;
    a.script = {};
  }
});

test('callback oddities', async () => {
  const s = await start('a');
  const weird = [
    `${baseUrl}/v1/oauth/upstream/callback`,
    `${baseUrl}/v1/oauth/upstream/callback?state=${s.state}&state=${s.state}&code=x`,
    `${baseUrl}/v1/oauth/upstream/callback?state[x]=1`,
    `${baseUrl}/v1/oauth/upstream/callback?state=%00%0d%0a&code=%0d%0aSet-Cookie:x=1`,
    `${baseUrl}/v1/oauth/upstream/callback?` + 'a='.padEnd(20000, 'x'),
  ];
  for (const url of weird) {
    const res = await s.browser.visit(url);
    console.log('ODD', url.slice(baseUrl.length, baseUrl.length + 80), res.status);
  }
  // error reflected?
  const s2 = await start('a');
  const res = await s2.browser.visit(callback({ state: s2.state, error: '<script>alert(1)</script>', error_description: '<img src=x onerror=alert(1)>' }));
  const html = await res.text();
  console.log('ERROR PAGE', res.status, html.includes('<script>alert'), html.includes('<img src=x'));
  // malformed sealed cookie
  const s3 = await start('a');
  s3.browser.cookies.set('mcp_oauth_upstream', 'v1.AAAA.BBBB');
  const r3 = await s3.browser.visit(callback({ state: s3.state, code: 'x' }));
  console.log('MALFORMED COOKIE', r3.status);
});

test('held tokens of upstream user B attached to the grant of hosted user A (getSessionUser)', async () => {
  a.script.idClaims = () => ({ email: 'bob@t.test', email_verified: true, sub: 'bob' });
  const s = await start('a');
  const landed = await s.browser.visit(callback({ code: a.mintCode(s.nonce), state: s.state, iss: a.issuer }));
  expect(landed.status).toBe(303);
  hostUser = 'user:alice-hosted';
  const { html, decided } = await consent(s.browser, landed);
  console.log('CONSENT SHOWS', /alice-hosted/.test(html), /bob@t\.test/.test(html), decided.status);
  const code = new URL(decided.headers.get('location')!).searchParams.get('code')!;
  const token = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code', code, redirect_uri: client.redirect_uris[0]!, code_verifier: s.pkce.verifier,
  });
  const me = await request(server.app).post('/mcp').auth(token.body.access_token, { type: 'bearer' });
  const auth = me.body.auth;
  const up = await server.oauth.upstreamToken(auth);
  const row = await server.store.findUpstreamTokens(auth.grantId);
  console.log('GRANT USER', auth.extra.userId, 'UPSTREAM ROW USER', row?.userId, 'token', up.accessToken.slice(0, 6));
});

test('refresh after an unavailable failure: next caller waits on the stale lease', async () => {
  a.script.idClaims = () => ({ email: 'carol@t.test', email_verified: true, sub: 'carol' });
  const s = await start('a');
  const landed = await s.browser.visit(callback({ code: a.mintCode(s.nonce), state: s.state, iss: a.issuer }));
  const { decided } = await consent(s.browser, landed);
  const code = new URL(decided.headers.get('location')!).searchParams.get('code')!;
  const token = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code', code, redirect_uri: client.redirect_uris[0]!, code_verifier: s.pkce.verifier,
  });
  const me = await request(server.app).post('/mcp').auth(token.body.access_token, { type: 'bearer' });
  const grantId = me.body.auth.grantId;
  server.clock.advance(2 * 3600 * 1000);
  a.script.token = (_q, res) => (res.writeHead(503), res.end('down'), true);
  const e1 = await server.oauth.upstreamToken(grantId).catch((e) => e);
  console.log('FIRST', e1.code, e1.message);
  a.script = {};
  const t0 = Date.now();
  const second = await Promise.race([
    server.oauth.upstreamToken(grantId).then((t) => 'ok ' + t.accessToken.slice(0, 5), (e) => 'err ' + e.code),
    new Promise((r) => setTimeout(() => r('STILL WAITING after 5s'), 5000)),
  ]);
  console.log('SECOND', second, `${Date.now() - t0}ms`);
  // rotating refresh token and revocation on code replay
  server.clock.advance(31_000);
  await new Promise((r) => setTimeout(r, 300));
  const third = await server.oauth.upstreamToken(grantId).catch((e) => e);
  console.log('THIRD', third.accessToken ? 'ok' : third.code, 'refresh_token used', a.tokenRequests.at(-1)?.get('grant_type'));
  const revBefore = a.revocations.length;
  const replay = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code', code, redirect_uri: client.redirect_uris[0]!, code_verifier: s.pkce.verifier,
  });
  console.log('CODE REPLAY', replay.status, 'upstream revocations +', a.revocations.length - revBefore);
});
