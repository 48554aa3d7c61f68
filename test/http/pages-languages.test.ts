// The built-in pages in the user's language: negotiated from Accept-Language (or forced), named in <html lang> and
// Content-Language, cached apart (Vary), with the host app's catalogue for messages, scope descriptions and error
// texts, and its logo and accent colour; a translation or an app's name can never add markup.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { PageLanguage } from '../../lib/pages';
import {
  authorizeQuery,
  createTestServer,
  formOf,
  registerClient,
  USER,
  type TestServer,
} from '../helpers/oauth-app';

/** A little German: enough to tell each page's words apart from the English ones. */
const GERMAN: PageLanguage = {
  messages: {
    'signIn.title': 'Anmelden',
    'signIn.heading': 'Bei {service} anmelden',
    'signIn.client': '**{name}** möchte sich mit Ihrem Konto verbinden.',
    'signIn.failed': 'E-Mail oder Passwort ist falsch.',
    'consent.heading': '{client} möchte Zugriff auf Ihr Konto bei {service}',
    'consent.allow': 'Erlauben',
    'error.heading': 'Diese Anfrage kann nicht fortgesetzt werden',
  },
  scopes: { 'fakture:read': 'Rechnungen und Angebote lesen' },
  errors: { invalid_request: 'Die Anfrage der App ist fehlerhaft.' },
};

let server: TestServer;
afterEach(() => server.close());

function start(pages: Parameters<typeof createTestServer>[0] = {}) {
  server = createTestServer({ serviceName: 'Notes', pages: { languages: { de: GERMAN } }, ...pages });
}

/** The sign-in page of a fresh authorization request, read with `language` as the browser's Accept-Language. */
async function signInPage(language?: string, metadata: Record<string, unknown> = {}) {
  const client = await registerClient(server.app, metadata);
  const agent = request.agent(server.app);
  const get = agent.get(`/v1/oauth/authorize?${authorizeQuery(client).query}`);
  const page = language === undefined ? await get : await get.set('Accept-Language', language);
  return { agent, page, client };
}

test.each<[string | undefined, string, string]>([
  ['de-DE,de;q=0.9,en;q=0.5', 'de', 'Bei Notes anmelden'],
  ['de', 'de', 'Bei Notes anmelden'],
  [undefined, 'en', 'Sign in to Notes'],
  ['fr-FR', 'en', 'Sign in to Notes'],
])('Accept-Language %p: the sign-in page speaks %s', async (language, lang, heading) => {
  start();
  const { page } = await signInPage(language);
  expect(page.status).toBe(200);
  expect(page.text).toContain(`<html lang="${lang}">`);
  expect(page.text).toContain(`<h1>${heading}</h1>`);
  expect(page.headers['content-language']).toBe(lang);
  expect(page.headers.vary).toMatch(/Accept-Language/);
  // A message the catalogue leaves out is English.
  expect(page.text).toContain('<label for="password">Password</label>');
});

test('a forced language is spoken whatever the browser asks, and nothing varies', async () => {
  start({ pages: { languages: { de: GERMAN }, language: 'de' } });
  const { page } = await signInPage('en-US');
  expect(page.text).toContain('<html lang="de">');
  expect(page.headers.vary ?? '').not.toMatch(/Accept-Language/);
});

test('the consent page: its words, and the scopes in the language of the page', async () => {
  start();
  const { agent, page } = await signInPage('de');
  const signIn = formOf(page.text);
  const signedIn = await agent
    .post(signIn.action)
    .type('form')
    .set('Accept-Language', 'de')
    .send({ ...signIn.fields, email: USER.email, password: USER.password });
  const location = new URL(signedIn.headers.location!);
  const consent = await agent.get(location.pathname + location.search).set('Accept-Language', 'de');
  expect(consent.text).toContain('<html lang="de">');
  expect(consent.text).toContain('Rechnungen und Angebote lesen');
  expect(consent.text).toContain('>Erlauben</button>');
  // A scope the catalogue does not describe keeps the words of the scopes option.
  expect(consent.text).toContain('Read your client records');
});

test('a failed sign-in says so in the language of the page', async () => {
  start();
  const { agent, page } = await signInPage('de');
  const signIn = formOf(page.text);
  const failed = await agent
    .post(signIn.action)
    .type('form')
    .set('Accept-Language', 'de')
    .send({ ...signIn.fields, email: USER.email, password: 'wrong password' });
  expect(failed.status).toBe(401);
  expect(failed.text).toContain('E-Mail oder Passwort ist falsch.');
});

test('the error page explains the code in the language of the page, with the server’s description as a detail', async () => {
  start();
  const res = await request(server.app)
    .get('/v1/oauth/authorize?client_id=nobody')
    .set('Accept-Language', 'de');
  expect(res.status).toBe(400);
  expect(res.text).toContain('<h1>Diese Anfrage kann nicht fortgesetzt werden</h1>');
  expect(res.text).toContain('Die Anfrage der App ist fehlerhaft.');
  expect(res.text).toMatch(/Details: The app that sent you here is not registered/);
  const english = await request(server.app).get('/v1/oauth/authorize?client_id=nobody');
  expect(english.text).not.toContain('Details:');
});

test('an app’s self-chosen name is text in every language: no markup, no marks', async () => {
  start();
  const { page } = await signInPage('de', { client_name: '<img src=x onerror=alert(1)> **bold**' });
  expect(page.text).toContain(
    '<strong>&lt;img src=x onerror=alert(1)&gt; **bold**</strong> möchte sich mit Ihrem Konto verbinden.',
  );
  expect(page.text).not.toContain('<img src=x');
});

test('a logo and an accent colour, without replacing the templates', async () => {
  start({ pages: { logoUrl: 'https://cdn.example/logo.svg', accentColor: '#0b57d0' } });
  const { page } = await signInPage();
  expect(page.text).toContain('<img class="logo" src="https://cdn.example/logo.svg" alt="Notes">');
  expect(page.text).toContain(':root { --accent: #0b57d0; }');
});

test('a template of the host app gets the language and the words too', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'views-'));
  const login = join(dir, 'login.ejs');
  writeFileSync(
    login,
    `<html lang="<%= lang %>"><h1><%- t('signIn.heading', { service: serviceName }) %></h1>`,
  );
  try {
    start({ views: { login } });
    const { page } = await signInPage('de');
    expect(page.text).toBe('<html lang="de"><h1>Bei Notes anmelden</h1>');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
