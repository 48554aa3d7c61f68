// Attacks on the built-in pages' languages and brand: markup through a client's name, a catalogue, the logo or the
// accent colour, messages changed by a value's marks or placeholders, hostile Accept-Language headers, the CSP, Vary.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { PageLanguage } from '../../lib/pages';
import { renderMessage } from '../../lib/i18n/translate';
import { negotiateLanguage } from '../../lib/i18n/negotiate';
import { BUSINESS_SCOPES } from '../../example-app/scopes';
import {
  authorizeQuery,
  createTestServer,
  formOf,
  registerClient,
  USER,
  type TestServer,
} from '../helpers/oauth-app';

const HOSTILE_NAME = '<img src=x onerror=alert(1)>"\' **bold** `code` {service} {name} {host}';

let server: TestServer | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

function start(options: Parameters<typeof createTestServer>[0] = {}) {
  server = createTestServer({ serviceName: 'Notes', ...options });
  return server;
}

async function signInPage(
  metadata: Record<string, unknown> = {},
  language?: string,
  overrides: Record<string, string | undefined> = {},
) {
  const client = await registerClient(server!.app, metadata);
  const agent = request.agent(server!.app);
  const get = agent.get(`/v1/oauth/authorize?${authorizeQuery(client, overrides).query}`);
  const page = language === undefined ? await get : await get.set('Accept-Language', language);
  return { agent, page, client };
}

async function consentPage(
  metadata: Record<string, unknown> = {},
  language?: string,
  overrides: Record<string, string | undefined> = {},
) {
  const { agent, page } = await signInPage(metadata, language, overrides);
  expect(page.status).toBe(200);
  const form = formOf(page.text);
  const signedIn = await agent
    .post(form.action)
    .type('form')
    .send({ ...form.fields, email: USER.email, password: USER.password });
  expect(signedIn.status).toBe(303);
  const next = new URL(signedIn.headers.location!);
  const get = agent.get(next.pathname + next.search);
  return language === undefined ? await get : await get.set('Accept-Language', language);
}

/** Tags in the body, by name: what a page may hold at most. */
const tags = (html: string, name: string) => (html.match(new RegExp(`<${name}[\\s>]`, 'gi')) ?? []).length;

describe('a client name cannot add markup or change a message', () => {
  test('sign-in page', async () => {
    start();
    const { page } = await signInPage({ client_name: HOSTILE_NAME });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain(
      '&lt;img src=x onerror=alert(1)&gt;&quot;&#39; **bold** `code` {service} {name} {host}',
    );
    // The message's own bold only: one <strong> (around the name), no <code> from the name's backticks.
    expect(tags(page.text, 'strong')).toBe(1);
    expect(tags(page.text, 'code')).toBe(0);
  });

  test('consent page, a loopback client (the localhost warning names it too)', async () => {
    start();
    const page = await consentPage({
      client_name: HOSTILE_NAME,
      redirect_uris: ['http://127.0.0.1:5000/cb'],
    });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).not.toMatch(/onerror=alert\(1\)>/);
    expect(page.text).toContain('{service} {name} {host}');
    // English: 'your own computer' is the only bold; the host is the only code.
    expect(tags(page.text, 'strong')).toBe(1);
    expect(tags(page.text, 'code')).toBe(1);
    expect(page.text).toContain('<code>127.0.0.1:5000</code>');
  });

  test('consent page, a custom-scheme redirect (its protocol shown as the host)', async () => {
    start();
    const page = await consentPage({
      client_name: 'x',
      redirect_uris: ['com.example.app:/cb'],
    });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<code>com.example.app:</code>');
  });
});

