// The reference app's administrators' console, as its contract states it: `npm run user:create -- --admin` makes an
// administrator (here createUser with admin, what the command calls); {base}/admin, through the same sign-in form,
// shows every client and every user's active grants (user, client name, scopes, granted, last used), each with a
// "Revoke" button that ends it at once: its refresh token is invalid_grant and its access token refused at /mcp.
// Anyone else gets a 403 page that lists nothing; a revocation without the form's CSRF token changes nothing; the page
// passes axe in both languages.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createUser } from '../../example-app/users';
import { clientRecord } from '../../lib/testing/fixtures';
import { axeViolations, readable } from '../helpers/axe';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { DEVICE_GRANT, startDeviceAuthorization } from '../helpers/example-pages';

const describeInBrowser = browserAvailable ? describe : describe.skip;
const ADMIN = { email: 'admin@example.com', password: 'an administrator password' };

describeInBrowser('the administrators’ console of the reference app', () => {
  let browser: Browser;
  let app: RunningExampleApp;
  let tokens: { access_token: string; refresh_token: string };

  /** Signs in on the form in front of the page, by its fields' ids: the same in either language. */
  async function signIn(page: Page, who: { email: string; password: string }) {
    await page.fill('#email', who.email);
    await page.fill('#password', who.password);
    await Promise.all([page.waitForNavigation(), page.click('form button[type="submit"]')]);
  }

  const refresh = async (refreshToken: string, clientId: string) => {
    const res = await fetch(`${app.baseUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: clientId,
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };
  const listTools = (accessToken: string) =>
    fetch(`${app.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${accessToken}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  let device: Awaited<ReturnType<typeof startDeviceAuthorization>>;
  beforeAll(async () => {
    browser = await launchChromium();
    app = await startExampleApp();
    await createUser(app.db, { ...ADMIN, name: 'Ada Admin', admin: true });
    // The user connects a CLI through the device flow: a grant with a refresh token, as a real client holds.
    device = await startDeviceAuthorization(app, ['fakture:read', 'clients:read'], 'Build agent');
    const page = await browser.newPage();
    try {
      await page.goto(device.verificationUri);
      await page.getByLabel('Code').fill(device.userCode);
      await page.getByRole('button', { name: 'Continue' }).click();
      await signIn(page, APP_USER);
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByText('Your device may continue now').waitFor();
    } finally {
      await page.close();
    }
    const res = await fetch(`${app.baseUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: DEVICE_GRANT,
        device_code: device.deviceCode,
        client_id: device.clientId,
      }),
    });
    tokens = (await res.json()) as typeof tokens;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  });

  async function openConsole(context: BrowserContext, who: typeof ADMIN): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${app.baseUrl}/admin`);
    // The same sign-in form as the account pages, coming back to the console.
    await signIn(page, who);
    await page.waitForLoadState();
    return page;
  }

  test('anyone but an administrator gets a 403 page that lists nothing', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${app.baseUrl}/admin`);
      await signIn(page, APP_USER);
      expect((await page.goto(`${app.baseUrl}/admin`))!.status()).toBe(403);
      const text = (await page.textContent('main'))!;
      expect(text).toContain('This page is for administrators.');
      expect(text).not.toContain('Build agent');
      expect(text).not.toContain(APP_USER.email);
      // Nor may they act, even with a CSRF token of their own session (from their connected-apps page).
      await page.goto(`${app.baseUrl}/account/connected-apps`);
      const csrf = (await page.locator('input[name="csrf_token"]').first().getAttribute('value'))!;
      const [grant] = await app.store.listActiveGrants(app.user.id);
      for (const [path, form] of [
        ['revoke', { grant_id: grant!.grantId }],
        ['clients/disable', { client_id: grant!.clientId }],
        ['purge-idle', {}],
      ] as const) {
        const res = await context.request.post(`${app.baseUrl}/account/admin/${path}`, {
          form: { csrf_token: csrf, ...form },
        });
        expect([path, res.status()]).toEqual([path, 403]);
      }
      expect(await app.store.isGrantActive(grant!.grantId)).toBe(true);
      expect((await app.store.findClient(grant!.clientId))?.disabled).toBeUndefined();
    } finally {
      await context.close();
    }
  });

  test('an administrator sees every client and grant, and passes axe in both languages', async () => {
    for (const locale of ['en-US', 'hr-HR']) {
      const context = await browser.newContext({ locale });
      try {
        const page = await openConsole(context, ADMIN);
        const grant = page.getByRole('region', { name: `Build agent · ${APP_USER.email}` });
        await grant.waitFor();
        const text = (await grant.textContent())!;
        if (locale === 'en-US') {
          expect(text).toContain('Read your invoices and quotes');
          expect(text).toContain('Read your client records');
          expect(text).toMatch(
            /Granted: \d{4}-\d\d-\d\d \d\d:\d\d UTC · Last used: \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
          );
        }
        expect(await page.textContent('ul.clients')).toContain(device.clientId);
        if (locale === 'en-US') {
          // Each client with when it was last used and how many live grants it has.
          const listed = await page.locator('ul.clients > li', { hasText: device.clientId }).textContent();
          expect(listed!.replace(/\s+/g, ' ')).toMatch(
            /Created \d{4}-\d\d-\d\d \d\d:\d\d UTC · Last used \d{4}-\d\d-\d\d \d\d:\d\d UTC · active grants: 1\b/,
          );
        }
        expect(readable(await axeViolations(page))).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });

  test('a revocation without the form’s CSRF token changes nothing', async () => {
    const context = await browser.newContext();
    try {
      const page = await openConsole(context, ADMIN);
      const res = await context.request.post(`${app.baseUrl}/account/admin/revoke`, {
        form: { csrf_token: 'forged', grant_id: (await app.store.listActiveGrants(app.user.id))[0]!.grantId },
      });
      expect(res.status()).toBe(403);
      expect((await listTools(tokens.access_token)).status).toBe(200);
      await page.close();
    } finally {
      await context.close();
    }
  });

  test('"Disable" ends a client’s grants and refuses its tokens; "Enable" lets it back', async () => {
    const token = await app.mintToken(['clients:read']);
    expect((await listTools(token)).status).toBe(200);
    const context = await browser.newContext();
    try {
      const page = await openConsole(context, ADMIN);
      await page.getByRole('button', { name: 'Disable Test agent' }).click();
      await page.getByText('Client disabled: its grants ended').waitFor();
      expect((await listTools(token)).status).toBe(401);
      await page.getByRole('button', { name: 'Enable Test agent' }).click();
      await page.getByText('Client enabled.').waitFor();
      // Its grant does not come back.
      expect((await listTools(token)).status).toBe(401);
    } finally {
      await context.close();
    }
  });

  test('"Remove idle registrations" removes old public registrations nothing names, and says how many', async () => {
    // A public registration from long ago (issuedAt 0) that nothing names.
    await app.store.registerClient(
      clientRecord({ clientId: 'forgotten-cli', clientSecretHash: null, tokenEndpointAuthMethod: 'none' }),
    );
    const context = await browser.newContext();
    try {
      const page = await openConsole(context, ADMIN);
      expect(await page.textContent('ul.clients')).toContain('forgotten-cli');
      await page.getByRole('button', { name: 'Remove idle registrations' }).click();
      await page.getByText('Idle registrations removed: 1.').waitFor();
      expect(await page.textContent('ul.clients')).not.toContain('forgotten-cli');
      // The device client, whose grant is there, stays.
      expect(await page.textContent('ul.clients')).toContain(device.clientId);
    } finally {
      await context.close();
    }
  });

  test('"Revoke" ends the grant at once: its refresh token is invalid_grant, its access token refused', async () => {
    const context = await browser.newContext();
    try {
      const page = await openConsole(context, ADMIN);
      const grant = page.getByRole('region', { name: `Build agent · ${APP_USER.email}` });
      await grant.getByRole('button', { name: 'Revoke' }).click();
      await page.getByText('Grant revoked: its tokens no longer work.').waitFor();
      expect(await page.getByRole('region', { name: `Build agent · ${APP_USER.email}` }).count()).toBe(0);
    } finally {
      await context.close();
    }
    expect((await refresh(tokens.refresh_token, device.clientId)).body.error).toBe('invalid_grant');
    expect((await listTools(tokens.access_token)).status).toBe(401);
  });
});
