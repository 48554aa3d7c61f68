// The "Connected apps" page: the user sees the clients holding access and revokes one, only their own.
import request from 'supertest';
import { createUser } from '../../example-app/users';
import { clientRecord, grantRecord } from '../helpers/fixtures';
import { formOf } from '../helpers/oauth-app';
import { ALL_SCOPES, APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';

let app: RunningExampleApp;
beforeEach(async () => {
  app = await startExampleApp();
});
afterEach(() => app.stop());

async function signedInBrowser(email = APP_USER.email, password = APP_USER.password) {
  const browser = request.agent(app.baseUrl);
  const page = await browser.get('/account/sign-in');
  const form = formOf(page.text);
  const res = await browser
    .post('/account/sign-in')
    .type('form')
    .send({ ...form.fields, email, password });
  return { browser, res };
}

const grantIdOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).grant_id as string;

test('signed out, the page sends the browser to sign in', async () => {
  const res = await request(app.baseUrl).get('/account/connected-apps');
  expect(res.status).toBe(302);
  expect(res.headers.location).toBe('/account/sign-in');
});

test('a wrong password is refused with the same words as an unknown email', async () => {
  const wrong = (await signedInBrowser(APP_USER.email, 'not the password')).res;
  const unknown = (await signedInBrowser('nobody@example.com', 'not the password')).res;
  expect(wrong.status).toBe(401);
  expect(unknown.status).toBe(401);
  expect(wrong.text).toContain('The email or password is incorrect.');
  expect(unknown.text).toContain('The email or password is incorrect.');
});

test('lists each connected app with its scopes in plain words and when it was granted and used', async () => {
  await app.mintToken(['fakture:read', 'clients:write']);
  const { browser, res } = await signedInBrowser();
  expect(res.status).toBe(303);
  const page = await browser.get('/account/connected-apps');
  expect(page.status).toBe(200);
  expect(page.headers['x-frame-options']).toBe('DENY');
  expect(page.text).toContain('Test agent');
  expect(page.text).toContain('Read your invoices and quotes');
  expect(page.text).toContain('Create and update clients');
  expect(page.text).toMatch(/Granted \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC · last used never/);
});

test('impersonation from a shared host: a document client is listed by its host first, the name it chose second', async () => {
  // A Client ID Metadata Document anyone could publish on a shared host, calling itself "Claude".
  const clientId = 'https://evil.test/someone/raw/claude.json';
  await app.store.registerClient(
    clientRecord({ clientId, clientName: 'Claude', clientSecretHash: null, tokenEndpointAuthMethod: 'none' }),
  );
  await app.store.createGrant(
    grantRecord(Date.now(), { clientId, userId: app.user.id, scopes: ['fakture:read'] }),
  );
  const { browser } = await signedInBrowser();
  const page = (await browser.get('/account/connected-apps')).text;
  expect(page).toContain('<section class="app" aria-label="evil.test">');
  expect(page).toContain('<h2>evil.test</h2>');
  expect(page).toContain('Calls itself <strong>Claude</strong> (not verified)');
  expect(page).toContain(`<code>${clientId}</code>`);
  expect(page).not.toContain('<h2>Claude</h2>');
});

test('Revoke access ends the app’s tokens at once', async () => {
  const token = await app.mintToken(ALL_SCOPES);
  const call = () =>
    request(app.baseUrl)
      .post('/mcp')
      .set('Authorization', `Bearer ${token}`)
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  expect((await call()).status).toBe(200);
  const { browser } = await signedInBrowser();
  const form = formOf((await browser.get('/account/connected-apps')).text.split('<section')[1]!);
  const res = await browser.post('/account/connected-apps/revoke').type('form').send(form.fields);
  expect(res.status).toBe(303);
  expect((await call()).status).toBe(401);
  expect((await browser.get('/account/connected-apps?revoked=1')).text).toContain('No app is connected.');
});