describe('a catalogue cannot add markup', () => {
  const HOSTILE: PageLanguage = {
    messages: {
      'signIn.title': '</title><script>alert(1)</script>',
      'signIn.heading': '<script>alert(2)</script> {service} {nope}',
      'signIn.email': '<b onclick=x>E-Mail</b>',
      'consent.heading': '{client} <iframe src=//evil> {service}',
      'error.heading': '"><svg onload=alert(3)>',
    },
    scopes: { 'fakture:read': '<img src=x onerror=alert(4)>' },
    errors: { invalid_request: '<a href=javascript:alert(5)>x</a> {detail}' },
  };

  test('sign-in page', async () => {
    start({ pages: { languages: { de: HOSTILE } } });
    const { page } = await signInPage({}, 'de');
    expect(page.status).toBe(200);
    expect(tags(page.text, 'script')).toBe(0);
    expect(page.text).toContain('<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt; · Notes</title>');
    expect(page.text).toContain('&lt;script&gt;alert(2)&lt;/script&gt; Notes {nope}');
    expect(page.text).not.toContain('<b onclick');
  });

  test('consent page: messages and scope descriptions', async () => {
    start({ pages: { languages: { de: HOSTILE } } });
    const page = await consentPage({}, 'de');
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<iframe');
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain('&lt;img src=x onerror=alert(4)&gt;');
  });

  test('error page: error texts', async () => {
    start({ pages: { languages: { de: HOSTILE } } });
    const page = await request(server!.app)
      .get('/v1/oauth/authorize?response_type=code&client_id=%3Cscript%3E%7Bcode%7D**x**')
      .set('Accept-Language', 'de');
    expect(page.status).toBeGreaterThanOrEqual(400);
    expect(page.text).not.toContain('<svg');
    expect(page.text).not.toContain('<a href=javascript');
    expect(tags(page.text, 'script')).toBe(0);
  });

  test('a title with marks is plain text in <title> (no literal tags shown in the tab)', async () => {
    start({ pages: { languages: { de: { messages: { 'signIn.title': '**Anmelden** bei `Notes`' } } } } });
    const { page } = await signInPage({}, 'de');
    const title = /<title>([\s\S]*?)<\/title>/.exec(page.text)![1]!;
    expect(title).not.toMatch(/<\/?(?:strong|code)>/);
  });
});

describe('renderMessage: values go in last', () => {
  test.each([
    ['{name}', '{service}'],
    ['{name}', '**x**'],
    ['{name}', '`x`'],
    ['**{name}**', '** injected <b>'],
    ['`{name}`', '`</code><script>`'],
    ['{name}', "$& $1 $` $'"],
  ])('message %p with value %p', (message, value) => {
    const html = renderMessage(message, { name: value, service: 'S' });
    expect(html).not.toContain('<b>');
    expect(html).not.toContain('<script>');
    expect(html.replace(/<\/?(?:strong|code)>/g, '')).toBe(
      value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&#39;'),
    );
  });

  test('a placeholder named after an Object.prototype property is not filled from the prototype', () => {
    expect(renderMessage('{toString} {constructor} {__proto__}', {})).toBe(
      '{toString} {constructor} {__proto__}',
    );
  });
});

describe('a scope named like an Object.prototype property', () => {
  test.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty'])(
    'scope %p is described by the scopes option, not by Object.prototype',
    async (scope) => {
      start({ scopes: { ...BUSINESS_SCOPES, [scope]: 'Build things' } });
      const page = await consentPage({}, undefined, { scope });
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('[native code]');
      expect(page.text).toContain('Build things');
    },
  );
});

describe('logo and accent colour', () => {
  test.each([
    'https://cdn.example/l.png?"onerror="alert(1)',
    'https://cdn.example/"><script>alert(1)</script>',
    'data:image/svg+xml,<svg onload=alert(1)>"><script>alert(1)</script>',
    'data:image/png;base64,"/></style><script>alert(1)</script>',
  ])('logoUrl %p stays inside its attribute', async (logoUrl) => {
    start({ pages: { logoUrl } });
    const { page } = await signInPage();
    expect(page.status).toBe(200);
    expect(tags(page.text, 'img')).toBe(1);
    expect(tags(page.text, 'script')).toBe(0);
    expect(page.text).not.toMatch(/<img[^>]* onerror=/);
    expect(page.text.match(/<\/style>/g)).toHaveLength(1);
    // The CSP still lets the logo load: https: and data: images.
    expect(page.headers['content-security-policy']).toMatch(/img-src 'self' data: https:/);
  });

  test.each([
    'javascript:alert(1)',
    'http://cdn.example/l.png',
    ' https://cdn.example/l.png',
    'data:text/html,<script>alert(1)</script>',
    'JaVaScRiPt:https://x',
    '//cdn.example/l.png',
  ])('logoUrl %p is refused at start', (logoUrl) => {
    expect(() => start({ pages: { logoUrl } })).toThrow(/logoUrl/);
  });

  test.each([
    '#fff;}</style><script>alert(1)</script>',
    '#fff</style>',
    'red',
    '#fff\n',
    '#fff;background:url(//evil)',
    'expression(alert(1))',
    '#ggg',
  ])('accentColor %p is refused at start', (accentColor) => {
    expect(() => start({ pages: { accentColor } })).toThrow(/accentColor/);
  });

  test('a good colour is the only thing added to the style element, under its nonce', async () => {
    start({ pages: { accentColor: '#0b57d0' } });
    const { page } = await signInPage({ client_name: '</style><style>body{display:none}' });
    const csp = page.headers['content-security-policy'] as string;
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)![1]!;
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("default-src 'none'");
    expect(page.text.match(/<style/g)).toHaveLength(1);
    expect(page.text).toContain(`<style nonce="${nonce}">`);
    expect(page.text.match(/<\/style>/g)).toHaveLength(1);
    expect(page.text).toContain(':root { --accent: #0b57d0; }</style>');
    expect(page.text).not.toMatch(/\sstyle="/);
  });
});

