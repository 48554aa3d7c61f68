// The reference app: the business service's MCP tool server, protected by express-mcp-oauth. SQLite by default;
// PostgreSQL when DATABASE_URL is set, and Redis-backed rate limits when REDIS_URL is set.
import type { RequestListener } from 'node:http';
import express, { type ErrorRequestHandler, type Express } from 'express';
import { fastPath } from 'express-mcp-oauth/experimental';
import {
  createOAuthRouter,
  DEFAULT_PATHS,
  type IdJagClaims,
  type JwtSigner,
  type OAuthRouter,
  type OAuthRouterOptions,
  type OAuthStore,
  type UpstreamIdentity,
} from 'express-mcp-oauth';
import { createAccountRoutes } from './account/routes';
import { createAccountSession } from './account/session';
import { rendererResource, type AppConfig } from './config';
import { createRendererClient } from './renderer/client';
import { createRendererRoutes } from './renderer/routes';
import type { AppDb } from './db/database';
import { openAppDatabase } from './db/open';
import { createSecretSealer, loadSecretKey } from './db/secret-key';
import { cookieSecret } from './db/secrets';
import { openSigner } from './keys';
import { answerError } from './http/errors';
import { checkHost } from './http/guards';
import { createHealthRoutes } from './http/health';
import { createMcpRoutes } from './mcp/endpoint';
import { hr } from './i18n/hr';
import { ADMIN_API_SCOPES, BUSINESS_SCOPES } from './scopes';
import { createAdminApi } from './admin-api';
import { schedulePurge, type PurgeSchedule } from './purge';
import { authenticateUser, findUserByEmail } from './users';
import { createAuditLog, type AuditLog } from './audit';
import { createLogger, requestLog, requestLogger } from './log';
import type { AppMetrics } from './metrics';
import type { DestinationStream, Logger } from 'pino';

export interface ExampleApp {
  /** The Express app: every route. */
  app: Express;
  /**
   * What the HTTP server runs: the OAuth router's fast path for the token, revocation and introspection endpoints
   * and for POST /mcp (with this app's request log, metrics and Host check), and `app` for everything else.
   */
  listener: RequestListener;
  oauth: OAuthRouter;
  signer: JwtSigner;
  store: OAuthStore;
  db: AppDb;
  /** The schedule that deletes expired rows (runOnce for tests and operators). */
  purge: PurgeSchedule;
  /** Where the data lives and how rate limits are counted, for the start-up line. */
  description: string;
  /** The JSON logger (pino). */
  logger: Logger;
  /** The audit trail: every OAuth event, logged and kept in audit_events. */
  audit: AuditLog;
  /** With METRICS_PORT: the metrics and the URL they are served at. */
  metrics?: { url: string; registry: AppMetrics['registry'] };
  close(): Promise<void>;
}

/** What a test may add to the environment's settings: a trusted test CA and a resolver for the document fetcher. */
export interface ExampleAppExtras {
  clientMetadataDocuments?: Omit<NonNullable<OAuthRouterOptions['clientMetadataDocuments']>, 'allowLoopback'>;
  /** Where the JSON log lines go (default stdout): a test reads them. */
  logDestination?: DestinationStream;
  /**
   * The OAuth server's clock (router and signer), in milliseconds: a test moves it past a token's expiry instead of
   * waiting. Default Date.now.
   */
  now?: () => number;
}

const loadMetrics = () => require('./metrics') as typeof import('./metrics');