test('another user’s grant cannot be revoked by forging its id', async () => {
  const other = await createUser(app.db, { email: 'other@example.com', password: 'another long password' });
  const theirs = await app.mintToken(ALL_SCOPES, other);
  await app.mintToken(ALL_SCOPES);
  const { browser } = await signedInBrowser();
  const form = formOf((await browser.get('/account/connected-apps')).text.split('<section')[1]!);
  const res = await browser
    .post('/account/connected-apps/revoke')
    .type('form')
    .send({ ...form.fields, grant_id: grantIdOf(theirs) });
  expect(res.status).toBe(404);
  expect(await app.store.isGrantActive(grantIdOf(theirs))).toBe(true);
});

test('CSRF: a revoke posted without this browser’s token is refused', async () => {
  const token = await app.mintToken(ALL_SCOPES);
  const { browser } = await signedInBrowser();
  const res = await browser
    .post('/account/connected-apps/revoke')
    .type('form')
    .send({ grant_id: grantIdOf(token), csrf_token: 'forged' });
  expect(res.status).toBe(403);
  expect(await app.store.isGrantActive(grantIdOf(token))).toBe(true);
});

test('signing out ends the page session on the server: a copy of its cookie is refused too', async () => {
  const { browser, res } = await signedInBrowser();
  const copied = (res.headers['set-cookie'] as unknown as string[])
    .find((line) => line.startsWith('app_session='))!
    .split(';')[0]!;
  expect((await request(app.baseUrl).get('/account/connected-apps').set('Cookie', copied)).status).toBe(200);
  const form = formOf(
    (await browser.get('/account/connected-apps')).text
      .split('Sign out')[0]!
      .split('<form')
      .at(-1)!
      .replace(/^/, '<form'),
  );
  await browser.post('/account/sign-out').type('form').send(form.fields);
  expect((await browser.get('/account/connected-apps')).status).toBe(302);
  expect((await request(app.baseUrl).get('/account/connected-apps').set('Cookie', copied)).status).toBe(302);
});

test('on https the account cookies carry the __Host- prefix: Secure, Path=/, no Domain', async () => {
  const secure = await startExampleApp({ BASE_URL: 'https://mcp.example.com' });
  try {
    const page = await request(secure.baseUrl).get('/account/sign-in');
    const cookie = (page.headers['set-cookie'] as unknown as string[]).find((line) =>
      line.includes('app_csrf'),
    )!;
    expect(cookie).toMatch(/^__Host-app_csrf=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
  } finally {
    await secure.stop();
  }
});

describe('sign-in limits on the account page (reproduced: 40 wrong passwords, never a 429)', () => {
  let limited: RunningExampleApp;
  beforeEach(async () => {
    limited = await startExampleApp({ RATE_LIMITS: 'on' });
  });
  afterEach(() => limited.stop());

  const accountAttempt = async (password: string) => {
    const browser = request.agent(limited.baseUrl);
    const form = formOf((await browser.get('/account/sign-in')).text);
    return browser
      .post('/account/sign-in')
      .type('form')
      .send({ ...form.fields, email: APP_USER.email, password });
  };

  test('failed sign-ins are limited as on the OAuth form, and the refusal is a page', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1)
      statuses.push((await accountAttempt('wrong password')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    const refused = await accountAttempt('wrong password');
    expect(refused.headers['content-type']).toMatch(/html/);
    expect(refused.text).toContain('Too many requests');
  });

  test('the two sign-in forms count together: switching forms gains a guesser nothing', async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const res = await request(limited.baseUrl)
        .post('/v1/oauth/authorize/sign-in')
        .type('form')
        .send({ email: APP_USER.email, password: 'wrong password' });
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
    expect((await accountAttempt('wrong password')).status).toBe(401);
    expect((await accountAttempt('wrong password')).status).toBe(401);
    expect((await accountAttempt('wrong password')).status).toBe(429);
  });
});
