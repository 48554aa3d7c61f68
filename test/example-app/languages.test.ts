// The reference app's pages speak English and Croatian (example-app/i18n/hr.ts, i18n/account-messages.ts): each page
// (the library's sign-in, consent and error pages, the app's account pages) follows Accept-Language, names its
// language in <html lang> and Content-Language, varies on Accept-Language, and in Croatian shows no English word of
// its catalogues (scope descriptions included). The Croatian catalogues are complete, marks and placeholders kept.
import request from 'supertest';
import { ENGLISH_MESSAGES } from 'express-mcp-oauth/pages';
import { hr } from '../../example-app/i18n/hr';
import {
  ACCOUNT_LANGUAGES,
  ENGLISH_ACCOUNT_MESSAGES,
  type AccountMessageKey,
} from '../../example-app/i18n/account-messages';
import { BUSINESS_SCOPES } from '../../example-app/scopes';
import { ALL_TOOLS } from '../../example-app/mcp/tools';
import { ALL_SCOPES, APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import {
  authorizeUrl,
  errorUrls,
  PAGE_NAMES,
  LOCAL_CLIENT_REDIRECT,
  registerPageClients,
  visitStepUp,
  startDeviceAuthorization,
  endGrantsOf,
  type PageClients,
  type PageName,
} from '../helpers/example-pages';
import { formOf } from '../helpers/oauth-app';

type Page = request.Response;
type Tag = 'en' | 'hr';

/** What a browser of each language sends: a Croatian one still names English, after Croatian. */
const BROWSERS: Array<{ tag: Tag; acceptLanguage: string }> = [
  { tag: 'en', acceptLanguage: 'en-US,en;q=0.9' },
  { tag: 'hr', acceptLanguage: 'hr-HR,hr;q=0.9,en;q=0.8' },
];

/** On each page, words only its English version has, and their Croatian counterpart. */
const WORDS: Record<PageName, Record<Tag, string>> = {
  'sign-in': {
    en: 'wants to connect to your account. Sign in to continue.',
    hr: 'želi se povezati s vašim računom. Prijavite se kako biste nastavili.',
  },
  'sign-in-refused': {
    en: 'The email or password is incorrect.',
    hr: 'E-pošta ili lozinka nije točna.',
  },
  consent: { en: 'It will be able to:', hr: 'Moći će:' },
  'consent-step-up': { en: 'It can already:', hr: 'Već može:' },
  device: { en: 'Type the code your device shows.', hr: 'Upišite kôd koji prikazuje vaš uređaj.' },
  'device-invalid': { en: 'That code is not right', hr: 'Taj kôd nije točan' },
  'consent-device': {
    en: 'A device, not this browser, asks for this access',
    hr: 'Ovaj pristup traži uređaj, a ne ovaj preglednik',
  },
  'device-done': { en: 'Your device may continue now', hr: 'Vaš uređaj sada može nastaviti' },
  'consent-localhost': {
    en: 'This app only ever returns to <strong>your own computer</strong> (localhost).',
    hr: 'Ova se aplikacija uvijek vraća samo na <strong>vaše računalo</strong> (localhost).',
  },
  error: {
    en: 'Go back to the app you came from and try connecting again.',
    hr: 'Vratite se u aplikaciju iz koje ste došli i ponovno se pokušajte povezati.',
  },
  'error-return': {
    en: 'The app that sent you here should be told',
    hr: 'Aplikaciju koja vas je ovamo poslala treba o tome obavijestiti',
  },
  'account-sign-in': {
    en: 'To see and manage the apps connected to your account.',
    hr: 'Da biste vidjeli aplikacije povezane s vašim računom i upravljali njima.',
  },
  'account-sign-in-refused': {
    en: 'The email or password is incorrect.',
    hr: 'E-pošta ili lozinka nije točna.',
  },
  'connected-apps': { en: 'Revoke access', hr: 'Opozovi pristup' },
  'connected-apps-revoked': {
    en: 'Access revoked. The app can no longer use your account.',
    hr: 'Pristup je opozvan. Aplikacija više ne može koristiti vaš račun.',
  },
  'account-error': {
    en: 'That app is not connected to your account.',
    hr: 'Ta aplikacija nije povezana s vašim računom.',
  },
};

/** The scopes the connected-apps page lists (the app's grant). */
const GRANTED = ['fakture:read', 'bridge:read', 'dokument:write'];

/** A page's text as a reader sees it: no tags, no stylesheet, entities decoded, spaces collapsed. */
const visibleText = (html: string) =>
  html
    .replace(/<style[^>]*>[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

/** The literal runs of a language's messages (between marks and placeholders): none may show on the other's pages. */
function literalRuns(messages: Iterable<string>): string[] {
  const runs = [...messages].flatMap((message) => message.split(/\{\w+\}|\*\*|`/).map((run) => run.trim()));
  // Punctuation and one-letter runs ("(", ".") say nothing about the language.
  return [...new Set(runs.filter((run) => /\p{L}{2}/u.test(run)))];
}

const ENGLISH_RUNS = literalRuns([
  ...Object.values(ENGLISH_MESSAGES),
  ...Object.values(ENGLISH_ACCOUNT_MESSAGES),
  ...Object.values(BUSINESS_SCOPES),
  ...ALL_TOOLS.map((tool) => tool.title),
]);
const CROATIAN_RUNS = literalRuns([
  ...Object.values(hr.messages!),
  ...Object.values(ACCOUNT_LANGUAGES.hr.messages),
  ...Object.values(hr.scopes!),
  ...Object.values(hr.errors!),
  ...Object.values(hr.tools!),
]);
/** Each language's runs, less those both share ("(HTTP"): those are in no language in particular. */
const RUNS: Record<Tag, string[]> = {
  en: ENGLISH_RUNS.filter((run) => !CROATIAN_RUNS.includes(run)),
  hr: CROATIAN_RUNS.filter((run) => !ENGLISH_RUNS.includes(run)),
};

/** The placeholders and marks of a message: what a translation must keep, whatever its word order. */
const shape = (message: string) => ({
  placeholders: [...message.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort(),
  bold: message.split('**').length - 1,
  code: message.split('`').length - 1,
});

let app: RunningExampleApp;
let clients: PageClients;
beforeAll(async () => {
  app = await startExampleApp();
  clients = await registerPageClients(app);
  await app.mintToken(GRANTED);
});
afterAll(() => app?.stop());

/** Every page, as one browser sending `acceptLanguage` (or no such header) sees it. */
async function visitPages(acceptLanguage: string | undefined): Promise<Record<PageName, Page>> {
  const browser = request.agent(app.baseUrl);
  const path = (url: string) => url.replace(app.baseUrl, '');
  const speak = <T extends request.Test>(test: T) =>
    acceptLanguage === undefined ? test : test.set('Accept-Language', acceptLanguage);
  const get = (url: string) => speak(browser.get(path(url)));
  const post = (url: string, fields: Record<string, unknown>) =>
    speak(browser.post(path(url)).type('form').send(fields));
  const credentials = { email: APP_USER.email, password: APP_USER.password };
  const wrong = { email: APP_USER.email, password: 'not the password' };

  const signIn = await get(authorizeUrl(app, clients.remote, ALL_SCOPES));
  const signInForm = formOf(signIn.text);
  const signInRefused = await post(signInForm.action, { ...signInForm.fields, ...wrong });
  const signedIn = await post(signInForm.action, { ...signInForm.fields, ...credentials });
  const consent = await get(signedIn.headers.location!);
  // Signed in already: the next app's request goes straight to its consent page.
  const consentLocalhost = await get(
    authorizeUrl(app, clients.local, ['fakture:read'], { redirect_uri: LOCAL_CLIENT_REDIRECT }),
  );
  let consentStepUp!: Page;
  await visitStepUp(app, clients, ALL_SCOPES, async (url) => {
    consentStepUp = await get(url);
  });
  const device = await startDeviceAuthorization(app, ALL_SCOPES);
  const deviceEntry = await get(device.verificationUri);
  const deviceInvalid = await get(`${formOf(deviceEntry.text).action}?user_code=BCDF-GHJK`);
  // Signed in already: the code goes straight to the consent page.
  const consentDevice = await get(`${formOf(deviceEntry.text).action}?user_code=${device.userCode}`);
  const deviceForm = formOf(consentDevice.text);
  const deviceDone = await post(deviceForm.action, { ...deviceForm.fields, decision: 'allow' });
  await endGrantsOf(app, device.clientId);
  const errors = errorUrls(app, clients.remote);
  const accountSignIn = await get('/account/sign-in');
  const accountForm = formOf(accountSignIn.text).fields;
  const accountSignInRefused = await post('/account/sign-in', { ...accountForm, ...wrong });
  await post('/account/sign-in', { ...accountForm, ...credentials });
  const connectedApps = await get('/account/connected-apps');
  const revoke = formOf(connectedApps.text.split('<section')[1]!);
  return {
    'sign-in': signIn,
    'sign-in-refused': signInRefused,
    consent,
    'consent-localhost': consentLocalhost,
    'consent-step-up': consentStepUp,
    device: deviceEntry,
    'device-invalid': deviceInvalid,
    'consent-device': consentDevice,
    'device-done': deviceDone,
    error: await get(errors.error),
    'error-return': await get(errors['error-return']),
    'account-sign-in': accountSignIn,
    'account-sign-in-refused': accountSignInRefused,
    'connected-apps': connectedApps,
    'connected-apps-revoked': await get('/account/connected-apps?revoked=1'),
    // A revoke of a grant that is not the user's: the account pages' error page.
    'account-error': await post('/account/connected-apps/revoke', {
      ...revoke.fields,
      grant_id: 'not-a-grant',
    }),
  };
}

describe.each(BROWSERS)('a browser asking for $acceptLanguage', ({ tag, acceptLanguage }) => {
  const other: Tag = tag === 'en' ? 'hr' : 'en';
  let pages: Record<PageName, Page>;
  beforeAll(async () => {
    pages = await visitPages(acceptLanguage);
  });

  test.each(PAGE_NAMES)(`%s: in ${tag}, named so in <html lang> and Content-Language`, (name) => {
    const page = pages[name];
    expect(page.type).toBe('text/html');
    expect(page.text).toMatch(new RegExp(`^\\s*<!doctype html>\\s*<html lang="${tag}">`, 'i'));
    expect(page.headers['content-language']).toBe(tag);
    // The same URL answers in either language: a shared cache must not hand one browser's page to another.
    expect(page.headers.vary).toMatch(/\bAccept-Language\b/i);
    expect(page.text).toContain(WORDS[name][tag]);
    expect(page.text).not.toContain(WORDS[name][other]);
  });

  test.each(PAGE_NAMES)(`%s: no word of the other language's catalogues`, (name) => {
    // The error page of a translated error keeps the server's own (English) description, as a detail.
    const text = visibleText(pages[name].text.replace(/<p class="muted">Pojedinosti: .*?<\/p>/s, ''));
    expect(RUNS[other].filter((run) => text.includes(run))).toEqual([]);
  });

  test('the consent page describes every scope in the language', () => {
    const descriptions = tag === 'hr' ? hr.scopes! : BUSINESS_SCOPES;
    const text = visibleText(pages.consent.text);
    expect(ALL_SCOPES.filter((scope) => !text.includes(descriptions[scope]!))).toEqual([]);
  });

  test('the consent page names, under each scope, the tools it unlocks, in the language', () => {
    const titles =
      tag === 'hr' ? hr.tools! : Object.fromEntries(ALL_TOOLS.map((tool) => [tool.name, tool.title]));
    // Every scope is asked for, so every tool is listed, once, under the first scope it needs.
    const listed = [...pages.consent.text.matchAll(/<li class="[^"]*" title="([^"]+)">([^<]*)/g)].map((m) => [
      m[1],
      m[2]!.trim(),
    ]);
    expect(Object.fromEntries(listed)).toEqual(titles);
    expect(listed).toHaveLength(ALL_TOOLS.length);
  });

  test('the connected-apps page describes the granted scopes in the language', () => {
    const descriptions = tag === 'hr' ? hr.scopes! : BUSINESS_SCOPES;
    const listed = [...pages['connected-apps'].text.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]);
    expect(listed).toEqual(GRANTED.map((scope) => descriptions[scope]));
  });
});

test('the error page explains the error in Croatian and keeps the server’s words as a detail', async () => {
  const page = await request(app.baseUrl)
    .get(errorUrls(app, clients.remote).error.replace(app.baseUrl, ''))
    .set('Accept-Language', 'hr');
  expect(page.status).toBe(400);
  expect(page.text).toContain(`<p class="error" role="alert">${hr.errors!.invalid_request}</p>`);
  expect(page.text).toContain('Pojedinosti: The app that sent you here is not registered with this service.');
  expect(page.text).toContain('Pogreška: <code>invalid_request</code> (HTTP 400).');
});

describe('negotiation: the browser’s most preferred language the app speaks, English otherwise', () => {
  const cases: Array<[string, string | undefined, Tag]> = [
    ['no Accept-Language', undefined, 'en'],
    ['Croatian alone', 'hr', 'hr'],
    ['Croatian of Bosnia (its primary subtag)', 'hr-BA', 'hr'],
    ['English preferred, Croatian second', 'en-GB,en;q=0.9,hr;q=0.8', 'en'],
    ['Serbian preferred (not spoken), Croatian second', 'sr,hr;q=0.8,en;q=0.5', 'hr'],
    ['only languages not spoken', 'de-DE,de;q=0.9,fr;q=0.8', 'en'],
    ['any language', '*', 'en'],
  ];
  test.each(cases)('%s: %s → %s', async (_name, acceptLanguage, tag) => {
    for (const url of [authorizeUrl(app, clients.remote, ['fakture:read']), '/account/sign-in']) {
      const get = request(app.baseUrl).get(url.replace(app.baseUrl, ''));
      const page = await (acceptLanguage === undefined ? get : get.set('Accept-Language', acceptLanguage));
      expect([url, page.headers['content-language']]).toEqual([url, tag]);
      expect(page.text).toContain(`<html lang="${tag}">`);
    }
  });
});

describe('the Croatian catalogues are complete', () => {
  test.each(Object.keys(ENGLISH_MESSAGES) as Array<keyof typeof ENGLISH_MESSAGES>)(
    'the library’s message %s: translated, marks and placeholders kept',
    (key) => {
      const text = hr.messages![key];
      expect(text?.trim()).toBeTruthy();
      expect(text).not.toBe(ENGLISH_MESSAGES[key]);
      expect(shape(text!)).toEqual(shape(ENGLISH_MESSAGES[key]));
    },
  );

  test('no message the library does not have (it would refuse the catalogue)', () => {
    expect(Object.keys(hr.messages!).filter((key) => !Object.hasOwn(ENGLISH_MESSAGES, key))).toEqual([]);
  });

  test.each(Object.keys(ENGLISH_ACCOUNT_MESSAGES) as AccountMessageKey[])(
    'the account pages’ message %s: translated, marks and placeholders kept',
    (key) => {
      const text = ACCOUNT_LANGUAGES.hr.messages[key];
      expect(text.trim()).toBeTruthy();
      expect(text).not.toBe(ENGLISH_ACCOUNT_MESSAGES[key]);
      expect(shape(text)).toEqual(shape(ENGLISH_ACCOUNT_MESSAGES[key]));
    },
  );

  test('every tool has a title, and nothing else', () => {
    expect(Object.keys(hr.tools!).sort()).toEqual(ALL_TOOLS.map((tool) => tool.name).sort());
    for (const tool of ALL_TOOLS) expect(hr.tools![tool.name]).not.toBe(tool.title);
  });

  test('every scope of scopes.ts is described, and nothing else', () => {
    expect(Object.keys(hr.scopes!).sort()).toEqual(Object.keys(BUSINESS_SCOPES).sort());
    for (const [scope, text] of Object.entries(hr.scopes!)) expect([scope, text]).not.toEqual([scope, '']);
  });

  test.each([
    'invalid_request',
    'invalid_client',
    'invalid_grant',
    'unauthorized_client',
    'unsupported_response_type',
    'invalid_scope',
    'access_denied',
    'invalid_target',
    'server_error',
    'temporarily_unavailable',
    'too_many_requests',
  ])('the error %s is explained', (code) => {
    expect(hr.errors![code]?.trim()).toBeTruthy();
  });
});
