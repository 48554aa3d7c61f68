// The whole journey in a real browser: discover, register, sign in and allow in headless Chromium, exchange,
// refresh, revoke, and the access token refused afterwards. Each step names the clause it exercises.
import type { Browser } from 'playwright-core';
import { browserAvailable, launchChromium } from '../helpers/browser';
import {
  startCallbackServer,
  startLiveServer,
  type CallbackServer,
  type LiveServer,
} from '../helpers/live-server';
import { USER } from '../helpers/oauth-app';
import { pkcePair } from '../helpers/pkce';

// Response bodies of the server under test, read as loosely as a client would.
type Json = Record<string, any>;

const describeInBrowser = browserAvailable ? describe : describe.skip;

describeInBrowser('the journey in headless Chromium', () => {
  let browser: Browser;
  let server: LiveServer;
  let callback: CallbackServer;

  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(() => browser?.close());
  beforeEach(async () => {
    server = await startLiveServer();
    callback = await startCallbackServer();
  });
  afterEach(async () => {
    await server.stop();
    await callback.stop();
  });

  async function discoverAndRegister() {
    // RFC 9728 §5.1: the 401 from the tool server says where the resource metadata is.
    const challenge = await fetch(`${server.baseUrl}/mcp`, { method: 'POST' });
    expect(challenge.status).toBe(401);
    const resourceMetadataUrl = /resource_metadata="([^"]+)"/.exec(
      challenge.headers.get('www-authenticate')!,
    )![1]!;
    const resource = (await (await fetch(resourceMetadataUrl)).json()) as {
      resource: string;
      authorization_servers: string[];
    };
    // RFC 8414 §3: the authorization server's metadata.
    const metadata = (await (
      await fetch(`${resource.authorization_servers[0]}/.well-known/oauth-authorization-server`)
    ).json()) as Json;
    expect(metadata.issuer).toBe(server.baseUrl);
    // RFC 7591 §3: dynamic registration.
    const client = (await (
      await fetch(metadata.registration_endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Journey Agent',
          redirect_uris: [callback.redirectUri],
          token_endpoint_auth_method: 'none',
        }),
      })
    ).json()) as Json;
    return { metadata, client, resource: resource.resource as string };
  }

  function authorizationUrl(metadata: Json, clientId: string, resource: string, challenge: string) {
    const url = new URL(metadata.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callback.redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'fakture:read clients:read',
      state: 'journey-state',
      resource,
    }).toString();
    return url.href;
  }

  test('discover, register, sign in, allow, exchange, refresh, revoke', async () => {
    const { metadata, client, resource } = await discoverAndRegister();
    const pkce = pkcePair();
    const page = await browser.newPage();
    const returned = callback.nextCallback();
    await page.goto(authorizationUrl(metadata, client.client_id, resource, pkce.challenge));
    await page.getByLabel('Email').fill(USER.email);
    await page.getByLabel('Password').fill(USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const consent = await page.textContent('main');
    expect(consent).toContain('Journey Agent');
    expect(consent).toContain('Read your invoices and quotes');
    expect(consent).toContain('Read your client records');
    // The redirect after the form post must survive Chromium's CSP form-action check.
    await page.getByRole('button', { name: 'Allow' }).click();
    const query = await returned;
    await page.close();
    // RFC 9207: the response names its issuer; RFC 6749 §4.1.2: state comes back untouched.
    expect(query.get('iss')).toBe(server.baseUrl);
    expect(query.get('state')).toBe('journey-state');

    // RFC 6749 §4.1.3 and RFC 7636 §4.5: the code and the verifier.
    const tokenResponse = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: query.get('code')!,
        redirect_uri: callback.redirectUri,
        code_verifier: pkce.verifier,
        client_id: client.client_id,
        resource,
      }),
    });
    expect(tokenResponse.status).toBe(200);
    const tokens = (await tokenResponse.json()) as Json;
    const callTool = (token: string) =>
      fetch(`${server.baseUrl}/mcp`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
    expect((await callTool(tokens.access_token)).status).toBe(200);

    // RFC 6749 §6: refresh, with rotation.
    const refreshed = (await (
      await fetch(metadata.token_endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: client.client_id,
        }),
      })
    ).json()) as Json;
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await callTool(refreshed.access_token)).status).toBe(200);

    // RFC 7009, as the spec shows it: JSON {"token": <refresh token>}.
    const revoked = await fetch(metadata.revocation_endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: refreshed.refresh_token }),
    });
    expect(revoked.status).toBe(200);
    const refused = await callTool(refreshed.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  test('Deny sends the browser back with error=access_denied', async () => {
    const { metadata, client, resource } = await discoverAndRegister();
    const page = await browser.newPage();
    const returned = callback.nextCallback();
    await page.goto(authorizationUrl(metadata, client.client_id, resource, pkcePair().challenge));
    await page.getByLabel('Email').fill(USER.email);
    await page.getByLabel('Password').fill(USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Deny' }).click();
    const query = await returned;
    await page.close();
    expect(query.get('error')).toBe('access_denied');
    expect(query.get('iss')).toBe(server.baseUrl);
  });

  test('clickjacking: a page on another origin cannot frame the sign-in form', async () => {
    const { metadata, client, resource } = await discoverAndRegister();
    const target = authorizationUrl(metadata, client.client_id, resource, pkcePair().challenge);
    callback.setPage(
      `<!doctype html><iframe id="victim" src="${target.replace(/&/g, '&amp;')}" width="600" height="600"></iframe>`,
    );
    const page = await browser.newPage();
    // The page's load event waits for its frame's (the sign-in form, or the error page of a refused frame).
    await page.goto(callback.pageUrl, { waitUntil: 'load' });
    const frame = (await (await page.locator('#victim').elementHandle())!.contentFrame())!;
    await frame.waitForLoadState('load');
    const framedButtons = await frame.locator('button').count();
    await page.close();
    expect(framedButtons).toBe(0);
  });
});
