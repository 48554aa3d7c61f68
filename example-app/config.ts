// The reference app's settings, from the environment (example-app/README.md lists each one, and a test keeps that true).
import { resolve } from 'node:path';
import type { EnterpriseIdp } from 'express-mcp-oauth';
import { LOG_LEVELS } from './log';

export interface AppConfig {
  port: number;
  baseUrl: string;
  databasePath: string;
  /** postgres://... : the store and the business data on PostgreSQL instead of SQLite. */
  databaseUrl: string | undefined;
  /** redis://... : rate limits shared by every instance through Redis. */
  redisUrl: string | undefined;
  rateLimits: boolean;
  /** Prefix of the rate-limit keys in Redis, so that several deployments can share one Redis. */
  rateLimitPrefix: string;
  /** Express's trust proxy: how many proxies (load balancers) stand in front of the app, or undefined. */
  trustProxy: number | undefined;
  /** PEM of the signing key; by default generated on first start and kept in the database. */
  signingKey: string | undefined;
  /** Access-token lifetime in seconds (default 3600); shorter only for tests and demos. */
  accessTokenTtl: number | undefined;
  serviceName: string;
  /** Let client metadata documents and JWKS be fetched from loopback addresses (tests only). */
  cimdAllowLoopback: boolean;
  /** Origins besides BASE_URL's (and loopback ones on a loopback BASE_URL) that may call /mcp from a browser. */
  allowedOrigins: string[];
  /** How often expired codes, grants and tokens are deleted, in milliseconds. */
  purgeIntervalMs: number;
  /** IDLE_CLIENT_DAYS: public registrations that no grant names are deleted this long after they were made. */
  idleClientMs: number;
  /** SECRET_KEY: the key (base64, 32 bytes or more) that encrypts the secrets kept in the database. */
  secretKey: string | undefined;
  /** RESOURCE_SERVER_CLIENTS: confidential clients that may introspect every access token of /mcp. */
  resourceServerClients: string[];
  /** LOG_LEVEL: pino's level for the JSON logs on stdout (default info; silent turns them off). */
  logLevel: string;
  /** AUDIT_RETENTION_DAYS: how long audit events are kept, in milliseconds (default 90 days). */
  auditRetentionMs: number;
  /** METRICS_PORT: where Prometheus metrics are served (0: any free port); undefined: no metrics. */
  metricsPort: number | undefined;
  /** METRICS_HOST: the address the metrics port listens on (default 127.0.0.1, loopback only). */
  metricsHost: string;
  /** KEYS_REFRESH_SECONDS: how often the signing key set is re-read, in milliseconds (default and most 60 s). */
  keysRefreshMs: number;
  /**
   * TRUSTED_IDPS: the enterprise IdPs whose ID-JAGs the jwt-bearer grant accepts, each with the email domains it
   * speaks for when the entry names them; empty: grant off.
   */
  trustedIdps: EnterpriseIdp[];
  /**
   * DOWNSTREAM_RESOURCES: the URLs of downstream APIs a client registered for token exchange may trade a user's
   * token for (names only: the app never fetches them).
   */
  downstreamResources: string[];
  /**
   * UPSTREAM_OIDC_ISSUER, UPSTREAM_CLIENT_ID, UPSTREAM_CLIENT_SECRET, UPSTREAM_NAME: sign-in through that OpenID
   * provider ("Continue with <name>"); undefined: off.
   */
  upstreamOidc:
    { issuer: string; clientId: string; clientSecret: string | undefined; name: string } | undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const MIN_KEY_BYTES = 32;
export const SECRET_KEY_REQUIRED =
  'SECRET_KEY is required with DATABASE_URL (the same for every instance); make one with: openssl rand -base64 32';

/** Decodes SECRET_KEY (base64 or base64url, 32 bytes or more), or says how to make one. */
export function parseSecretKey(value: string, where = 'SECRET_KEY'): Buffer {
  const text = value.trim();
  const bytes = /^[A-Za-z0-9+/_-]+={0,2}$/.test(text) ? Buffer.from(text, 'base64') : Buffer.alloc(0);
  if (bytes.length < MIN_KEY_BYTES) {
    throw new ConfigError(
      `${where} must be at least ${MIN_KEY_BYTES} random bytes in base64; make one with: openssl rand -base64 32`,
    );
  }
  return bytes;
}

/** A loopback host name or address, as the document fetcher sees one (localhost, 127.0.0.0/8, ::1). */
const isLoopbackHost = (hostname: string) =>
  hostname === 'localhost' ||
  hostname.endsWith('.localhost') ||
  /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname) ||
  hostname === '[::1]';

/**
 * TRUSTED_IDPS: comma-separated https issuer URLs, kept exactly as given (an ID-JAG's `iss` must spell its issuer the
 * same way), each optionally followed by `=` and the email domains it speaks for, separated by `|`
 * (`https://idp.example.com=example.com|example.org`). A loopback issuer only with CIMD_ALLOW_LOOPBACK=1, as client
 * documents.
 */
