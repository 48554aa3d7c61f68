// The signing keys of the trusted enterprise IdPs (ID-JAG issuers): their authorization server metadata (RFC 8414
// §3; else OpenID Connect Discovery §4), then its jwks_uri, fetched through the same SSRF-safe fetcher, fetch limits
// and caches as clients' documents and key sets, and refetched on an unknown kid at most once per interval.
import type { Request } from 'express';
import type { VerificationKey } from '../jwt/verify';
import { OAuthError, isOAuthError } from '../errors';
import { createFetchCache } from '../outbound/fetch-cache';
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { FAILURE_CACHE_MS, REFETCH_AFTER_MS, rememberFailure, withdrawsCopy } from '../outbound/cache-policy';
import { FetchRefusedError, type SafeFetcher } from '../outbound/safe-fetch';

const MAX_METADATA_BYTES = 64 * 1024;
const MAX_ISSUERS = 100;
// An IdP's key set serves every relying party it has, and may carry certificate chains: larger than a client's.
const MAX_ISSUER_JWKS_BYTES = 256 * 1024;
const MAX_ISSUER_KEYS = 100;
/** Members of a private JWK (RFC 7518 §6.2.2, §6.3.2; RFC 8037 §2): a published key set holds none. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export interface IssuerKeysOptions {
  fetcher: SafeFetcher;
  now: () => number;
  minCacheMs: number;
  maxCacheMs: number;
  /** Told once per failed fetch, with the whole story, for the operator (never the caller). */
  onFailed?: (failure: { issuer: string; reason: string; detail: string }, req: Request | undefined) => void;
}

/** The keys of one trusted issuer; `refetch` reads its jwks_uri again if the copy is older than a few seconds. */
export type IssuerKeys = (
  issuer: string,
  options?: { refetch?: boolean; req?: Request },
) => Promise<VerificationKey[]>;

/** RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path (a trailing slash dropped). */
function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    // OpenID Connect Discovery §4: the issuer, then the suffix.
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
}

export function createIssuerKeys({
  fetcher,
  now,
  minCacheMs,
  maxCacheMs,
  onFailed = () => undefined,
}: IssuerKeysOptions): IssuerKeys {
  const bounds = {
    now,
    minMs: minCacheMs,
    maxMs: maxCacheMs,
    maxEntries: MAX_ISSUERS,
    failureMs: FAILURE_CACHE_MS,
    remember: rememberFailure,
    withdrawn: withdrawsCopy,
  };
  // Keyed by issuer: the jwks_uri its metadata names.
  const metadata = createFetchCache<string>({
    ...bounds,
    async load(issuer) {
      const [oauthUrl, oidcUrl] = metadataUrls(issuer);
      let fetched;
      try {
        fetched = await fetcher.getJson(oauthUrl!, {
          maxBytes: MAX_METADATA_BYTES,
          contentTypes: ['application/json'],
        });
      } catch (error) {
        // Only an IdP that answered "not here" is asked at the OpenID location: a stalled one is not waited for twice.
        if (!(error instanceof FetchRefusedError && error.reason === 'http_status')) throw error;
        fetched = await fetcher.getJson(oidcUrl!, {
          maxBytes: MAX_METADATA_BYTES,
          contentTypes: ['application/json'],
        });
      }
      return { value: readJwksUri(issuer, fetched.body), cacheControl: fetched.cacheControl };
    },
  });
  const keySets = createFetchCache<VerificationKey[]>({
    ...bounds,
    async load(url) {
      const { body, cacheControl } = await fetcher.getJson(url, {
        maxBytes: MAX_ISSUER_JWKS_BYTES,
        contentTypes: ['application/json', 'application/jwk-set+json'],
      });
      return { value: importIssuerKeys(body), cacheControl };
    },
  });
  const reported = new WeakSet<object>();

  return async (issuer, { refetch = false, req } = {}) => {
    try {
      const { value: jwksUri } = await metadata.get(issuer);
      return (await keySets.get(jwksUri, refetch ? { maxAgeMs: REFETCH_AFTER_MS } : {})).value;
    } catch (error) {
      if (error && typeof error === 'object' && !reported.has(error)) {
        reported.add(error);
        if (error instanceof FetchRefusedError)
          onFailed({ issuer, reason: error.reason, detail: `${issuer}: ${error.message}` }, req);
        else if (isOAuthError(error))
          onFailed({ issuer, reason: 'invalid_metadata', detail: `${issuer}: ${error.description}` }, req);
      }
      throw keysError(issuer, error);
    }
  };
}

