// Health endpoints for load balancers and orchestrators: /healthz answers while the process is alive; /readyz when
// every dependency answers (the database, which was migrated before the app started serving, and Redis when it
// holds the rate limits), within a deadline. Neither needs credentials or reveals more than which check failed.
import type { RequestHandler } from 'express';

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

export function createHealthRoutes(checks: Record<string, ReadinessCheck>): RequestHandler {
  // One function rather than a Router of two routes: every request of the app passes here first, and leaves after
  // two comparisons instead of entering a router and being matched against each route. Matched as Express would
  // (any case, one trailing slash, GET and HEAD).
  return function healthRoutes(req, res, next) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const path = (req.path.length > 1 ? req.path.replace(/\/$/, '') : req.path).toLowerCase();
    if (path === '/healthz') {
      res.setHeader('Cache-Control', 'no-store');
      return void res.json({ status: 'ok' });
    }
    if (path !== '/readyz') return next();
    const names = Object.keys(checks);
    Promise.all(names.map((name) => withinDeadline(checks[name]!)))
      .then((results) => {
        const report = Object.fromEntries(names.map((name, index) => [name, results[index]]));
        const ok = results.every((result) => result === 'ok');
        res.setHeader('Cache-Control', 'no-store');
        res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'unavailable', checks: report });
      })
      .catch(next);
  };
}