export function parseTrustedIdps(value: string | undefined, allowLoopback: boolean): EnterpriseIdp[] {
  const entries = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const idps = new Map<string, EnterpriseIdp>();
  for (const entry of entries) {
    const equals = entry.indexOf('=');
    const issuer = equals < 0 ? entry : entry.slice(0, equals).trim();
    const url = URL.canParse(issuer) ? new URL(issuer) : undefined;
    if (!url || url.protocol !== 'https:')
      throw new ConfigError(
        `TRUSTED_IDPS holds "${issuer}", which is not an https URL; list issuers like https://acme.okta.com.`,
      );
    if (/[?#]/.test(issuer) || url.username || url.password)
      throw new ConfigError(
        `TRUSTED_IDPS holds "${issuer}": an issuer has no query, fragment or credentials; ` +
          "give it as the provider's ID-JAGs spell their iss.",
      );
    if (!allowLoopback && isLoopbackHost(url.hostname))
      throw new ConfigError(
        `TRUSTED_IDPS holds "${issuer}", a loopback address: use the provider's public issuer, ` +
          'or set CIMD_ALLOW_LOOPBACK=1 (tests only).',
      );
    if (idps.has(issuer))
      throw new ConfigError(`TRUSTED_IDPS lists "${issuer}" twice: list each provider once.`);
    if (equals < 0) {
      idps.set(issuer, { issuer });
      continue;
    }
    const domains = entry
      .slice(equals + 1)
      .split('|')
      .map((domain) => domain.trim().toLowerCase());
    const bad = domains.find((domain) => !DOMAIN.test(domain));
    if (bad !== undefined)
      throw new ConfigError(
        `TRUSTED_IDPS gives "${issuer}" the email domain "${bad}", which is not a domain; write ` +
          `${issuer}=example.com|example.org (the part of an address after the @).`,
      );
    idps.set(issuer, { issuer, emailDomains: [...new Set(domains)] });
  }
  return [...idps.values()];
}

/** A host name of letters, digits and hyphens (an IDN in its xn-- form), as after the @ of an address. */
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export function readConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const port = env.PORT === undefined || env.PORT === '' ? 3000 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT must be a port number, got "${env.PORT}".`);
  const baseUrl = (env.BASE_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  const rateLimits = env.RATE_LIMITS ?? 'on';
  if (!['on', 'off'].includes(rateLimits))
    throw new ConfigError(`RATE_LIMITS must be "on" or "off", got "${rateLimits}".`);
  const ttl = env.ACCESS_TOKEN_TTL ? Number(env.ACCESS_TOKEN_TTL) : undefined;
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 1 || ttl > 86_400)) {
    throw new ConfigError('ACCESS_TOKEN_TTL must be a whole number of seconds from 1 to 86400.');
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new ConfigError('DATABASE_URL must be a postgres:// URL.');
  const redisUrl = env.REDIS_URL || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl))
    throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL.');
  const trustProxy = env.TRUST_PROXY ? Number(env.TRUST_PROXY) : undefined;
  if (trustProxy !== undefined && (!Number.isInteger(trustProxy) || trustProxy < 0 || trustProxy > 10)) {
    throw new ConfigError('TRUST_PROXY must be the number of proxies in front of the app (0 to 10).');
  }
  const cimd = env.CIMD_ALLOW_LOOPBACK ?? '';
  if (!['', '0', '1'].includes(cimd))
    throw new ConfigError(`CIMD_ALLOW_LOOPBACK must be 1 (tests only) or 0, got "${cimd}".`);
  const allowedOrigins = (env.ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean)
    .map((origin) => {
      if (!URL.canParse(origin) || new URL(origin).origin !== origin.replace(/\/+$/, ''))
        throw new ConfigError(
          `ALLOWED_ORIGINS holds "${origin}", which is not an origin; list origins like https://app.example.com.`,
        );
      return new URL(origin).origin;
    });
  if (databaseUrl && !env.SECRET_KEY) throw new ConfigError(SECRET_KEY_REQUIRED);
  if (env.SECRET_KEY) parseSecretKey(env.SECRET_KEY);
  const purgeSeconds = env.PURGE_INTERVAL_SECONDS ? Number(env.PURGE_INTERVAL_SECONDS) : 600;
  if (!Number.isInteger(purgeSeconds) || purgeSeconds < 1 || purgeSeconds > 86_400)
    throw new ConfigError('PURGE_INTERVAL_SECONDS must be a whole number of seconds from 1 to 86400.');
  const idleClientDays = env.IDLE_CLIENT_DAYS ? Number(env.IDLE_CLIENT_DAYS) : 30;
  if (!Number.isInteger(idleClientDays) || idleClientDays < 1 || idleClientDays > 3650)
    throw new ConfigError('IDLE_CLIENT_DAYS must be a whole number of days from 1 to 3650.');
  const logLevel = env.LOG_LEVEL || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}".`);
  const retentionDays = env.AUDIT_RETENTION_DAYS ? Number(env.AUDIT_RETENTION_DAYS) : 90;
  if (!Number.isInteger(retentionDays) || retentionDays < 1 || retentionDays > 3650)
    throw new ConfigError('AUDIT_RETENTION_DAYS must be a whole number of days from 1 to 3650.');
  const keysRefresh = env.KEYS_REFRESH_SECONDS ? Number(env.KEYS_REFRESH_SECONDS) : 60;
  if (!Number.isInteger(keysRefresh) || keysRefresh < 1 || keysRefresh > 60)
    throw new ConfigError('KEYS_REFRESH_SECONDS must be a whole number of seconds from 1 to 60.');
  const metricsPort = env.METRICS_PORT ? Number(env.METRICS_PORT) : undefined;
  if (
    metricsPort !== undefined &&
    !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort <= 65535)
  )
    throw new ConfigError(`METRICS_PORT must be a port number, got "${env.METRICS_PORT}".`);
  if (metricsPort !== undefined && metricsPort === port && port !== 0)
    throw new ConfigError('METRICS_PORT must differ from PORT: metrics are never served on the public port.');
  const resourceServerClients = (env.RESOURCE_SERVER_CLIENTS ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  const trustedIdps = parseTrustedIdps(env.TRUSTED_IDPS, cimd === '1');
  const downstreamResources = parseDownstreamResources(env.DOWNSTREAM_RESOURCES, baseUrl);
  return {
    port,
    downstreamResources,
    upstreamOidc: parseUpstreamOidc(env),
    trustedIdps,
    keysRefreshMs: keysRefresh * 1000,
    metricsPort,
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    logLevel,
    auditRetentionMs: retentionDays * 86_400_000,
    resourceServerClients,
    secretKey: env.SECRET_KEY || undefined,
    purgeIntervalMs: purgeSeconds * 1000,
    idleClientMs: idleClientDays * 86_400_000,
    cimdAllowLoopback: cimd === '1',
    allowedOrigins,
    trustProxy,
    rateLimitPrefix: env.RATE_LIMIT_PREFIX || 'mcp-oauth:rl:',
    databaseUrl,
    redisUrl,
    baseUrl,
    databasePath: resolve(env.DATABASE_PATH || 'data/app.db'),
    rateLimits: rateLimits === 'on',
    signingKey: env.SIGNING_KEY || undefined,
    accessTokenTtl: ttl,
    serviceName: env.SERVICE_NAME || 'Business Service',
  };
}