/**
 * RFC 8414 §3.3 (and OpenID Connect Discovery §4.3): the metadata's issuer must be the one asked about, or another
 * host could hand out its own keys under the trusted issuer's name. The jwks_uri must be https (the extension §7.3).
 */
function readJwksUri(issuer: string, body: unknown): string {
  const fields = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (fields.issuer !== issuer)
    throw new OAuthError('invalid_grant', `its metadata names another issuer than ${issuer}`);
  const jwksUri = fields.jwks_uri;
  if (typeof jwksUri !== 'string' || !/^https:\/\//i.test(jwksUri) || !URL.canParse(jwksUri))
    throw new OAuthError('invalid_grant', 'its metadata has no https jwks_uri');
  return jwksUri;
}

/**
 * RFC 7521 §5.2: an assertion that cannot be verified is invalid_grant, never a server error. How the network or
 * the IdP failed goes to the operator (onFailed), not to the caller. Too many fetches at once is not the IdP's fault.
 */
function keysError(issuer: string, error: unknown): unknown {
  if (error instanceof FetchRefusedError && error.reason === 'busy')
    return new OAuthError(
      'temporarily_unavailable',
      'The server is fetching too many documents at once; try again in a moment.',
      { headers: { 'Retry-After': '5' }, cause: error },
    );
  if (error instanceof FetchRefusedError || isOAuthError(error))
    return new OAuthError(
      'invalid_grant',
      `The keys of the issuer ${issuer} could not be fetched; the assertion cannot be verified.`,
      { cause: error },
    );
  return error;
}

/**
 * The keys of an IdP's JWK Set this server can verify with: RSA and EC signing keys. Unlike a client's key set, which
 * it wrote for us, an IdP's serves every relying party: keys of other types (Ed25519), for encryption, or unreadable
 * are passed over rather than failing the set; only a set with none usable, or one holding a private key, is refused.
 */
export function importIssuerKeys(body: unknown): VerificationKey[] {
  const keys = (body as { keys?: unknown } | null)?.keys;
  if (!body || typeof body !== 'object' || !Array.isArray(keys) || keys.length > MAX_ISSUER_KEYS)
    throw new OAuthError('invalid_grant', `its jwks_uri is not a JWK Set of at most ${MAX_ISSUER_KEYS} keys`);
  const usable: VerificationKey[] = [];
  for (const entry of keys) {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) continue;
    const jwk = entry as Record<string, unknown>;
    if (PRIVATE_MEMBERS.some((member) => member in jwk))
      throw new OAuthError('invalid_grant', 'its jwks_uri publishes a private key');
    if ((jwk.kty !== 'RSA' && jwk.kty !== 'EC') || jwk.use === 'enc') continue;
    try {
      usable.push({
        kid: typeof jwk.kid === 'string' ? jwk.kid : undefined,
        kty: jwk.kty,
        crv: typeof jwk.crv === 'string' ? jwk.crv : undefined,
        alg: typeof jwk.alg === 'string' ? jwk.alg : undefined,
        use: typeof jwk.use === 'string' ? jwk.use : undefined,
        key: createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }),
      });
    } catch {
      // An unreadable key verifies nothing; the others still may.
    }
  }
  if (usable.length === 0) throw new OAuthError('invalid_grant', 'its jwks_uri has no RSA or EC signing key');
  return usable;
}
