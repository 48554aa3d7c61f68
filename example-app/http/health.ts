// Health endpoints for load balancers and orchestrators: /healthz answers while the process is alive; /readyz when
// every dependency answers (the database, which was migrated before the app started serving, and Redis when it
// holds the rate limits), within a deadline. Neither needs credentials or reveals more than which check failed.
import express, { type Router } from 'express';

/** A dependency's check: resolves when it answers, rejects otherwise. */
export type ReadinessCheck = () => Promise<unknown>;

const DEADLINE_MS = 2000;

function withinDeadline(check: ReadinessCheck): Promise<'ok' | 'unavailable'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('unavailable'), DEADLINE_MS);
    timer.unref();
    Promise.resolve()
      .then(check)
      .then(
        () => resolve('ok'),
        () => resolve('unavailable'),
      )
      .finally(() => clearTimeout(timer));
  });
}

export function createHealthRoutes(checks: Record<string, ReadinessCheck>): Router {
  const router = express.Router();
  router.get('/healthz', function alive(_req, res) {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async function ready(_req, res) {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((name) => withinDeadline(checks[name]!)));
    const report = Object.fromEntries(names.map((name, index) => [name, results[index]]));
    const ok = results.every((result) => result === 'ok');
    res.setHeader('Cache-Control', 'no-store');
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'unavailable', checks: report });
  });
  return router;
}