/** The app's own downstream API, which its render_document tool calls with an exchanged token. */
export const rendererResource = (baseUrl: string) => `${baseUrl}/renderer`;

/**
 * DOWNSTREAM_RESOURCES: comma-separated absolute URLs (https, or http on a loopback host), no query or fragment;
 * never this app's own /mcp or renderer, whose tokens an exchange must never make.
 */
export function parseDownstreamResources(value: string | undefined, baseUrl: string): string[] {
  const resources: string[] = [];
  for (const entry of (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)) {
    const url = URL.canParse(entry) ? new URL(entry) : undefined;
    // As the library has it: http only on these hosts' names, as written.
    const loopback = url !== undefined && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && loopback)))
      throw new ConfigError(
        `DOWNSTREAM_RESOURCES holds "${entry}", which is not an https URL; list APIs like https://renderer.example.com.`,
      );
    if (url.search || url.hash || entry.includes('#') || entry.includes('?') || url.username || url.password)
      throw new ConfigError(
        `DOWNSTREAM_RESOURCES holds "${entry}": a resource has no query, fragment or credentials.`,
      );
    const normalised = url.href.replace(/\/+$/, '');
    if (normalised === `${baseUrl}/mcp` || normalised === rendererResource(baseUrl))
      throw new ConfigError(
        `DOWNSTREAM_RESOURCES holds "${entry}", which is this app's own; list other services' APIs.`,
      );
    if (resources.includes(normalised))
      throw new ConfigError(`DOWNSTREAM_RESOURCES lists "${entry}" twice: list each API once.`);
    resources.push(normalised);
  }
  return resources;
}

/** The upstream OpenID provider of the UPSTREAM_* variables: the issuer and client id together, or none of them. */
function parseUpstreamOidc(env: NodeJS.ProcessEnv): AppConfig['upstreamOidc'] {
  const issuer = env.UPSTREAM_OIDC_ISSUER || undefined;
  const clientId = env.UPSTREAM_CLIENT_ID || undefined;
  const clientSecret = env.UPSTREAM_CLIENT_SECRET || undefined;
  if (!issuer && !clientId && !clientSecret) return undefined;
  if (!issuer || !clientId)
    throw new ConfigError(
      'UPSTREAM_OIDC_ISSUER and UPSTREAM_CLIENT_ID go together (with UPSTREAM_CLIENT_SECRET for a confidential ' +
        'client): give both, or neither to turn upstream sign-in off.',
    );
  let url: URL | undefined;
  try {
    url = new URL(issuer);
  } catch {
    url = undefined;
  }
  if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))))
    throw new ConfigError(
      `UPSTREAM_OIDC_ISSUER must be an https URL (http only on localhost), got "${issuer}".`,
    );
  return { issuer, clientId, clientSecret, name: env.UPSTREAM_NAME?.trim() || url.host };
}
