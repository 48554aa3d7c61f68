// Every page of the reference app (the library's sign-in, consent and error pages, the app's account pages), in
// English and in Croatian, passes axe-core's checks in headless Chromium: every rule axe runs by default (WCAG 2.x
// A and AA, and its best practices), with the page's real stylesheet, so that colour contrast is measured too.
// axe is injected through the DevTools protocol (page.evaluate), which the pages' strict CSP does not govern: the
// policy stays on, and a style it blocked would show here as it would to a user.
import type { Browser } from 'playwright-core';
import { axeViolations, readable } from '../helpers/axe';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import {
  PAGE_NAMES,
  registerPageClients,
  tourPages,
  type PageClients,
  type PageName,
} from '../helpers/example-pages';

const describeInBrowser = browserAvailable ? describe : describe.skip;

/**
 * A browser of each language (its locale and the Accept-Language it sends), light and dark: the stylesheet declares
 * `color-scheme: light dark`, so a browser set to dark shows other colours, whose contrast is checked too.
 */
const BROWSERS = [
  { tag: 'en', locale: 'en-US', acceptLanguage: 'en-US,en;q=0.9', colorScheme: 'light' },
  { tag: 'hr', locale: 'hr-HR', acceptLanguage: 'hr-HR,hr;q=0.9,en;q=0.8', colorScheme: 'light' },
  { tag: 'en', locale: 'en-US', acceptLanguage: 'en-US,en;q=0.9', colorScheme: 'dark' },
  { tag: 'hr', locale: 'hr-HR', acceptLanguage: 'hr-HR,hr;q=0.9,en;q=0.8', colorScheme: 'dark' },
] as const;

/** A few scopes on the consent page, and on the connected-apps page (grants minted for it: the tour never allows). */
const SCOPES = ['fakture:read', 'clients:write', 'bridge:read', 'dokument:write'];

describeInBrowser('accessibility of every page (axe-core in Chromium)', () => {
  let browser: Browser;
  let app: RunningExampleApp;
  let clients: PageClients;
  beforeAll(async () => {
    browser = await launchChromium();
    app = await startExampleApp();
    clients = await registerPageClients(app);
    // Two grants of apps of one name (a client registered twice): the page must still tell their regions apart.
    await app.mintToken(SCOPES);
    await app.mintToken(SCOPES.slice(0, 2));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  });

  test.each(BROWSERS)(
    'in $tag, $colorScheme: no violation on any page, each named in its language',
    async ({ tag, locale, acceptLanguage, colorScheme }) => {
      const context = await browser.newContext({
        locale,
        extraHTTPHeaders: { 'Accept-Language': acceptLanguage },
        colorScheme,
        viewport: { width: 720, height: 900 },
      });
      const page = await context.newPage();
      const found: Partial<Record<PageName, { lang: string; violations: string[] }>> = {};
      try {
        await tourPages(page, app, clients, SCOPES, async (name) => {
          const lang = await page.evaluate('document.documentElement.lang');
          found[name] = { lang: String(lang), violations: readable(await axeViolations(page)) };
        });
      } finally {
        await context.close();
      }
      expect(found).toEqual(
        Object.fromEntries(PAGE_NAMES.map((name) => [name, { lang: tag, violations: [] }])),
      );
    },
    60_000,
  );
});
