// The reference app's device authorization grant (RFC 8628) end to end, as its contract states it: a CLI with no
// browser registers and asks for codes; the person opens {base}/device in Chromium, types the code in the field
// labelled "Code", presses "Continue", signs in, and allows (or denies) the client the page names; the last page says
// the device may continue, with no redirect; the CLI's polling meets each answer in turn and, after Allow, gets the
// tokens once and calls a tool with them.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { createMovableClock, SECOND } from '../helpers/clock';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { DEVICE_GRANT, startDeviceAuthorization } from '../helpers/example-pages';

const describeInBrowser = browserAvailable ? describe : describe.skip;

describeInBrowser('the device flow of the reference app, in Chromium', () => {
  let browser: Browser;
  let app: RunningExampleApp;
  // The OAuth server's clock: moved past an interval or a lifetime, never waited for.
  const clock = createMovableClock();

  beforeAll(async () => {
    browser = await launchChromium();
    app = await startExampleApp({}, { now: clock.now });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  });

  const poll = async (clientId: string, deviceCode: string) => {
    const res = await fetch(`${app.baseUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };

  /** The person's part: the code page, the code, sign-in if asked, the consent page; returns its text. */
  async function reachConsent(page: Page, verificationUri: string, userCode: string): Promise<string> {
    await page.goto(verificationUri);
    await page.getByLabel('Code').fill(userCode);
    await page.getByRole('button', { name: 'Continue' }).click();
    if (await page.getByLabel('Password').isVisible()) {
      await page.getByLabel('Email').fill(APP_USER.email);
      await page.getByLabel('Password').fill(APP_USER.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    return (await page.textContent('main'))!;
  }

  test('discovery names the endpoint and the grant type', async () => {
    const metadata = (await (
      await fetch(`${app.baseUrl}/.well-known/oauth-authorization-server`)
    ).json()) as {
      device_authorization_endpoint: string;
      grant_types_supported: string[];
    };
    expect(metadata.device_authorization_endpoint).toBe(`${app.baseUrl}/v1/oauth/device_authorization`);
    expect(metadata.grant_types_supported).toContain(DEVICE_GRANT);
  });

  test('before a decision, authorization_pending; polled again within the interval, slow_down', async () => {
    const device = await startDeviceAuthorization(app, ['fakture:read'], 'Impatient job');
    const pending = await poll(device.clientId, device.deviceCode);
    expect(pending).toMatchObject({ status: 400, body: { error: 'authorization_pending' } });
    expect((await poll(device.clientId, device.deviceCode)).body.error).toBe('slow_down');
  });

  test('Allow: the tokens once, and a tool called with them', async () => {
    const device = await startDeviceAuthorization(
      app,
      ['fakture:read', 'clients:read'],
      'Nightly report job',
    );
    expect(device.verificationUri).toBe(`${app.baseUrl}/device`);

    const page = await browser.newPage();
    try {
      const consent = await reachConsent(page, device.verificationUri, device.userCode);
      expect(consent).toContain('Nightly report job');
      expect(consent).toContain('A device, not this browser, asks for this access');
      expect(consent).toContain(device.userCode);
      const stayed = page.url();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByText('Your device may continue now').waitFor();
      // No redirect at the end: the browser stays on this server, and the device is told by its polling.
      expect(new URL(page.url()).origin).toBe(new URL(stayed).origin);
    } finally {
      await page.close();
    }

    const tokens = await poll(device.clientId, device.deviceCode);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', scope: 'fakture:read clients:read' });
    expect(tokens.body.refresh_token).toBeTruthy();
    // Once: a used device code is invalid_grant, however soon it comes back.
    expect((await poll(device.clientId, device.deviceCode)).body.error).toBe('invalid_grant');

    const client = new Client({ name: 'device', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${tokens.body.access_token}` } },
      }),
    );
    try {
      const clients = (await client.callTool({ name: 'list_clients', arguments: {} })).structuredContent as {
        total: number;
      };
      expect(clients.total).toBe(3);
    } finally {
      await client.close();
    }
  }, 60_000);

  test('Deny: access_denied, and the page says so', async () => {
    const device = await startDeviceAuthorization(app, ['fakture:read'], 'Denied job');
    const page = await browser.newPage();
    try {
      await reachConsent(page, device.verificationUri, device.userCode);
      await page.getByRole('button', { name: 'Deny' }).click();
      await page.getByText('was not allowed').waitFor();
    } finally {
      await page.close();
    }
    const denied = await poll(device.clientId, device.deviceCode);
    expect(denied).toMatchObject({ status: 400, body: { error: 'access_denied' } });
  }, 60_000);

  test('expired_token after the code’s lifetime; an unknown code is invalid_grant', async () => {
    const device = await startDeviceAuthorization(app, ['fakture:read'], 'Late job');
    const answer = await fetch(`${app.baseUrl}/v1/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: device.clientId }),
    });
    const { expires_in: expiresIn } = (await answer.json()) as { expires_in: number };
    expect(expiresIn).toBeLessThanOrEqual(900);
    clock.advance((expiresIn + 1) * SECOND);
    expect((await poll(device.clientId, device.deviceCode)).body.error).toBe('expired_token');
    expect((await poll(device.clientId, 'not-a-device-code')).body.error).toBe('invalid_grant');
  });
});
