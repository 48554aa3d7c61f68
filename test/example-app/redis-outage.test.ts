// Redis, which holds the shared rate limits, lost while the app runs: the OAuth endpoints keep answering (the limits
// fail open, said once in the log), /readyz says so, and the limits count again once Redis is back.
import request from 'supertest';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { describeWith, REDIS_URL } from '../helpers/services';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitUntil } from '../helpers/wait';

describeWith('Redis lost while running', { redis: true }, () => {
  let proxy: TcpProxy;
  let app: RunningExampleApp;
  let warnings: jest.SpyInstance;
  beforeAll(async () => {
    const target = new URL(REDIS_URL!);
    proxy = await startTcpProxy(Number(target.port || 6379), target.hostname);
    warnings = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    app = await startExampleApp({
      RATE_LIMITS: 'on',
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      RATE_LIMIT_PREFIX: `outage-${Date.now()}:`,
    });
  });
  afterAll(async () => {
    await app?.stop().catch(() => undefined);
    await proxy?.stop();
    warnings?.mockRestore();
  });

  const register = () =>
    request(app.baseUrl)
      .post('/v1/oauth/register')
      .send({ redirect_uris: ['https://client.example/cb'] });

  test('the OAuth endpoints keep answering without limits, and recover them when Redis is back', async () => {
    const before = await register();
    expect(before.status).toBe(201);
    expect(before.headers.ratelimit).toMatch(/"register"; r=19/);

    await proxy.cut();
    const during = await register();
    expect(during.status).toBe(201); // fail open
    expect(during.headers.ratelimit).toBeUndefined();
    expect((await request(app.baseUrl).get('/readyz')).body.checks.redis).toBe('unavailable');
    const said = warnings.mock.calls.map((call) => String(call[0]));
    expect(said.some((line) => /rate-limit store failed/.test(line))).toBe(true);

    await proxy.restore();
    await waitUntil(
      async () => (await request(app.baseUrl).get('/readyz')).status === 200,
      10_000,
      'Redis back for the app (/readyz 200)',
    );
    const after = await register();
    expect(after.status).toBe(201);
    expect(after.headers.ratelimit).toMatch(/"register"; r=18/);
  }, 30_000);
});
