// The reference app end to end with the official MCP SDK 1.x client and an OAuthClientProvider: discovery through
// the 401, registration, consent in headless Chromium, exchange, tools within the granted scopes, step-up for a tool
// outside them (the SDK refreshes first and is sent to ask; it asks for the challenge's scope, and keeps what it had),
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

    // 3. Connected: every tool is listed, those of the unticked scopes too (calling one is the step-up below); read
    // and write tools work.
    const client = new Client({ name: 'journey', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await client.connect(transport);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(['create_invoice', 'list_clients', 'update_company']));
    const clients = (await client.callTool({ name: 'list_clients', arguments: {} })).structuredContent as {
      total: number;
    };
    expect(clients.total).toBe(3);
    const created = await client.callTool({
      name: 'create_invoice',
      arguments: { client_id: 1, lines: [{ product_id: 1, quantity: 2 }] },
    });
    expect(created.structuredContent).toMatchObject({ status: 'draft', total: 22800 });

    // 4. Step-up. Outside the granted scopes: 403 insufficient_scope, nothing changed, and a challenge naming the
    // token's scopes with the tool's. The SDK refreshes first; the step-up window answers that refresh invalid_grant,
    // so the SDK drops its tokens and sends the user to authorize with the challenge's scope, instead of giving up
    // with "403 after trying upscoping" as it did before the window.
    const before = await snapshot(app);
    const asked = state.authorizationUrls.length;
    await expect(client.callTool({ name: 'update_company', arguments: { city: 'Paris' } })).rejects.toThrow(
      /Unauthorized/,
    );
    expect(await snapshot(app)).toBe(before);
    expect(state.authorizationUrls).toHaveLength(asked + 1);
    const stepUp = state.authorizationUrls[asked]!;
    expect(stepUp.searchParams.get('scope')!.split(' ').sort()).toEqual([
      'clients:read',
      'company:read',
      'company:write',
      'fakture:read',
      'fakture:write',
    ]);
    // The consent page shows what the app can already do, and asks only about what is new.
    const stepped = callback.nextCallback();
    await page.goto(stepUp.href);
    if (await page.getByLabel('Email').isVisible()) await signIn(page);
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    expect(await page.textContent('main')).toContain('It can already:');
    const asking: string[] = [];
    for (const box of await page.getByRole('checkbox').all())
      asking.push((await page.locator(`label[for="${await box.getAttribute('id')}"]`).textContent())!.trim());
    expect(asking.sort()).toEqual(['Read your company information', 'Update your company information']);
    await page.getByRole('button', { name: 'Allow' }).click();
    await transport.finishAuth((await stepped).get('code')!);
    expect(state.tokens!.scope!.split(' ').sort()).toEqual([
      'clients:read',
      'company:read',
      'company:write',
      'fakture:read',
      'fakture:write',
    ]);
    // The tool runs now, and what was allowed before still works.
    const updated = await client.callTool({ name: 'update_company', arguments: { city: 'Paris' } });
    expect(updated.isError).toBeFalsy();
    expect(await snapshot(app)).not.toBe(before);
    expect((await client.callTool({ name: 'list_clients', arguments: {} })).isError).toBeFalsy();

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
