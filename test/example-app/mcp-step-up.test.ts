// Step-up with the official MCP client of each major against the reference app, consent in headless Chromium: the
// person allows invoices only; the model calls a company tool, which is listed but refused with 403
// insufficient_scope; the client asks again (SDK 1.x for exactly the challenge's scope, after the step-up window sent
// its refresh to authorize; SDK 2.x for the union it computes itself, SEP-2350); the consent page shows what is
// already allowed and asks only about the company scopes; the tool then runs, nothing allowed before is lost, and the
// person's "Connected apps" shows one app.
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  type OAuthClientProvider as ProviderV2,
} from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { APP_USER, snapshot, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { startCallbackServer, type CallbackServer } from '../helpers/live-server';
import { memoryProvider } from '../helpers/mcp-client-provider';

const describeInBrowser = browserAvailable ? describe : describe.skip;

/** What the test asks of either major's client and transport. */
interface Session {
  /** Redeems the code of the callback's query (SDK 2.x also checks its `iss`, RFC 9207). */
  finishAuth(query: URLSearchParams): Promise<void>;
  connect(): Promise<void>;
  listTools(): Promise<string[]>;
  callTool(name: string, args?: Record<string, unknown>): Promise<{ isError?: boolean }>;
  close(): Promise<void>;
}

function session(
  major: '1.x' | '2.x',
  url: URL,
  provider: ReturnType<typeof memoryProvider>['provider'],
): Session {
  if (major === '1.x') {
    const client = new ClientV1({ name: 'step-up', version: '1.0.0' });
    const transport = new TransportV1(url, { authProvider: provider });
    return {
      finishAuth: (query) => transport.finishAuth(query.get('code')!),
      connect: () => client.connect(transport),
      listTools: async () => (await client.listTools()).tools.map((tool) => tool.name),
      callTool: (name, args = {}) =>
        client.callTool({ name, arguments: args }) as Promise<{ isError?: boolean }>,
      close: () => client.close(),
    };
  }
  const client = new ClientV2({ name: 'step-up', version: '1.0.0' });
  const transport = new TransportV2(url, { authProvider: provider as unknown as ProviderV2 });
  return {
    finishAuth: (query) => transport.finishAuth(query),
    connect: () => client.connect(transport),
    listTools: async () => (await client.listTools()).tools.map((tool) => tool.name),
    callTool: (name, args = {}) =>
      client.callTool({ name, arguments: args }) as Promise<{ isError?: boolean }>,
    close: () => client.close(),
  };
}

/** The labels of the consent page's checkboxes, sorted. */
async function asked(page: Page): Promise<string[]> {
  const labels: string[] = [];
  for (const box of await page.getByRole('checkbox').all())
    labels.push((await page.locator(`label[for="${await box.getAttribute('id')}"]`).textContent())!.trim());
  return labels.sort();
}

async function signInIfAsked(page: Page) {
  if (!(await page.getByLabel('Email').isVisible())) return;
  await page.getByLabel('Email').fill(APP_USER.email);
  await page.getByLabel('Password').fill(APP_USER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

const INVOICES = ['Create, update and delete invoices', 'Read your invoices and quotes'];
const UNION = ['company:read', 'company:write', 'fakture:read', 'fakture:write'];

describeInBrowser('step-up with the official MCP client of each major', () => {
  let browser: Browser;
  let app: RunningExampleApp;
  let callback: CallbackServer;

  beforeAll(async () => {
    browser = await launchChromium();
    app = await startExampleApp();
    callback = await startCallbackServer();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await callback?.stop();
  });

  test.each(['1.x', '2.x'] as const)(
    'SDK %s: a refused tool leads to one consent for what is new, and the tool runs with all of it',
    async (major) => {
      const mcpUrl = new URL(`${app.baseUrl}/mcp`);
      const { provider, state } = memoryProvider(callback.redirectUri, {
        clientMetadata: {
          client_name: `Step-up ${major}`,
          redirect_uris: [callback.redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        },
      });
      const page = await browser.newPage();
      let current = session(major, mcpUrl, provider);
      try {
        // 1. The first connection is sent to authorize; the person allows the invoice scopes only.
        await expect(current.connect()).rejects.toThrow(/Unauthorized/);
        const first = callback.nextCallback();
        await page.goto(state.authorizationUrls[0]!.href);
        await signInIfAsked(page);
        await page.getByRole('button', { name: 'Allow' }).waitFor();
        for (const box of await page.getByRole('checkbox').all()) {
          const label = await page.locator(`label[for="${await box.getAttribute('id')}"]`).textContent();
          if (!INVOICES.includes(label!.trim())) await box.uncheck();
        }
        await page.getByRole('button', { name: 'Allow' }).click();
        await current.finishAuth(await first);
        expect(state.tokens!.scope!.split(' ').sort()).toEqual(['fakture:read', 'fakture:write']);

        // 2. Connected: the company tool is listed, though its scopes were unticked, and calling it is refused with
        // the challenge; the client goes to ask the person, and nothing changed.
        current = session(major, mcpUrl, provider);
        await current.connect();
        expect(await current.listTools()).toEqual(
          expect.arrayContaining(['list_invoices', 'update_company']),
        );
        const before = await snapshot(app);
        const sent = state.authorizationUrls.length;
        await expect(current.callTool('update_company', { city: `Split (${major})` })).rejects.toThrow(
          /Unauthorized/,
        );
        expect(await snapshot(app)).toBe(before);
        expect(state.authorizationUrls).toHaveLength(sent + 1);
        const stepUp = state.authorizationUrls[sent]!;
        expect(stepUp.searchParams.get('scope')!.split(' ').sort()).toEqual(UNION);

        // 3. The consent page shows what is already allowed, and asks only about the company scopes.
        const second = callback.nextCallback();
        await page.goto(stepUp.href);
        await signInIfAsked(page);
        await page.getByRole('button', { name: 'Allow' }).waitFor();
        const allowedBefore = await page.locator('ul.scopes.allowed').textContent();
        for (const label of INVOICES) expect(allowedBefore).toContain(label);
        expect(await asked(page)).toEqual([
          'Read your company information',
          'Update your company information',
        ]);
        await page.getByRole('button', { name: 'Allow' }).click();
        await current.finishAuth(await second);
        expect(state.tokens!.scope!.split(' ').sort()).toEqual(UNION);

        // 4. The tool runs, and what was allowed before still works.
        expect((await current.callTool('update_company', { city: `Split (${major})` })).isError).toBeFalsy();
        expect(await snapshot(app)).not.toBe(before);
        expect((await current.callTool('list_invoices')).isError).toBeFalsy();

        // 5. One app in "Connected apps", with the union.
        await page.goto(`${app.baseUrl}/account/connected-apps`);
        await signInIfAsked(page);
        const apps = page.getByRole('region', { name: `Step-up ${major}` });
        expect(await apps.count()).toBe(1);
        expect(await apps.textContent()).toContain('Update your company information');
        expect(await apps.textContent()).toContain('Read your invoices and quotes');
      } finally {
        await current.close().catch(() => undefined);
        await page.close();
      }
    },
    60_000,
  );
});
