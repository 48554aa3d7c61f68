// Every page of the reference app a person sees, and the way to each: the library's sign-in, consent and error pages
// through an authorization request of a registered app, the account pages through their own sign-in. Shared by the
// tests of the pages' languages, their accessibility and their pictures, so that all three see the same pages.
import type { Page } from 'playwright-core';
import { ALL_SCOPES, APP_USER, type RunningExampleApp } from './example-app';
import { grantRecord } from './fixtures';
import { pkcePair } from './pkce';

/** Where the test apps say they return to (never visited: no test gets past the consent page's buttons). */
const PAGE_CLIENT_REDIRECT = 'https://ledger.example/callback';
export const LOCAL_CLIENT_REDIRECT = 'http://127.0.0.1:9/callback';

/**
 * The pages, in the order a tour visits them; a page's variants (a refused sign-in, the consent page's warning for
 * an app that returns to localhost, the notice after a revocation) count as pages: each shows text the others do not.
 */
export const PAGE_NAMES = [
  'sign-in',
  'sign-in-refused',
  'consent',
  'consent-localhost',
  'consent-step-up',
  'device',
  'device-invalid',
  'consent-device',
  'device-done',
  'error',
  'error-return',
  'account-sign-in',
  'account-sign-in-refused',
  'connected-apps',
  'connected-apps-revoked',
  'account-error',
] as const;
export type PageName = (typeof PAGE_NAMES)[number];

/** The two test apps: one returning to a website, one to this computer (localhost). */
export interface PageClients {
  remote: string;
  local: string;
}

/** Registers an app as an MCP client does (dynamic registration), allowed every scope; returns its client_id. */
async function register(app: RunningExampleApp, name: string, redirectUri: string): Promise<string> {
  const res = await fetch(`${app.baseUrl}/v1/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: ALL_SCOPES.join(' '),
    }),
  });
  if (res.status !== 201) throw new Error(`registration: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { client_id: string }).client_id;
}

export async function registerPageClients(app: RunningExampleApp): Promise<PageClients> {
  return {
    remote: await register(app, 'Ledger Assistant', PAGE_CLIENT_REDIRECT),
    local: await register(app, 'Ledger CLI', LOCAL_CLIENT_REDIRECT),
  };
}

/** An authorization request of `clientId` for `scopes`; `overrides` replace (or, undefined, drop) parameters. */
export function authorizeUrl(
  app: RunningExampleApp,
  clientId: string,
  scopes: readonly string[],
  overrides: Record<string, string | undefined> = {},
): string {
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: PAGE_CLIENT_REDIRECT,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'pages',
    scope: scopes.join(' '),
    resource: `${app.baseUrl}/mcp`,
    ...overrides,
  };
  const query = new URLSearchParams(
    Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return `${app.baseUrl}/v1/oauth/authorize?${query}`;
}

/**
 * The consent page of a step-up: `clients.local` asks for `scopes` while the user has allowed it their first before
 * (a grant made for the visit, and ended after it, so that later pages see no more grants than they expect). It
 * shows the first scope as already allowed and asks only about the rest.
 */
export async function visitStepUp(
  app: RunningExampleApp,
  clients: PageClients,
  scopes: readonly string[],
  visit: (url: string) => Promise<void>,
): Promise<void> {
  const grant = grantRecord(Date.now(), {
    clientId: clients.local,
    userId: app.user.id,
    scopes: scopes.slice(0, 1),
    resource: `${app.baseUrl}/mcp`,
  });
  await app.store.createGrant(grant);
  try {
    await visit(authorizeUrl(app, clients.local, scopes, { redirect_uri: LOCAL_CLIENT_REDIRECT }));
  } finally {
    await app.store.revokeGrant(grant.grantId);
  }
}

/** The device grant's URN (RFC 8628 §3.4). */
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * A device authorization as a CLI with no browser starts one (RFC 8628 §3.1): a public client registered for the
 * device grant asks for `scopes`; the user code is what the person types on the device page.
 */
