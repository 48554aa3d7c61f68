// The reference app with clients that identify themselves by a Client ID Metadata Document, driven by the official
// MCP SDK client (its OAuthClientProvider's clientMetadataUrl) and a user in headless Chromium: documents shaped
// like Claude Code's (public, portless loopback redirect), VS Code's (fixed loopback port) and ChatGPT's
// (private_key_jwt with a jwks_uri, RS256). Consent, token, tool call, refresh, and the connected-apps page.
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser } from 'playwright-core';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { resolveToLoopback, startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { startCallbackServer, type CallbackServer } from '../helpers/live-server';
import { testCa } from '../helpers/test-ca';

const describeInBrowser = browserAvailable ? describe : describe.skip;

/**
 * The SDK's addClientAuthentication hook, signing a private_key_jwt assertion as the SDK's own helper does (that
 * helper loads jose, an ES module jest's CommonJS runtime cannot load): aud is the issuer, a fresh jti each time.
 */
function privateKeyJwt(
  clientId: string,
  privateKey: KeyObject,
): OAuthClientProvider['addClientAuthentication'] {
  return (_headers, params, _url, metadata) => {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: clientId,
      sub: clientId,
      aud: metadata?.issuer,
      iat: now,
      exp: now + 300,
      jti: randomUUID(),
    };
    params.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    params.set('client_assertion', jwt.sign(claims, privateKey, { algorithm: 'RS256' }));
  };
}

interface Shape {
  name: string;
  host: string;
  /** The document for a client at `clientId` whose loopback callback is `callback` (port included). */
  document(clientId: string, callback: URL, jwksUri: string): Record<string, unknown>;
  /** The redirect URL the client really uses (an ephemeral or fixed port on loopback). */
  redirectUrl(callback: URL): string;
  keyed?: boolean;
}

const SHAPES: Shape[] = [
  {
    name: 'Claude Code',
    host: 'claude.ai.test',
    document: (clientId) => ({
      client_id: clientId,
      client_name: 'Claude Code',
      client_uri: 'https://claude.ai',
      redirect_uris: ['http://localhost/callback', 'http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
    redirectUrl: (callback) => `http://127.0.0.1:${callback.port}/callback`,
  },
  {
    name: 'Visual Studio Code',
    host: 'vscode.dev.test',
    document: (clientId) => ({
      client_id: clientId,
      client_name: 'Visual Studio Code',
      client_uri: 'https://code.visualstudio.com',
      redirect_uris: ['http://127.0.0.1:33418/', 'https://vscode.dev/redirect'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
    redirectUrl: (callback) => `http://127.0.0.1:${callback.port}/`,
  },
  {
    name: 'ChatGPT',
    host: 'chatgpt.com.test',
    keyed: true,
    document: (clientId, callback, jwksUri) => ({
      client_id: clientId,
      client_name: 'ChatGPT',
      client_uri: 'https://chatgpt.com',
      redirect_uris: [`${callback.origin}/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'RS256',
      jwks_uri: jwksUri,
    }),
    redirectUrl: (callback) => `${callback.origin}/callback`,
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
    const callbackUrl = new URL(callback.redirectUri);
    const path = `/${shape.name.replace(/\s/g, '-').toLowerCase()}/client-metadata.json`;
    const clientId = documents.url(path, shape.host);
    const jwksUri = documents.url(`${path}.jwks`, shape.host);
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    documents.json(`${path}.jwks`, {
      keys: [{ ...publicKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256' }],
    });
    const document = shape.document(clientId, callbackUrl, jwksUri);
    documents.json(path, document, 'max-age=3600');
    const localhostOnly = (document.redirect_uris as string[]).every((uri) => uri.startsWith('http://'));

    const redirectUrl = shape.redirectUrl(callbackUrl);
    const state = {
      client: undefined as OAuthClientInformationMixed | undefined,
      tokens: undefined as OAuthTokens | undefined,
      verifier: '',
      urls: [] as URL[],
    };
    const provider: OAuthClientProvider = {
      redirectUrl,
      clientMetadataUrl: clientId,
      clientMetadata: { client_name: shape.name, redirect_uris: [redirectUrl] },
      clientInformation: () => state.client,
      saveClientInformation: (client) => void (state.client = client),
      tokens: () => state.tokens,
      saveTokens: (tokens) => void (state.tokens = tokens),
      redirectToAuthorization: (url) => void state.urls.push(url),
      saveCodeVerifier: (verifier) => void (state.verifier = verifier),
      codeVerifier: () => state.verifier,
      ...(shape.keyed
        ? {
            addClientAuthentication: privateKeyJwt(clientId, privateKey),
          }
        : {}),
    };

    const mcpUrl = new URL(`${app.baseUrl}/mcp`);
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: 'cimd', version: '1.0.0' }).connect(first)).rejects.toThrow(
      /Unauthorized/,
    );
    // The SDK saw client_id_metadata_document_supported and used the URL instead of registering.
    expect(state.client?.client_id).toBe(clientId);
    const authorizationUrl = state.urls[0]!;
    expect(authorizationUrl.searchParams.get('client_id')).toBe(clientId);

    const page = await browser.newPage();
    const returned = callback.nextCallback();
    await page.goto(authorizationUrl.href);
    await page.getByLabel('Email').fill(APP_USER.email);
    await page.getByLabel('Password').fill(APP_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const consent = (await page.textContent('main'))!;
    expect(consent).toContain(`${shape.name} wants access`);
    expect(consent).toContain(`Published by ${shape.host}`);
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

    // Connected apps lists the client by name and by the host that published it.
    await page.goto(`${app.baseUrl}/account/connected-apps`);
    await page.getByLabel('Email').fill(APP_USER.email);
    await page.getByLabel('Password').fill(APP_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const section = page.getByRole('region', { name: shape.name });
    expect(await section.textContent()).toContain(`From ${shape.host}`);
    await page.close();
  });
});
