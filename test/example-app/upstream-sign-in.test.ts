// The reference app's upstream sign-in (UPSTREAM_OIDC_ISSUER, UPSTREAM_CLIENT_ID, UPSTREAM_CLIENT_SECRET,
// UPSTREAM_NAME) against oidc-provider as a real process: "Continue with <name>" beside the email form, a verified
// email of a user signs that user in, anything else gets a clear page, never a 500; the pages it adds pass axe-core
// in both languages and both colour schemes.
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { ConfigError, readConfig } from '../../example-app/config';
import { createUser } from '../../example-app/users';
import { axeViolations, readable } from '../helpers/axe';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { authorizeUrl, registerPageClients, type PageClients } from '../helpers/example-pages';
import { httpBrowser } from '../helpers/http-browser';
import { reservePort } from '../helpers/ports';
import {
  signInUpstreamWithFetch,
  startOidcUpstream,
  UPSTREAM_ACCOUNTS,
  type OidcUpstream,
  type UpstreamAccount,
} from '../helpers/upstream-oidc';
import { providerLinks, STRANGER } from '../helpers/upstream-world';

const [ANA, IVO, DENY] = UPSTREAM_ACCOUNTS as [UpstreamAccount, UpstreamAccount, UpstreamAccount];
const describeInBrowser = browserAvailable ? describe : describe.skip;
/** With UPDATE_SCREENSHOTS=1, the pictures of the pages it adds, light, in each language (docs/pages/). */
const PICTURES = process.env.UPDATE_SCREENSHOTS === '1' ? join(__dirname, '../../docs/pages') : undefined;

let upstream: OidcUpstream;
let app: RunningExampleApp;
let clients: PageClients;
beforeAll(async () => {
  const { port, release } = await reservePort();
  upstream = await startOidcUpstream({
    redirectUris: [`http://127.0.0.1:${port}/v1/oauth/upstream/callback`],
    accounts: [...UPSTREAM_ACCOUNTS, STRANGER],
  });
  await release();
  app = await startExampleApp({
    PORT: String(port),
    UPSTREAM_OIDC_ISSUER: upstream.issuer,
    UPSTREAM_CLIENT_ID: upstream.clientId,
    UPSTREAM_CLIENT_SECRET: upstream.clientSecret,
    UPSTREAM_NAME: 'Upstream ID',
  });
  // Users of the app with the provider's emails: Ana's is verified there, Ivo's is not.
  await createUser(app.db, { email: ANA.email, password: 'a long enough password', name: 'Ana Here' });
  await createUser(app.db, { email: IVO.email, password: 'a long enough password', name: 'Ivo Here' });
  clients = await registerPageClients(app);
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await upstream?.close();
});

/** From the app's sign-in page through "Continue with Upstream ID" and the provider's sign-in, back to the app. */
async function signInUpstream(account: UpstreamAccount) {
  const browser = httpBrowser();
  const page = await browser.visit(authorizeUrl(app, clients.remote, ['fakture:read']));
  const html = await page.text();
  const toProvider = await browser.visit(providerLinks(html).oidc!);
  const landed = await browser.visit(
    await signInUpstreamWithFetch(toProvider.headers.get('location')!, account),
  );
  if (landed.status !== 303) return { landed, text: await landed.text() };
  const next = await browser.visit(landed.headers.get('location')!);
  return { landed, text: await next.text() };
}

test('the sign-in form also offers "Continue with Upstream ID", and keeps its email and password', async () => {
  const page = await fetch(authorizeUrl(app, clients.remote, ['fakture:read']));
  const html = await page.text();
  expect(html).toContain('Continue with Upstream ID');
  expect(html).toMatch(/name="email"[\s\S]*name="password"/);
  const link = new URL(providerLinks(html).oidc!);
  expect(link.pathname).toBe('/v1/oauth/authorize/upstream');
});

test('a verified email that matches a user signs that user in: the consent page, as that user', async () => {
  const { landed, text } = await signInUpstream(ANA);
  expect(landed.status).toBe(303);
  expect(text).toContain('Allow');
  expect(text).toContain('Ana Here');
});

test.each([
  [
    'an email the provider has not verified (though a user has it)',
    IVO,
    'has not verified the email address',
  ],
  ['a verified email of nobody here', STRANGER, 'No account here matches'],
  ['a refusal at the provider', DENY, 'did not sign you in'],
])('%s: a clear page, nobody signed in, never a 500', async (_name, account, message) => {
  const { landed, text } = await signInUpstream(account);
  expect(landed.status).toBe(403);
  expect(text).toContain(message);
  expect(text).toContain('Continue with Upstream ID');
});

test('UPSTREAM_CLIENT_ID without UPSTREAM_OIDC_ISSUER, or an http issuer off loopback, stops the app at start', () => {
  expect(() => readConfig({ UPSTREAM_CLIENT_ID: 'app' })).toThrow(ConfigError);
  expect(() => readConfig({ UPSTREAM_OIDC_ISSUER: 'http://id.example', UPSTREAM_CLIENT_ID: 'app' })).toThrow(
    /https/,
  );
  expect(readConfig({}).upstreamOidc).toBeUndefined();
});

describeInBrowser('the pages upstream sign-in adds pass axe-core', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());

  test.each([
    ['en', 'en-US', 'light', 'Continue with Upstream ID', 'has not verified'],
    ['hr', 'hr-HR', 'light', 'Nastavite putem usluge Upstream ID', 'nije potvrdio'],
    ['en', 'en-US', 'dark', 'Continue with Upstream ID', 'has not verified'],
    ['hr', 'hr-HR', 'dark', 'Nastavite putem usluge Upstream ID', 'nije potvrdio'],
  ] as const)(
    'in %s (%s, %s)',
    async (tag, locale, colorScheme, link, refusal) => {
      const context = await browser.newContext({
        locale,
        extraHTTPHeaders: { 'Accept-Language': `${locale},${tag};q=0.9` },
        colorScheme,
        viewport: { width: 720, height: 900 },
      });
      const page = await context.newPage();
      const picture = async (name: string) => {
        if (PICTURES && colorScheme === 'light')
          await page.screenshot({ path: join(PICTURES, `${name}.${tag}.png`), fullPage: true });
      };
      try {
        await page.goto(authorizeUrl(app, clients.remote, ['fakture:read']));
        expect(readable(await axeViolations(page))).toEqual([]);
        await picture('sign-in-upstream');
        await page.getByRole('link', { name: link }).click();
        await page.getByLabel('Email').fill(IVO.email);
        await page.getByLabel('Password').fill(IVO.password);
        await page.getByRole('button', { name: 'Sign in upstream' }).click();
        await page.getByText(refusal).waitFor();
        expect(await page.evaluate('document.documentElement.lang')).toBe(tag);
        expect(readable(await axeViolations(page))).toEqual([]);
        await picture('sign-in-upstream-refused');
      } finally {
        await context.close();
      }
    },
    30_000,
  );
});