describe('hostile Accept-Language', () => {
  const served = { languages: { de: { messages: { 'signIn.heading': 'Bei {service} anmelden' } } } };

  test.each([
    ['huge', 'de-'.repeat(4000)],
    ['many commas', ','.repeat(12000) + 'de'],
    ['many entries', Array.from({ length: 1000 }, (_, i) => `x${i};q=0.${i % 10}`).join(',')],
    ['odd q values', 'de;q=abc, en;q=-1, fr;q=1e3, de;q=NaN, *;q=Infinity'],
    ['q above 1', 'de;q=1.5, en'],
    ['non-ASCII (latin-1)', 'dé-ÄT, ñ;q=0.9'],
    ['prototype names', '__proto__, constructor, toString, hasOwnProperty'],
    ['markup', '"><script>alert(1)</script>'],
    ['empty parts', ';;;, ;q=1, -, --, *-de'],
  ])('%s: a 200 in a served language, quickly', async (_name, header) => {
    start({ pages: served });
    const started = Date.now();
    const { page } = await signInPage({}, header);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(page.status).toBe(200);
    expect(['en', 'de']).toContain(page.headers['content-language']);
    expect(page.text).toMatch(/<html lang="(?:en|de)">/);
    expect(tags(page.text, 'script')).toBe(0);
  });

  test('negotiateLanguage on a 1 MB header returns quickly', () => {
    const header = `${'a-'.repeat(250_000)},${',de;q=0.5'.repeat(50_000)}`;
    const started = Date.now();
    expect(['en', 'de']).toContain(negotiateLanguage(header, ['en', 'de'], 'en'));
    expect(Date.now() - started).toBeLessThan(1000);
  });

  test('a language refused with q=0 is not served, even when * is there', async () => {
    start({ pages: served });
    const { page } = await signInPage({}, 'de;q=0, *');
    expect(page.headers['content-language']).toBe('en');
  });
});

describe('caching', () => {
  test('each page varies on Accept-Language and is not stored', async () => {
    start({ pages: { languages: { de: {} } } });
    const { page } = await signInPage();
    const consent = await consentPage();
    const error = await request(server!.app).get('/v1/oauth/authorize?response_type=code&client_id=nope');
    for (const res of [page, consent, error]) {
      expect(res.headers['content-type']).toMatch(/html/);
      expect(res.headers['vary']).toMatch(/Accept-Language/i);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-language']).toBe('en');
    }
  });

  test('a forced language is the same whatever the header, without Vary on it', async () => {
    start({ pages: { languages: { de: {} }, language: 'de' } });
    const { page } = await signInPage({}, 'en');
    expect(page.headers['content-language']).toBe('de');
    expect(page.headers['vary'] ?? '').not.toMatch(/Accept-Language/i);
  });
});

describe('templates: <%- %> only with HTML already made safe', () => {
  const root = join(__dirname, '..', '..');
  const files = [
    'views/login.ejs',
    'views/consent.ejs',
    'views/error.ejs',
    'views/partials/head.ejs',
    'views/partials/foot.ejs',
    'views/partials/consent-tools.ejs',
    'example-app/views/account-error.ejs',
    'example-app/views/account-head.ejs',
    'example-app/views/account-sign-in.ejs',
    'example-app/views/connected-apps.ejs',
  ];
  test.each(files)('%s', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    for (const [, expression] of text.matchAll(/<%-([\s\S]*?)-?%>/g)) {
      expect(expression!.trim()).toMatch(
        // title is t()'s HTML, its marks' tags taken out for the browser tab; a partial escapes its own data.
        /^(?:t\('[\w.]+'(?:, \{[^}]*\})?\)|include\('[\w/-]+'(?:, \{ (?:title: t\('[\w.]+'\)|tools: scope\.tools) \})?\)|title\.replace\(\/<\\\/\?\(\?:strong\|code\)>\/g, ''\)|styles)$/,
      );
    }
  });
});
