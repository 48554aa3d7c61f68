// The consent page and the account pages look alike (one stylesheet, the library's), seen in headless Chromium;
// the pictures of the consent and connected-apps pages go under docs/ for the README with UPDATE_SCREENSHOTS=1, and
// those of the sign-in, consent, error and connected-apps pages in each language the app speaks under docs/pages/
// (<page>.<language>.png, for example-app/README.md). To redo only the latter:
// UPDATE_SCREENSHOTS=1 npx jest test/example-app/screenshots.test.ts -t 'in each language'
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { registerPageClients, tourPages, type PageName } from '../helpers/example-pages';
import { grantRecord } from '../helpers/fixtures';
import { startCallbackServer, type CallbackServer } from '../helpers/live-server';
import { memoryProvider } from '../helpers/mcp-client-provider';

const describeInBrowser = browserAvailable ? describe : describe.skip;
const OUT = process.env.UPDATE_SCREENSHOTS === '1' ? join(__dirname, '../../docs') : undefined;

/** The look every page must share: the stylesheet applied, not blocked by the CSP. */
const look = (page: Page) =>
  page.evaluate(`(() => {
    const main = getComputedStyle(document.querySelector('main'));
    return { body: getComputedStyle(document.body).display, radius: main.borderRadius, padding: main.padding };
  })()`);

describeInBrowser('pages of the reference app', () => {
  let browser: Browser;
  let app: RunningExampleApp;
  let callback: CallbackServer;
  let dir: string;
  beforeAll(async () => {
    browser = await launchChromium();
    app = await startExampleApp();
    callback = await startCallbackServer();
    dir = OUT ?? mkdtempSync(join(tmpdir(), 'screenshots-'));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await callback?.stop();
    if (!OUT && dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the consent page and the connected-apps page share one style, and are pictured', async () => {
    const { provider, state } = memoryProvider(callback.redirectUri);
    const transport = new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
      authProvider: provider,
    });
    await new Client({ name: 'Claude Desktop', version: '1.0.0' }).connect(transport).catch(() => undefined);
    const page = await browser.newPage({ viewport: { width: 720, height: 900 } });
    const blocked: string[] = [];
    page.on(
      'console',
      (message) => /Content Security Policy/i.test(message.text()) && blocked.push(message.text()),
    );

    await page.goto(state.authorizationUrls[0]!.href);
    await page.getByLabel('Email').fill(APP_USER.email);
    await page.getByLabel('Password').fill(APP_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const consentLook = await look(page);
    await page.screenshot({ path: join(dir, 'consent.png'), fullPage: true });
    const returned = callback.nextCallback();
    await page.getByRole('button', { name: 'Allow' }).click();
    await transport.finishAuth((await returned).get('code')!);

    await page.goto(`${app.baseUrl}/account/sign-in`);
    expect(await look(page)).toEqual(consentLook);
    await page.getByLabel('Email').fill(APP_USER.email);
    await page.getByLabel('Password').fill(APP_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Revoke access' }).waitFor();
    const text = await page.textContent('main');
    expect(text).toContain('MCP SDK journey');
    expect(text).toMatch(/Granted \d{4}-\d\d-\d\d \d\d:\d\d UTC · last used \d{4}-\d\d-\d\d/);
    expect(await look(page)).toEqual(consentLook);
    await page.screenshot({ path: join(dir, 'connected-apps.png'), fullPage: true });

    expect(consentLook).toEqual({ body: 'grid', radius: '12px', padding: '32px' });
    expect(blocked).toEqual([]);
    for (const name of ['consent.png', 'connected-apps.png'])
      expect(statSync(join(dir, name)).size).toBeGreaterThan(10_000);
  }, 60_000);

  test('in each language, the sign-in, consent, error and connected-apps pages are pictured', async () => {
    // An app of its own: the pictures show one connected app, whatever the test above connected.
    const pictured = await startExampleApp();
    try {
      const scopes = ['fakture:read', 'fakture:write', 'clients:read', 'bridge:read', 'dokument:write'];
      const clients = await registerPageClients(pictured);
      await pictured.store.createGrant(
        grantRecord(Date.now(), {
          clientId: clients.remote,
          userId: pictured.user.id,
          scopes: scopes.slice(0, 3),
          resource: `${pictured.baseUrl}/mcp`,
        }),
      );
      const shown: PageName[] = ['sign-in', 'consent', 'error', 'connected-apps'];
      mkdirSync(join(dir, 'pages'), { recursive: true });
      const files: string[] = [];
      for (const [tag, locale] of [
        ['en', 'en-US'],
        ['hr', 'hr-HR'],
      ] as const) {
        const context = await browser.newContext({ locale, viewport: { width: 720, height: 900 } });
        const page = await context.newPage();
        await tourPages(page, pictured, clients, scopes, async (name) => {
          if (!shown.includes(name)) return;
          expect(await page.evaluate('document.documentElement.lang')).toBe(tag);
          const file = join(dir, 'pages', `${name}.${tag}.png`);
          await page.screenshot({ path: file, fullPage: true });
          files.push(file);
        });
        await context.close();
      }
      expect(files).toHaveLength(shown.length * 2);
      for (const file of files) expect(statSync(file).size).toBeGreaterThan(10_000);
    } finally {
      await pictured.stop();
    }
  }, 30_000);
});
