// The options of Client ID Metadata Documents and of every outbound fetch (documents and jwks_uri), parsed once.
import type { ResolveHost } from '../outbound/safe-fetch';

/** How the server treats client_id URLs, and how it fetches them (and any client's jwks_uri). */
export interface ClientMetadataDocumentOptions {
  /** Accept https URLs as client_id (Client ID Metadata Documents). Default true. */
  enabled?: boolean;
  /**
   * Fetch from loopback addresses too. Default false: only globally reachable addresses are ever fetched. For tests
   * and local development only, never in production.
   */
  allowLoopback?: boolean;
  /** The floor and ceiling of how long a fetched document is kept, whatever its Cache-Control says. Default 300 and 86,400. */
  minCacheSeconds?: number;
  maxCacheSeconds?: number;
  /**
   * The deadline of one fetch from the moment it has a slot (lookup, connection, TLS, headers, body); the wait for a
   * slot is bounded by as long again. Default 5000 ms.
   */
  timeoutMs?: number;
  /** The largest metadata document accepted. Default 5120 bytes. */
  maxBytes?: number;
  /** Extra certificate authorities (PEM) to trust besides Node's own, e.g. a test CA. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Resolves a host name to its addresses (tests inject one). Default: the system resolver (dns.lookup). */
  resolveHost?: ResolveHost;
}

/** The parsed settings. */
export interface ClientDocumentConfig {
  enabled: boolean;
  allowLoopback: boolean;
  minCacheMs: number;
  maxCacheMs: number;
  timeoutMs: number;
  maxBytes: number;
  ca: string[] | undefined;
  resolveHost: ResolveHost | undefined;
}

export function parseClientDocumentOptions(
  options: ClientMetadataDocumentOptions | undefined,
  fail: (message: string) => never,
): ClientDocumentConfig {
  const given = options ?? {};
  if (typeof given !== 'object') fail('clientMetadataDocuments must be an object, e.g. { enabled: true }.');
  const whole = (name: string, value: number | undefined, fallback: number, min: number, max: number) => {
    const parsed = value ?? fallback;
    if (!Number.isInteger(parsed) || parsed < min || parsed > max)
      fail(`clientMetadataDocuments.${name} must be a whole number from ${min} to ${max}.`);
    return parsed;
  };
  const minCacheSeconds = whole('minCacheSeconds', given.minCacheSeconds, 300, 0, 86_400);
  const maxCacheSeconds = whole(
    'maxCacheSeconds',
    given.maxCacheSeconds,
    86_400,
    minCacheSeconds,
    7 * 86_400,
  );
  for (const name of ['enabled', 'allowLoopback'] as const) {
    if (given[name] !== undefined && typeof given[name] !== 'boolean')
      fail(`clientMetadataDocuments.${name} must be true or false.`);
  }
  if (given.resolveHost !== undefined && typeof given.resolveHost !== 'function')
    fail(
      'clientMetadataDocuments.resolveHost must be a function (hostname) => Promise<{ address, family }[]>.',
    );
  const ca = given.ca === undefined ? undefined : ([] as Array<string | Buffer>).concat(given.ca).map(String);
  if (ca?.some((pem) => !pem.includes('-----BEGIN CERTIFICATE-----')))
    fail('clientMetadataDocuments.ca must hold PEM certificates.');
  return {
    enabled: given.enabled ?? true,
    allowLoopback: given.allowLoopback ?? false,
    minCacheMs: minCacheSeconds * 1000,
    maxCacheMs: maxCacheSeconds * 1000,
    timeoutMs: whole('timeoutMs', given.timeoutMs, 5000, 100, 30_000),
    maxBytes: whole('maxBytes', given.maxBytes, 5120, 512, 65_536),
    ca,
    resolveHost: given.resolveHost,
  };
}
