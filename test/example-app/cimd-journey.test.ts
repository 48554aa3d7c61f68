// The reference app with clients that identify themselves by a Client ID Metadata Document, driven by the official
// MCP SDK client (its OAuthClientProvider's clientMetadataUrl) and a user in headless Chromium: documents shaped
// like Claude Code's (public, portless loopback redirect), VS Code's (fixed loopback port) and ChatGPT's
// (private_key_jwt with a jwks_uri, RS256). Consent, token, tool call, refresh, and the connected-apps page.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Browser } from 'playwright-core';
import { browserAvailable, launchChromium } from '../helpers/browser';
import {
  chatGptDocument,
  claudeCodeDocument,
  vsCodeDocument,
  type PublishedDocument,
} from '../helpers/client-documents';
import { resolveToLoopback, startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { startCallbackServer, type CallbackServer } from '../helpers/live-server';
import { memoryProvider } from '../helpers/mcp-client-provider';
import { testCa } from '../helpers/test-ca';

const describeInBrowser = browserAvailable ? describe : describe.skip;

interface Shape {
  name: string;
  host: string;
  /** Publishes the client's document for a test whose loopback callback is `callback`; returns how it signs in. */
  publish(
    documents: DocumentServer,
    callback: URL,
  ): { published: PublishedDocument; redirectUrl: string; overrides?: Partial<OAuthClientProvider> };
}

const SHAPES: Shape[] = [
  {
    name: 'Claude Code',
    host: 'claude.ai.test',
    // Registered without a port; used with the callback server's (ephemeral) one.
    publish: (documents, callback) => ({
      published: claudeCodeDocument(documents, { path: '/journey/claude-code' }),
      redirectUrl: `http://127.0.0.1:${callback.port}/callback`,
    }),
  },
  {
    name: 'Visual Studio Code',
    host: 'vscode.dev.test',
    // Registered on port 33418; any loopback port matches (RFC 8252 §7.3).
    publish: (documents, callback) => ({
      published: vsCodeDocument(documents, { path: '/journey/vscode.json' }),
      redirectUrl: `http://127.0.0.1:${callback.port}/`,
    }),
  },
  {
    name: 'ChatGPT',
    host: 'chatgpt.com.test',
    publish: (documents, callback) => {
      const redirectUrl = `${callback.origin}/callback`;
      const chatgpt = chatGptDocument(documents, {
        path: '/journey/chatgpt.json',
        redirectUris: [redirectUrl],
      });
      return {
        published: chatgpt,
        redirectUrl,
        // The SDK's hook for client authentication: a fresh assertion (aud = the issuer) on every token request.
        // (The SDK's own helper loads jose, an ES module that jest's CommonJS runtime cannot load.)
        overrides: {
          addClientAuthentication: (_headers, params, _url, metadata) => {
            params.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
            params.set('client_assertion', chatgpt.assertion(metadata!.issuer));
          },
        },
      };
    },
  },
];

describeInBrowser('clients identified by a metadata document, through the official MCP client', () => {
  let browser: Browser;
  let app: RunningExampleApp;
  let callback: CallbackServer;
  let documents: DocumentServer;

  beforeAll(async () => {
    browser = await launchChromium();
    documents = await startDocumentServer();
    app = await startExampleApp(
      { CIMD_ALLOW_LOOPBACK: '1' },
      { clientMetadataDocuments: { ca: testCa().caPem, resolveHost: resolveToLoopback } },
    );
    callback = await startCallbackServer();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await callback?.stop();
    await documents?.stop();
  });

  test.each(SHAPES)('$name: consent, token, tool call, refresh, connected apps', async (shape) => {
    const { published, redirectUrl, overrides } = shape.publish(documents, new URL(callback.redirectUri));
    const { clientId } = published;
    const localhostOnly = (published.document.redirect_uris as string[]).every((uri) =>
      uri.startsWith('http://'),
    );
    const { provider, state } = memoryProvider(redirectUrl, {
      clientMetadataUrl: clientId,
      clientMetadata: { client_name: shape.name, redirect_uris: [redirectUrl] },
      ...overrides,
    });

    const mcpUrl = new URL(`${app.baseUrl}/mcp`);
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: 'cimd', version: '1.0.0' }).connect(first)).rejects.toThrow(
      /Unauthorized/,
    );
    // The SDK saw client_id_metadata_document_supported and used the URL instead of registering.
    expect(state.client?.client_id).toBe(clientId);
    const authorizationUrl = state.authorizationUrls[0]!;
    expect(authorizationUrl.searchParams.get('client_id')).toBe(clientId);

    const page = await browser.newPage();
    const returned = callback.nextCallback();
    await page.goto(authorizationUrl.href);
    await page.getByLabel('Email').fill(APP_USER.email);
    await page.getByLabel('Password').fill(APP_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const consent = (await page.textContent('main'))!;
    // Headed by the host that published the document; the name it gives itself comes second.
    expect(consent).toContain(`${shape.host} wants access`);
    expect(consent).toContain(`Published by ${shape.host}`);
    expect(consent).toContain(`It calls itself ${shape.name}`);
    // The warning comes exactly when every redirect of the document stays on this computer.
    expect(consent.includes('your own computer')).toBe(localhostOnly);
    await page.getByRole('button', { name: 'Allow' }).click();
    const query = await returned;
    await first.finishAuth(query.get('code')!);
    expect(state.tokens?.refresh_token).toBeTruthy();

    const client = new Client({ name: 'cimd', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    expect((await client.callTool({ name: 'list_clients', arguments: {} })).isError).toBeFalsy();
    // The access token is no longer accepted (as once it expires): the SDK meets the 401 and refreshes, with a
    // fresh assertion for ChatGPT.
    const before = state.tokens!.refresh_token;
    state.tokens = { ...state.tokens!, access_token: 'no-longer-valid' };
    const after = new Client({ name: 'cimd', version: '1.0.0' });
    await after.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    expect((await after.callTool({ name: 'list_clients', arguments: {} })).isError).toBeFalsy();
    expect(state.tokens!.refresh_token).not.toBe(before);
    await client.close();
    await after.close();

    // Connected apps lists the client by the host that published it, then by the name it gives itself.
    await page.goto(`${app.baseUrl}/account/connected-apps`);
    await page.getByLabel('Email').fill(APP_USER.email);
    await page.getByLabel('Password').fill(APP_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const section = page.getByRole('region', { name: shape.host });
    expect(await section.textContent()).toContain(`Calls itself ${shape.name}`);
    await page.close();
  });
});
