// The reference app's Prometheus metrics (METRICS_PORT): scraped after real traffic, on SQLite and PostgreSQL; served
// on loopback only, never on the public port.
import { authorizeOn } from '../helpers/http-browser';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';
import { readConfig } from '../../example-app/config';
import { routeNamer } from '../../example-app/metrics';
import { DEFAULT_PATHS } from '../../lib';

/** The value of one sample in a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1]!, pair[2]!]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

function describeMetrics(
  name: string,
  place: { env(): Promise<Record<string, string>>; cleanUp(): Promise<unknown> },
) {
  describe(`metrics (${name})`, () => {
    let app: RunningExampleApp;
    beforeEach(async () => {
      app = await startExampleApp({ METRICS_PORT: '0', RATE_LIMITS: 'on', ...(await place.env()) });
    });
    afterEach(async () => {
      await app.stop();
      await place.cleanUp();
    });
    const scrape = async () => (await fetch(app.metrics!.url)).text();

    test('served on loopback at /metrics, not on the public port', async () => {
      expect(new URL(app.metrics!.url).hostname).toBe('127.0.0.1');
      expect((await fetch(`${app.baseUrl}/metrics`)).status).toBe(404);
      const res = await fetch(app.metrics!.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect((await fetch(app.metrics!.url.replace('/metrics', '/other'))).status).toBe(404);
      expect(sample(await res.text(), 'process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(0);
    });

    test('requests, tokens issued and refused, active grants and the store’s latency follow real traffic', async () => {
      const client = (await (
        await fetch(`${app.baseUrl}/v1/oauth/register`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ client_name: 'Metered', redirect_uris: ['https://metered.example/cb'] }),
        })
      ).json()) as { client_id: string; client_secret: string };
      const { code, verifier, redirectUri } = await authorizeOn(
        app.baseUrl,
        { client_id: client.client_id, redirect_uris: ['https://metered.example/cb'] },
        APP_USER,
        `${app.baseUrl}/mcp`,
      );
      const token = (body: Record<string, string>) =>
        fetch(`${app.baseUrl}/v1/oauth/token`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/x-www-form-urlencoded',
            Authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
          },
          body: new URLSearchParams(body),
        });
      const first = (await (
        await token({
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          redirect_uri: redirectUri,
        })
      ).json()) as { access_token: string; refresh_token: string };
      await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
      await token({ grant_type: 'refresh_token', refresh_token: 'not-a-token' });
      await fetch(`${app.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${first.access_token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      let text = await scrape();
      expect(sample(text, 'http_requests_total', { route: 'token', method: 'POST', status: '200' })).toBe(2);
      expect(sample(text, 'http_requests_total', { route: 'token', method: 'POST', status: '400' })).toBe(1);
      expect(sample(text, 'http_requests_total', { route: 'mcp', method: 'POST', status: '200' })).toBe(1);
      expect(
        sample(text, 'http_request_duration_seconds_count', { route: 'registration', method: 'POST' }),
      ).toBe(1);
      expect(sample(text, 'oauth_tokens_issued_total', { grant_type: 'authorization_code' })).toBe(1);
      expect(sample(text, 'oauth_tokens_issued_total', { grant_type: 'refresh_token' })).toBe(1);
      expect(sample(text, 'oauth_token_failures_total', { reason: 'invalid_grant' })).toBe(1);
      expect(sample(text, 'oauth_active_grants')).toBe(1);
      expect(
        sample(text, 'oauth_store_operation_duration_seconds_count', {
          operation: 'consumeAuthorizationCode',
          outcome: 'ok',
        }),
      ).toBe(1);
      await fetch(`${app.baseUrl}/v1/oauth/revoke`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: first.access_token }),
      });
      text = await scrape();
      expect(sample(text, 'oauth_active_grants')).toBe(0);
      expect(sample(text, 'oauth_grants_revoked_total', { cause: 'client' })).toBe(1);
    });

    test('rate-limit hits are counted by limit', async () => {
      for (let i = 0; i < 21; i += 1) {
        await fetch(`${app.baseUrl}/v1/oauth/register`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ redirect_uris: ['https://many.example/cb'] }),
        });
      }
      expect(sample(await scrape(), 'oauth_rate_limit_hits_total', { limit: 'register' })).toBe(1);
    });
  });
}

describeMetrics('SQLite', { env: async () => ({}), cleanUp: async () => undefined });
let database: TestDatabase | undefined;
describeWith('metrics on PostgreSQL', { postgres: true }, () => {
  describeMetrics('PostgreSQL', {
    env: async () => {
      database = await createTestDatabase();
      return { DATABASE_URL: database.url };
    },
    cleanUp: async () => database?.drop(),
  });
});

test('without METRICS_PORT there are no metrics; METRICS_PORT is checked and never the public port', async () => {
  const app = await startExampleApp();
  try {
    expect(app.metrics).toBeUndefined();
  } finally {
    await app.stop();
  }
  expect(readConfig({ METRICS_PORT: '9464' })).toMatchObject({ metricsPort: 9464, metricsHost: '127.0.0.1' });
  expect(() => readConfig({ METRICS_PORT: 'nine' })).toThrow(/METRICS_PORT must be a port number/);
  expect(() => readConfig({ PORT: '3000', METRICS_PORT: '3000' })).toThrow(/must differ from PORT/);
});

test.each([
  ['/v1/oauth/token', 'token'],
  ['/v1/oauth/introspect', 'introspection'],
  ['/v1/oauth/authorize/sign-in', 'authorization_form'],
  ['/mcp', 'mcp'],
  ['/.well-known/oauth-authorization-server', 'metadata'],
  ['/account/connected-apps', 'account'],
  ['/v1/oauth/token/../../etc', 'other'],
  ['/anything/else', 'other'],
])('the route label of %s is %s (a fixed set: no label per path)', (path, route) => {
  expect(routeNamer(DEFAULT_PATHS)(path)).toBe(route);
});