export async function startDeviceAuthorization(
  app: RunningExampleApp,
  scopes: readonly string[],
  name = 'Ledger CLI on a build server',
): Promise<{ clientId: string; userCode: string; deviceCode: string; verificationUri: string }> {
  const registered = await fetch(`${app.baseUrl}/v1/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      grant_types: [DEVICE_GRANT, 'refresh_token'],
      token_endpoint_auth_method: 'none',
      scope: ALL_SCOPES.join(' '),
    }),
  });
  if (registered.status !== 201)
    throw new Error(`registration: ${registered.status} ${await registered.text()}`);
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const res = await fetch(`${app.baseUrl}/v1/oauth/device_authorization`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: clientId, scope: scopes.join(' ') }),
  });
  if (res.status !== 200) throw new Error(`device authorization: ${res.status} ${await res.text()}`);
  const answer = (await res.json()) as { user_code: string; device_code: string; verification_uri: string };
  return {
    clientId,
    userCode: answer.user_code,
    deviceCode: answer.device_code,
    verificationUri: answer.verification_uri,
  };
}

/** Ends the grants a device visit made, so that later pages see no more grants than they expect. */
export async function endGrantsOf(app: RunningExampleApp, clientId: string): Promise<void> {
  for (const grant of await app.store.listActiveGrants(app.user.id))
    if (grant.clientId === clientId) await app.store.revokeGrant(grant.grantId);
}

/**
 * The two kinds of error page: an app nobody registered (nowhere safe to send the user back: "go back to the app"),
 * and a refused request of a registered app nobody vouched for (a link back, not an automatic redirect).
 */
export const errorUrls = (
  app: RunningExampleApp,
  clientId: string,
): Record<'error' | 'error-return', string> => ({
  error: authorizeUrl(app, 'not-a-registered-app', ['fakture:read']),
  'error-return': authorizeUrl(app, clientId, ['fakture:read', 'no-such:scope']),
});

/**
 * Walks a Chromium tab through every page, calling `at` on each once it is shown. The forms are filled by their
 * fields' ids and submitted by their buttons' types, whatever the page's language. `scopes` are asked for on the
 * consent page; the user must hold a grant for the connected-apps page to list an app.
 */
export async function tourPages(
  page: Page,
  app: RunningExampleApp,
  clients: PageClients,
  scopes: readonly string[],
  at: (name: PageName) => Promise<void>,
): Promise<void> {
  const signIn = async (password = APP_USER.password) => {
    await page.fill('#email', APP_USER.email);
    await page.fill('#password', password);
    await Promise.all([page.waitForNavigation(), page.click('form button[type="submit"]')]);
  };
  await page.goto(authorizeUrl(app, clients.remote, scopes));
  await at('sign-in');
  await signIn('not the password');
  await at('sign-in-refused');
  await signIn();
  await page.waitForSelector('ul.scopes');
  await at('consent');
  await page.goto(
    authorizeUrl(app, clients.local, scopes.slice(0, 1), { redirect_uri: LOCAL_CLIENT_REDIRECT }),
  );
  // The sign-in above is remembered for a while; should it not be, sign in again.
  if (await page.$('#password')) await signIn();
  await page.waitForSelector('.warning');
  await at('consent-localhost');
  await visitStepUp(app, clients, scopes, async (url) => {
    await page.goto(url);
    await page.waitForSelector('ul.scopes.allowed');
    await at('consent-step-up');
  });
  // The device flow (RFC 8628): the code page, a wrong code, the consent page saying a device asks, and its end.
  const device = await startDeviceAuthorization(app, scopes);
  await page.goto(device.verificationUri);
  await at('device');
  await page.fill('#user_code', 'BCDF-GHJK');
  await Promise.all([page.waitForNavigation(), page.click('form button[type="submit"]')]);
  await at('device-invalid');
  await page.fill('#user_code', device.userCode);
  await Promise.all([page.waitForNavigation(), page.click('form button[type="submit"]')]);
  if (await page.$('#password')) await signIn();
  await page.waitForSelector('ul.scopes');
  await at('consent-device');
  await Promise.all([page.waitForNavigation(), page.click('button[value="allow"]')]);
  await at('device-done');
  await endGrantsOf(app, device.clientId);
  const errors = errorUrls(app, clients.remote);
  await page.goto(errors.error);
  await at('error');
  await page.goto(errors['error-return']);
  await at('error-return');
  await page.goto(`${app.baseUrl}/account/sign-in`);
  await at('account-sign-in');
  await signIn('not the password');
  await at('account-sign-in-refused');
  await signIn();
  await page.waitForSelector('section.app');
  await at('connected-apps');
  // The notice a revocation leads to (the page shows it whatever was revoked).
  await page.goto(`${app.baseUrl}/account/connected-apps?revoked=1`);
  await at('connected-apps-revoked');
  // A revoke of a grant that is not the user's: the account pages' error page (404).
  await page.evaluate(`document.querySelector('section.app input[name="grant_id"]').value = 'not-a-grant'`);
  await Promise.all([page.waitForNavigation(), page.click('section.app button[type="submit"]')]);
  await at('account-error');
}
