// The reference app's introspection endpoint (the contract's POST /v1/oauth/introspect): confidential clients only,
// and RESOURCE_SERVER_CLIENTS names those that may see every access token of /mcp.
import { hashSecret } from '../../lib/crypto/secrets';
import { readConfig } from '../../example-app/config';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app';

const GATEWAY_SECRET = 'gateway-secret-0123456789abcdefghijkl';
let app: RunningExampleApp;

beforeAll(async () => {
  app = await startExampleApp({ RESOURCE_SERVER_CLIENTS: 'billing-gateway, other-gateway' });
  // The operator's gateway client, with an id chosen before the app started.
  await app.store.registerClient({
    clientId: 'billing-gateway',
    clientSecretHash: hashSecret(GATEWAY_SECRET),
    clientName: 'Billing gateway',
    redirectUris: [],
    grantTypes: [],
    responseTypes: [],
    tokenEndpointAuthMethod: 'client_secret_basic',
    scope: '',
    metadata: {},
    issuedAt: Date.now(),
  });
});
afterAll(() => app.stop());

const introspect = (token: string, authorization?: string) =>
  fetch(`${app.baseUrl}/v1/oauth/introspect`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      ...(authorization ? { Authorization: authorization } : {}),
    },
    body: new URLSearchParams({ token }),
  });
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

test('the metadata advertises it', async () => {
  const metadata = (await (
    await fetch(`${app.baseUrl}/.well-known/oauth-authorization-server`)
  ).json()) as Record<string, string>;
  expect(metadata.introspection_endpoint).toBe(`${app.baseUrl}/v1/oauth/introspect`);
});

test('a gateway named in RESOURCE_SERVER_CLIENTS sees any access token of /mcp', async () => {
  const token = await app.mintToken(['fakture:read']);
  const res = await introspect(token, basic('billing-gateway', GATEWAY_SECRET));
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(await res.json()).toMatchObject({ active: true, scope: 'fakture:read', aud: `${app.baseUrl}/mcp` });
});

test('a confidential client not named there sees only its own tokens; no credentials is 401', async () => {
  const registered = (await (
    await fetch(`${app.baseUrl}/v1/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Curious', redirect_uris: ['https://curious.example/cb'] }),
    })
  ).json()) as { client_id: string; client_secret: string };
  const token = await app.mintToken(['fakture:read']);
  const res = await introspect(token, basic(registered.client_id, registered.client_secret));
  expect(await res.json()).toEqual({ active: false });
  const anonymous = await introspect(token);
  expect(anonymous.status).toBe(401);
  expect(((await anonymous.json()) as { error: string }).error).toBe('invalid_client');
});

test('RESOURCE_SERVER_CLIENTS is read as a comma-separated list', () => {
  expect(readConfig({ RESOURCE_SERVER_CLIENTS: ' a, b ,,c ' }).resourceServerClients).toEqual([
    'a',
    'b',
    'c',
  ]);
  expect(readConfig({}).resourceServerClients).toEqual([]);
});
