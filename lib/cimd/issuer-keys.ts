// The signing keys of the trusted enterprise IdPs (ID-JAG issuers): their authorization server metadata (RFC 8414
// §3; else OpenID Connect Discovery §4), then its jwks_uri, fetched through the same SSRF-safe fetcher, fetch limits
// and caches as clients' documents and key sets, and refetched on an unknown kid at most once per interval.
import type { Request } from 'express';
import type { ClientKey } from '../crypto/client-assertion';
import { OAuthError, isOAuthError } from '../errors';
import { createFetchCache } from './fetch-cache';
import {
  FAILURE_CACHE_MS,
  importKeys,
  MAX_JWKS_BYTES,
  REFETCH_AFTER_MS,
  rememberFailure,
  withdrawsCopy,
} from './resolver';
import { FetchRefusedError, type SafeFetcher } from './safe-fetch';

const MAX_METADATA_BYTES = 64 * 1024;
const MAX_ISSUERS = 100;

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
) => Promise<ClientKey[]>;

/** RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path (a trailing slash dropped). */
export function metadataUrls(issuer: string): string[] {
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
  const keySets = createFetchCache<ReturnType<typeof importKeys>>({
    ...bounds,
    async load(url) {
      const { body, cacheControl } = await fetcher.getJson(url, {
        maxBytes: MAX_JWKS_BYTES,
        contentTypes: ['application/json', 'application/jwk-set+json'],
      });
      return { value: importKeys(body), cacheControl };
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
      `The keys of the identity provider ${issuer} could not be fetched; the ID-JAG cannot be verified.`,
      { cause: error },
    );
  return error;
}
