// examples/upstream-oidc end to end, as its users meet it: a person with an account at the upstream OpenID provider
// (oidc-provider, a real process) and none here connects the official MCP SDK client, signs in upstream in Chromium,
// consents, and calls the tool that reads the provider's user info with their own upstream token; then our refresh
// and the upstream refresh (both tokens short-lived), and revocation (RFC 7009), which revokes upstream too. On
// SQLite and on PostgreSQL. The example runs as written, importing the package by name (dist/, built by the setup).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { startCallbackServer, type CallbackServer } from '../helpers/live-server';
import { memoryProvider } from '../helpers/mcp-client-provider';
import { runExample } from '../helpers/example-process';
import { reservePort } from '../helpers/ports';
import { createTestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';
import { startOidcUpstream, UPSTREAM_ACCOUNTS } from '../helpers/upstream-oidc';
import { waitUntil } from '../helpers/wait';

const ROOT = join(__dirname, '../..');
const ANA = UPSTREAM_ACCOUNTS[0]!;
/** Upstream access tokens live 62 s; the library refreshes one a minute before it expires: about 2 s after issue. */
const UPSTREAM_TTL = 62;
/** Our access tokens live 1 s, and the bearer check allows 5 s of skew: refreshed by the SDK about 6 s after issue. */
const OUR_TTL = 1;

const describeInBrowser = browserAvailable ? describe : describe.skip;

async function journey(browser: Browser, callback: CallbackServer, store: Record<string, string>) {
  const { port, release } = await reservePort();
  const issuer = `http://127.0.0.1:${port}`;
  const upstream = await startOidcUpstream({
    redirectUris: [`${issuer}/v1/oauth/upstream/callback`],
    accessTokenTtl: UPSTREAM_TTL,
  });
  await release();
  const server = await runExample(ROOT, 'examples/upstream-oidc/server.mjs', {
    PORT: String(port),
    HOST: '127.0.0.1',
    ISSUER: issuer,
    UPSTREAM_OIDC_ISSUER: upstream.issuer,
    UPSTREAM_CLIENT_ID: upstream.clientId,
    UPSTREAM_CLIENT_SECRET: upstream.clientSecret,
    UPSTREAM_NAME: 'Upstream ID',
    SECRET: 'an example secret of at least thirty-two bytes',
    ACCESS_TOKEN_TTL: String(OUR_TTL),
    ...store,
  });
  const page = await browser.newPage();
  try {
    // 1. Our 401, discovery, registration; the client sends the person to our authorization endpoint.
    const mcpUrl = new URL(`${issuer}/mcp`);
    const { provider, state } = memoryProvider(callback.redirectUri);
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: 'journey', version: '1.0.0' }).connect(first)).rejects.toThrow(
      /Unauthorized/,
    );

    // 2. No account here, no password: "Continue with Upstream ID", sign in there, consent here.
    const returned = callback.nextCallback(20_000);
    await page.goto(state.authorizationUrls[0]!.href);
    expect(await page.locator('input[name="password"]').count()).toBe(0);
    await page.getByRole('link', { name: 'Continue with Upstream ID' }).click();
    await page.getByLabel('Email').fill(ANA.email);
    await page.getByLabel('Password').fill(ANA.password);
    await page.getByRole('button', { name: 'Sign in upstream' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    expect(await page.textContent('main')).toContain('Read your Upstream ID profile');
    await page.getByRole('button', { name: 'Allow' }).click();
    await first.finishAuth((await returned).get('code')!);

    // 3. The tool calls the provider's API with the person's upstream token.
    const client = new Client({ name: 'journey', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const call = async () => {
      const result = await client.callTool({ name: 'upstream_profile', arguments: {} });
      expect(result.isError).toBeFalsy();
      return JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as Record<string, unknown>;
    };
    expect(await call()).toMatchObject({ sub: 'ana', email: ANA.email });

    // 4. Both access tokens expire: the SDK refreshes ours, the library refreshes the upstream one, once.
    const before = await upstream.stats();
    const ourRefresh = state.tokens!.refresh_token;
    await new Promise((resolve) => setTimeout(resolve, (OUR_TTL + 6) * 1000));
    expect(await call()).toMatchObject({ sub: 'ana' });
    expect(state.tokens!.refresh_token).not.toBe(ourRefresh);
    expect((await upstream.stats()).tokenRequests.refresh_token).toBe(before.tokenRequests.refresh_token + 1);

    // 5. The client revokes its grant (RFC 7009): revoked upstream too, and no refresh brings it back.
    const revoked = await fetch(`${issuer}/v1/oauth/revoke`, {
      method: 'POST',
      body: new URLSearchParams({
        token: state.tokens!.refresh_token!,
        client_id: state.client!.client_id,
        client_secret: (state.client as { client_secret?: string }).client_secret ?? '',
      }),
    });
    expect(revoked.status).toBe(200);
    await waitUntil(async () => (await upstream.stats()).revocations > before.revocations);
    await expect(call()).rejects.toThrow();
    await client.close();
  } finally {
    await page.close();
    server.kill();
    await upstream.close();
  }
}

describeInBrowser('examples/upstream-oidc: an account at the upstream provider only', () => {
  let browser: Browser;
  let callback: CallbackServer;
  beforeAll(async () => {
    browser = await launchChromium();
    callback = await startCallbackServer();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await callback?.stop();
  });

  test('on SQLite: connect, sign in upstream, call the upstream API, refresh both, revoke', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'upstream-example-'));
    try {
      // SQLite, whatever the test run's environment says.
      await journey(browser, callback, { DATABASE_PATH: join(dir, 'oauth.db'), DATABASE_URL: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  describeWith('on PostgreSQL', { postgres: true }, () => {
    test('connect, sign in upstream, call the upstream API, refresh both, revoke', async () => {
      const database = await createTestDatabase();
      try {
        await journey(browser, callback, { DATABASE_URL: database.url });
      } finally {
        await database.drop();
      }
    }, 90_000);
  });
});
