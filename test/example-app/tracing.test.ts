// The reference app traced, as deployed: started as a process with OTEL_EXPORTER_OTLP_ENDPOINT naming a loopback
// OTLP/HTTP receiver (this test's own server, speaking the JSON encoding the exporter sends), a client's token
// request arrives there as an `oauth token` span of the app's service, with its grant type and client, and none of
// the request's secrets.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { startInstance } from '../helpers/app-process';
import { freePort } from '../helpers/ports';
import { waitUntil } from '../helpers/wait';

interface OtlpSpan {
  name: string;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}

let receiver: Server;
const bodies: string[] = [];
let app: ChildProcess | undefined;
let dir: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(body);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  dir = mkdtempSync(join(tmpdir(), 'traced-app-'));
});
afterAll(async () => {
  if (app) await new Promise((resolve) => (app!.once('exit', resolve), app!.kill('SIGTERM')));
  await new Promise((resolve) => receiver.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const spansOf = (body: string): OtlpSpan[] =>
  (
    JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }
  ).resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));

test('a token request reaches the OTLP receiver as a span, with bounded attributes only', async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  app = await startInstance(port, {
    BASE_URL: base,
    // SQLite, whatever the test run's environment names.
    DATABASE_URL: '',
    REDIS_URL: '',
    DATABASE_PATH: join(dir, 'app.db'),
    RATE_LIMITS: 'off',
    LOG_LEVEL: 'silent',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    OTEL_SERVICE_NAME: 'traced-business-app',
    // Send each batch at once rather than every 5 s.
    OTEL_BSP_SCHEDULE_DELAY: '50',
  });
  const registered = (await (
    await fetch(`${base}/v1/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Traced CLI',
        grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
        token_endpoint_auth_method: 'none',
      }),
    })
  ).json()) as { client_id: string };
  const refused = await fetch(`${base}/v1/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: 'a-device-code-nobody-was-given',
      client_id: registered.client_id,
    }),
  });
  expect(refused.status).toBe(400);
  await waitUntil(
    () => bodies.some((body) => spansOf(body).some((span) => span.name === 'oauth token')),
    10_000,
  );
  const spans = bodies.flatMap(spansOf);
  const token = spans.find((span) => span.name === 'oauth token')!;
  const attributes = Object.fromEntries(
    token.attributes.map(({ key, value }) => [key, value.stringValue ?? Number(value.intValue)]),
  );
  expect(attributes).toMatchObject({
    'oauth.endpoint': 'token',
    'oauth.grant_type': 'urn:ietf:params:oauth:grant-type:device_code',
    'oauth.client_id': registered.client_id,
    'oauth.error': 'invalid_grant',
    'http.response.status_code': 400,
  });
  expect(spans.map((span) => span.name)).toContain('oauth registration');
  expect(bodies.join('')).toContain('traced-business-app');
  expect(bodies.join('')).not.toContain('a-device-code-nobody-was-given');
}, 30_000);
