// Prometheus metrics (prom-client) on a port of their own (METRICS_PORT), bound to loopback unless METRICS_HOST
// says otherwise, never on the public port: request counts and latencies per OAuth endpoint and for /mcp, tokens
// issued and refused by reason, rate-limit hits, active grants, and the store's latency per operation.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthEvent, OAuthStore } from 'express-mcp-oauth';
import type { NodeMiddleware } from 'express-mcp-oauth/experimental';
import { pathOf } from './http/guards';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface AppMetrics {
  registry: Registry;
  /** Counts and times each request, labelled by a fixed route name (never the raw path: no label explosion). */
  /** Plain Node middleware, so that it runs on the requests the OAuth fast path serves too. */
  middleware: NodeMiddleware;
  /** Turns audit events into counters (tokens issued and refused, rate-limit hits). */
  record(event: OAuthEvent): void;
  /** The store with each call timed. */
  timedStore(store: OAuthStore): OAuthStore;
  /** Serves /metrics on host:port; resolves with its URL. */
  listen(port: number, host: string): Promise<string>;
  close(): Promise<void>;
}

/** The route names: each OAuth endpoint by name (token, revocation, ...), mcp, account, metadata, health, other. */
export function routeNamer(paths: Readonly<Record<string, string>>): (path: string) => string {
  const byPath = new Map(Object.entries(paths).map(([name, path]) => [path, name]));
  const forms = `${paths.authorization}/`;
  return (path) => {
    const named = byPath.get(path);
    if (named) return named;
    if (path.startsWith(forms)) return 'authorization_form';
    if (path === '/mcp') return 'mcp';
    if (path.startsWith('/.well-known/')) return 'metadata';
    if (path.startsWith('/account')) return 'account';
    if (path === '/healthz' || path === '/readyz') return 'health';
    return 'other';
  };
}

/** The app's metrics (loaded with require() only when METRICS_PORT is set). @public */
export function createAppMetrics(options: {
  routeOf: (path: string) => string;
  activeGrants: () => Promise<number>;
}): AppMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and method.',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const issued = new Counter({
    name: 'oauth_tokens_issued_total',
    help: 'Token responses by grant type.',
    labelNames: ['grant_type'] as const,
    registers: [registry],
  });
  const refused = new Counter({
    name: 'oauth_token_failures_total',
    help: 'Refused token requests by OAuth error code.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const revoked = new Counter({
    name: 'oauth_grants_revoked_total',
    help: 'Grants ended, by cause: user, client, admin, code_replay, code_pkce_mismatch, refresh_token_reuse.',
    labelNames: ['cause'] as const,
    registers: [registry],
  });
  const limited = new Counter({
    name: 'oauth_rate_limit_hits_total',
    help: 'Requests refused by a rate limit, by limit.',
    labelNames: ['limit'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'oauth_active_grants',
    help: 'Grants neither revoked nor expired (read at scrape time).',
    registers: [registry],
    async collect() {
      this.set(await options.activeGrants());
    },
  });
  const storeLatency = new Histogram({
    name: 'oauth_store_operation_duration_seconds',
    help: 'Latency of the OAuth store by operation.',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
    registers: [registry],
  });
  let server: Server | undefined;

  return {
    registry,
    middleware: function measureRequests(req, res, next) {
      const started = process.hrtime.bigint();
      const route = options.routeOf(pathOf(req.url));
      const method = req.method ?? '';
      res.once('finish', () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        requests.inc({ route, method, status: String(res.statusCode) });
        duration.observe({ route, method }, seconds);
      });
      next();
    },
    record(event) {
      if (event.type === 'code.redeemed') issued.inc({ grant_type: 'authorization_code' });
      else if (event.type === 'token.refreshed') issued.inc({ grant_type: 'refresh_token' });
      else if (event.type === 'token.refused') refused.inc({ reason: event.reason ?? 'unknown' });
      else if (event.type === 'code.replayed') revoked.inc({ cause: `code_${event.reason ?? 'replay'}` });
      else if (event.type === 'refresh_token.reused') revoked.inc({ cause: 'refresh_token_reuse' });
      else if (event.type === 'grant.revoked') revoked.inc({ cause: event.by ?? 'admin' });
      // Reported once per address and window: the event's count holds the refusals held back since the last one.
      else if (event.type === 'rate_limit.hit' || event.type === 'sign_in.rate_limited')
        limited.inc({ limit: event.limit ?? 'unknown' }, event.count ?? 1);
    },
    timedStore(store) {
      const timed = {} as Record<string, unknown>;
      for (const [name, value] of Object.entries(store)) {
        if (typeof value !== 'function') {
          timed[name] = value;
          continue;
        }
        timed[name] = async (...args: unknown[]) => {
          const end = storeLatency.startTimer({ operation: name });
          try {
            const result = await value.apply(store, args);
            end({ outcome: 'ok' });
            return result;
          } catch (error) {
            end({ outcome: 'error' });
            throw error;
          }
        };
      }
      return timed as unknown as OAuthStore;
    },
    listen(port, host) {
      server = createServer(async (req, res) => {
        if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
          res.statusCode = 404;
          return void res.end('Not found: metrics are at /metrics\n');
        }
        try {
          const body = await registry.metrics();
          res.setHeader('Content-Type', registry.contentType);
          res.end(body);
        } catch (error) {
          res.statusCode = 500;
          res.end(`metrics failed: ${(error as Error).message}\n`);
        }
      });
      const listening = server;
      return new Promise((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(port, host, () => {
          const { address, port: bound } = listening.address() as AddressInfo;
          resolve(`http://${address.includes(':') ? `[${address}]` : address}:${bound}/metrics`);
        });
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
