// /healthz and /readyz for load balancers: alive while the process runs, ready while the database (and Redis, when
// configured) answers; both without credentials and whatever the Host (probes use the instance's own address).
import request from 'supertest';
import { startExampleApp } from '../helpers/example-app';
import { describeWith, REDIS_URL } from '../helpers/services';

describe('health endpoints', () => {
  test('alive and ready on SQLite; not ready once the database is gone, still alive', async () => {
    const app = await startExampleApp();
    try {
      expect((await request(app.baseUrl).get('/healthz').set('Host', '10.0.0.5:3000')).body).toEqual({
        status: 'ok',
      });
      const ready = await request(app.baseUrl).get('/readyz').set('Host', '10.0.0.5:3000');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok' } });
      await app.close(); // the database connection closes; the HTTP server keeps serving
      const gone = await request(app.baseUrl).get('/readyz');
      expect(gone.status).toBe(503);
      expect(gone.body).toEqual({ status: 'unavailable', checks: { database: 'unavailable' } });
      expect(gone.headers['cache-control']).toBe('no-store');
      expect((await request(app.baseUrl).get('/healthz')).status).toBe(200);
    } finally {
      await app.stop().catch(() => undefined);
    }
  });
});

describeWith('health endpoints with Redis', { redis: true }, () => {
  test('ready names Redis when the rate limits live there', async () => {
    const app = await startExampleApp({
      RATE_LIMITS: 'on',
      REDIS_URL: REDIS_URL!,
      RATE_LIMIT_PREFIX: 'health-test:',
    });
    try {
      const ready = await request(app.baseUrl).get('/readyz');
      expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
    } finally {
      await app.stop();
    }
  });
});
