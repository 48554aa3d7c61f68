// The reference app end to end with the official MCP SDK client and an OAuthClientProvider: discovery through the
// 401, registration, consent in headless Chromium, exchange, tools within the granted scopes, refusal outside them,
// refresh when the access token expires (the server's clock moved past it, not waited for), and no access after
// revocation on the "Connected apps" page.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { APP_USER, snapshot, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { createMovableClock, HOUR, SECOND } from '../helpers/clock';
import { startCallbackServer, type CallbackServer } from '../helpers/live-server';
import { memoryProvider } from '../helpers/mcp-client-provider';

const describeInBrowser = browserAvailable ? describe : describe.skip;

async function signIn(page: Page, email = APP_USER.email, password = APP_USER.password) {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describeInBrowser('the reference app with the official MCP client', () => {
  let browser: Browser;
  let app: RunningExampleApp;
  let callback: CallbackServer;
  // The OAuth server's clock: the test moves it past the access token's lifetime to make the SDK refresh.
  const clock = createMovableClock();

  beforeAll(async () => {
    browser = await launchChromium();
    app = await startExampleApp({}, { now: clock.now });
    callback = await startCallbackServer();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await callback?.stop();
  });

  test('discover, register, consent, call tools, refresh, revoke', async () => {
    const mcpUrl = new URL(`${app.baseUrl}/mcp`);
    const { provider, state } = memoryProvider(callback.redirectUri);

    // 1. The first connection meets the 401, discovers, registers, and asks for the user's consent.
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: 'journey', version: '1.0.0' }).connect(first)).rejects.toThrow(
      /Unauthorized/,
    );
    expect(state.client?.client_id).toBeTruthy();
    const authorizationUrl = state.authorizationUrls[0]!;
    expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl.href);

    // 2. The user signs in and allows invoices and clients only, unticking everything else.
    const page = await browser.newPage();
    const returned = callback.nextCallback();
    await page.goto(authorizationUrl.href);
    await signIn(page);
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    expect(await page.textContent('main')).toContain('MCP SDK journey');
    const keep = new Set([
      'Read your invoices and quotes',
      'Create, update and delete invoices',
      'Read your client records',
    ]);
    for (const box of await page.getByRole('checkbox').all()) {
      const label = (await page
        .locator(`label[for="${await box.getAttribute('id')}"]`)
        .textContent())!.trim();
      if (!keep.has(label)) await box.uncheck();
    }
    await page.getByRole('button', { name: 'Allow' }).click();
    const query = await returned;
    await first.finishAuth(query.get('code')!);
    expect(state.tokens?.scope).toBe('fakture:read fakture:write clients:read');

    // 3. Connected: only the allowed tools are listed; read and write tools work.
    const client = new Client({ name: 'journey', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(tools).toEqual([
      'create_invoice',
      'delete_invoice',
      'get_client',
      'get_invoice',
      'list_clients',
      'list_invoices',
      'update_invoice',
    ]);
    const clients = (await client.callTool({ name: 'list_clients', arguments: {} })).structuredContent as {
      total: number;
    };
    expect(clients.total).toBe(3);
    const created = await client.callTool({
      name: 'create_invoice',
      arguments: { client_id: 1, lines: [{ product_id: 1, quantity: 2 }] },
    });
    expect(created.structuredContent).toMatchObject({ status: 'draft', total: 22800 });

    // 4. Outside the granted scopes: 403 insufficient_scope, nothing changed. The SDK answers it by refreshing and
    // sending the call once more (it asks the user again only when the refresh fails): the refresh keeps the grant's
    // scopes, so the second try is refused too, and the SDK gives up instead of looping.
    const before = await snapshot(app);
    const rotatedFrom = state.tokens!.refresh_token;
    const asked = state.authorizationUrls.length;
    await expect(client.callTool({ name: 'update_company', arguments: { city: 'Paris' } })).rejects.toThrow(
      /403 after trying upscoping/,
    );
    expect(await snapshot(app)).toBe(before);
    expect(state.tokens!.refresh_token).not.toBe(rotatedFrom);
    expect(state.tokens!.scope).toBe('fakture:read fakture:write clients:read');
    expect(state.authorizationUrls).toHaveLength(asked);

    // 5. The access token expires (its default hour, plus the verifier's 5 s of skew): the SDK refreshes and carries
    // on. (Without the clock moved, the same call keeps the tokens it has.)
    const refreshBefore = state.tokens!.refresh_token;
    const accessBefore = state.tokens!.access_token;
    clock.advance(HOUR + 6 * SECOND);
    const invoices = (await client.callTool({ name: 'list_invoices', arguments: {} })).structuredContent as {
      total: number;
    };
    expect(invoices.total).toBe(4);
    expect(state.tokens!.refresh_token).not.toBe(refreshBefore);
    expect(state.tokens!.access_token).not.toBe(accessBefore);

    // 6. The user revokes the app on the "Connected apps" page: the next call fails and no refresh helps.
    await page.goto(`${app.baseUrl}/account/connected-apps`);
    await signIn(page);
    const section = page.getByRole('region', { name: 'MCP SDK journey' });
    expect(await section.textContent()).toContain('Read your invoices and quotes');
    await section.getByRole('button', { name: 'Revoke access' }).click();
    await page.getByText('Access revoked').waitFor();
    await page.close();
    // The SDK's refresh is refused (invalid_grant) and the call fails; the last access token is dead too.
    await expect(client.callTool({ name: 'list_clients', arguments: {} })).rejects.toThrow(
      /revoked|Unauthorized/,
    );
    const direct = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${state.tokens?.access_token ?? ''}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(direct.status).toBe(401);
    await client.close();
  }, 60_000);
});
