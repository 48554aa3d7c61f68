// The reference app's consent page in headless Chromium names, with each requested scope, the tools it unlocks (the
// contract's step-up line), and the list follows the checkboxes: unticking a scope hides every tool that needs it,
// with the page's strict CSP on and no script.
import type { Browser } from 'playwright-core';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { authorizeUrl, registerPageClients, type PageClients } from '../helpers/example-pages';
import { ALL_TOOLS } from '../../example-app/mcp/tools';

const describeInBrowser = browserAvailable ? describe : describe.skip;

describeInBrowser('tools on the consent page, in Chromium', () => {
  let browser: Browser;
  let app: RunningExampleApp;
  let clients: PageClients;
  beforeAll(async () => {
    browser = await launchChromium();
    app = await startExampleApp();
    clients = await registerPageClients(app);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  });

  test('unticking a scope hides the tools that need it; ticking it again shows them', async () => {
    const context = await browser.newContext({ extraHTTPHeaders: { 'Accept-Language': 'en' } });
    const page = await context.newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    try {
      await page.goto(authorizeUrl(app, clients.remote, ['fakture:read', 'fakture:write']));
      await page.fill('#email', APP_USER.email);
      await page.fill('#password', APP_USER.password);
      await Promise.all([page.waitForNavigation(), page.click('form button[type="submit"]')]);
      const visible = async () =>
        (await page
          .locator('.tools li')
          .evaluateAll((items) =>
            items
              .filter((item) => (item as unknown as { offsetParent: unknown }).offsetParent !== null)
              .map((item) => item.getAttribute('title')),
          )) as string[];
      const within = (granted: string[]) =>
        ALL_TOOLS.filter((tool) => tool.scopes.every((scope) => granted.includes(scope)))
          .map((tool) => tool.name)
          .sort();
      const all = await visible();
      expect([...all].sort()).toEqual(within(['fakture:read', 'fakture:write']));
      expect(all).toContain('delete_invoice');
      // Without fakture:read, only the tools that need fakture:write alone are left.
      await page.getByLabel('Read your invoices and quotes').uncheck();
      expect((await visible()).sort()).toEqual(within(['fakture:write']));
      await page.getByLabel('Read your invoices and quotes').check();
      expect(await visible()).toEqual(all);
      // Without fakture:write, only the tools that read.
      await page.getByLabel('Create, update and delete invoices').uncheck();
      expect((await visible()).sort()).toEqual(within(['fakture:read']));
      expect(blocked).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