export async function createExampleApp(
  config: AppConfig,
  extras: ExampleAppExtras = {},
): Promise<ExampleApp> {
  const logger = createLogger(config.logLevel, extras.logDestination);
  const database = await openAppDatabase(config);
  const { db } = database;
  // Metrics cost nothing when they are off: no timing wrapper, no middleware, not even prom-client loaded. (What is
  // never used is not loaded: each module's code stays in the heap for the life of the process.)
  const metrics =
    config.metricsPort === undefined
      ? undefined
      : loadMetrics().createAppMetrics({
          routeOf: loadMetrics().routeNamer(DEFAULT_PATHS),
          activeGrants: async () =>
            Number(
              (
                await db.get<{ n: number }>(
                  'SELECT count(*) AS n FROM oauth_grants WHERE revoked_at IS NULL AND expires_at > ?',
                  [Date.now()],
                )
              )?.n ?? 0,
            ),
        });
  const store = metrics ? metrics.timedStore(database.store) : database.store;
  const audit = createAuditLog(db, logger, config.auditRetentionMs);
  const shared =
    config.rateLimits && config.redisUrl
      ? await (require('./rate-limit-store') as typeof import('./rate-limit-store')).connectRateLimitStore(
          config.redisUrl,
          config.rateLimitPrefix,
        )
      : undefined;
  const secretKey = loadSecretKey(config);
  const sealer = createSecretSealer(secretKey);
  const secret = await cookieSecret(db, sealer);
  // Every instance on the same database shares one key set (rotated by `npm run keys:rotate`), so any of them
  // verifies any token.
  const signer = await openSigner(
    config,
    db,
    store,
    { key: secretKey, sealer },
    (error) => logger.warn({ err: error }, 're-reading the signing keys failed'),
    extras.now,
  );
  const resource = `${config.baseUrl}/mcp`;
  const renderer = rendererResource(config.baseUrl);
  const adminApi = `${config.baseUrl}/admin/api`;
  const purge = schedulePurge(
    store,
    config.purgeIntervalMs,
    (error) => logger.warn({ err: error }, 'purge of expired rows failed'),
    [
      (limit) => audit.purge(Date.now(), limit),
      // The client lifecycle: registrations nobody connected within IDLE_CLIENT_DAYS (a client that registers on every
      // start leaves many), never one a grant names.
      (limit) => Promise.resolve(store.purgeIdleClients?.(Date.now() - config.idleClientMs, limit) ?? 0),
    ],
  );
  const oauth = createOAuthRouter(store, signer, {
    issuer: config.baseUrl,
    resources: [resource],
    scopes: BUSINESS_SCOPES,
    serviceName: config.serviceName,
    // English is built in; the pages speak Croatian to a browser that prefers it (its Accept-Language).
    pages: { languages: { hr } },
    serviceDocumentation: config.baseUrl.startsWith('https:') ? `${config.baseUrl}/` : undefined,
    secret,
    rateLimits: config.rateLimits ? (shared ? { store: shared.store } : {}) : false,
    lifetimes: config.accessTokenTtl ? { accessToken: config.accessTokenTtl } : {},
    authenticateUser: (email, password) => authenticateUser(db, email, password),
    clientMetadataDocuments: { ...extras.clientMetadataDocuments, allowLoopback: config.cimdAllowLoopback },
    // Agents with no browser at hand (a CLI on a remote box, a CI job): the device shows a code, the person types it
    // at /device (RFC 8628).
    deviceAuthorization: true,
    // The admin API, for automation: its tokens only through client_credentials, with a scope nobody consents to.
    operatorResources: [{ resource: adminApi, scopes: ADMIN_API_SCOPES }],
    // Enterprise-Managed Authorization: an ID-JAG of a trusted IdP names the user by its email claim, which the library
    // passes on only when the IdP verified it and it is within the domains TRUSTED_IDPS gives that IdP. The IdPs'
    // keys are fetched like client documents (the settings just above: loopback, the test CA).
    ...(config.trustedIdps.length
      ? {
          enterpriseIdps: {
            issuers: config.trustedIdps,
            findUser: (claims: IdJagClaims) => findUserByEmail(db, claims.email),
          },
        }
      : {}),
    // Sign-in through an OpenID provider: a verified email that matches a user signs that user in (the library
    // refuses an unverified one before asking).
    ...(config.upstreamOidc
      ? {
          upstream: {
            providers: [{ id: 'oidc', ...config.upstreamOidc }],
            findUser: (identity: UpstreamIdentity) => findUserByEmail(db, identity.email),
          },
        }
      : {}),
    // Token exchange (RFC 8693): clients registered for it trade a user's /mcp token for one of DOWNSTREAM_RESOURCES;
    // the render_document tool trades it, in process, for the renderer's (documents only), which no client may ask
    // for: the policy refuses it at the token endpoint, so the renderer's tokens come from this tool server alone.
    tokenExchange: {
      resources: [{ resource: renderer, scopes: ['dokument:read'] }, ...config.downstreamResources],
      policy: (exchange) =>
        exchange.client === undefined || exchange.resource !== renderer
          ? true
          : {
              error: 'invalid_target',
              description: 'Tokens for the document renderer are not exchanged here.',
            },
    },
    resourceServers: Object.fromEntries(config.resourceServerClients.map((id) => [id, [resource]])),
    onEvent: metrics
      ? (event) => {
          metrics.record(event);
          audit.record(event);
        }
      : audit.record,
    onError: (error, req) =>
      requestLog(req, logger).error({ err: error }, 'unexpected error in the OAuth router'),
    ...(extras.now ? { now: extras.now } : {}),
  });

  const app = express();
  app.disable('x-powered-by');
  // First, so that every line logged for a request (audit events included) carries its id.
  const logRequests = requestLogger(logger);
  app.use(logRequests);
  if (metrics) app.use(metrics.middleware);
  // Behind a load balancer, the client's address (for rate limits) is in X-Forwarded-For: trust that many hops.
  if (config.trustProxy !== undefined) app.set('trust proxy', config.trustProxy);
  const base = new URL(config.baseUrl);
  // Probes come with the instance's own address as Host, so the health routes answer before the Host check.
  app.use(
    createHealthRoutes({
      database: () => db.get('SELECT 1 AS ok'),
      ...(shared ? { redis: () => shared.ping() } : {}),
    }),
  );
  // DNS rebinding protection before any route: the OAuth endpoints, the account pages and /mcp alike.
  const hostCheck = checkHost(
    [base.hostname, 'localhost', '127.0.0.1', '[::1]'],
    `${base.origin}/.well-known/oauth-protected-resource${new URL(resource).pathname}`,
  );
  app.use(hostCheck);
  app.use(oauth);
  const mcp = createMcpRoutes({
    db,
    oauth,
    store,
    resource,
    allowedOrigins: config.allowedOrigins,
    baseUrl: config.baseUrl,
    serverName: config.serviceName,
    services: {
      renderDocument: createRendererClient({ oauth, resource: renderer, origin: internalOrigin(config) }),
    },
  });
  app.use('/mcp', mcp.router);
  // The same for automation, as JSON, with a token of an operator client acting for an administrator.
  app.use(
    '/admin/api',
    createAdminApi({
      db,
      store,
      oauth,
      resource: adminApi,
      idleClientMs: config.idleClientMs,
      onError: (error, req) =>
        requestLog(req, logger).error({ err: error }, 'unexpected error in the admin API'),
    }),
  );
  // The administrators' console lives below /account, where the account session's cookie is sent on plain http too.
  app.get('/admin', (_req, res) => res.redirect(302, '/account/admin'));
  app.use('/renderer', createRendererRoutes({ db, oauth, resource: renderer }));
  app.use(
    '/account',
    createAccountRoutes({
      db,
      store,
      oauth,
      session: createAccountSession(db, secret, base.protocol === 'https:'),
      audit,
      serviceName: config.serviceName,
      idleClientMs: config.idleClientMs,
    }),
  );
  app.get('/', (_req, res) => {
    res
      .type('text')
      .send(
        `${config.serviceName}: MCP server at ${resource}. Manage connected apps at ${config.baseUrl}/account.`,
      );
  });
  const onError = answerError(logger);
  app.use(((error, req, res, _next) => onError(error, req, res)) as ErrorRequestHandler);

  const metricsUrl = metrics ? await metrics.listen(config.metricsPort!, config.metricsHost) : undefined;

  // The token, revocation and introspection requests, and the tool calls (POST /mcp), skip Express's per-request
  // set-up; what runs in front of the routers above runs on them too (the health routes serve other paths), and an
  // error no step answered gets the same JSON-RPC answer.
  const listener = fastPath(oauth, app, {
    before: [logRequests, ...(metrics ? [metrics.middleware] : []), hostCheck],
    routes: { '/mcp': mcp.post },
    onRouteError: onError,
  });

  return {
    app,
    listener,
    oauth,
    ...(metrics ? { metrics: { url: metricsUrl!, registry: metrics.registry } } : {}),
    signer,
    store,
    db,
    description: `${database.description}, rate limits ${!config.rateLimits ? 'off' : shared ? 'shared through Redis' : 'in memory'}`,
    purge,
    logger,
    audit,
    close: async () => {
      purge.stop();
      signer.close?.();
      await metrics?.close();
      await audit.flush();
      await shared?.close();
      await database.close();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    },
  };
}

/**
 * Where this instance reaches its own routes (the renderer): its public address when that is on this machine, else
 * itself on loopback at PORT, rather than out through a load balancer and back.
 */
function internalOrigin(config: AppConfig): string {
  const base = new URL(config.baseUrl);
  return ['localhost', '127.0.0.1', '[::1]'].includes(base.hostname)
    ? base.origin
    : `http://127.0.0.1:${config.port}`;
}
