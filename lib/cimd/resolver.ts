// Clients identified by a metadata document URL: fetched through the SSRF-safe fetcher, validated and remembered
// within Cache-Control bounds, in memory only (the store keeps a copy from the first grant on; see
// OAuthStore.createGrant). Also the JWKS of every client that authenticates with private_key_jwt, whether it came
// by document or by registration.
import type { VerificationKey } from '../jwt/verify';
import { createPublicKey } from 'node:crypto';
import type { Request } from 'express';
import { OAuthError, isOAuthError } from '../errors';
import type { ClientRecord } from '../store/types';
import { validateJwks } from '../clients/metadata';
import { clientIdUrlProblem, validateClientDocument } from './client-document';
import { createFetchCache } from '../outbound/fetch-cache';
import { FAILURE_CACHE_MS, REFETCH_AFTER_MS, rememberFailure, withdrawsCopy } from '../outbound/cache-policy';
import { FetchRefusedError, type FetchFailure, type SafeFetcher } from '../outbound/safe-fetch';

interface ClientDocumentSettings {
  enabled: boolean;
  minCacheMs: number;
  maxCacheMs: number;
  maxBytes: number;
}

/** A fetch that failed, or a document or key set that is not valid: for the operator's log, never for the caller. */
export interface FetchFailureReport {
  /** The client concerned: the document's URL, or the client whose jwks_uri it is. */
  clientId: string;
  /** Why: a FetchFailure, or `invalid_document` / `invalid_jwks` for content that is not valid. */
  reason: FetchFailure | 'invalid_document' | 'invalid_jwks';
  /** The whole story: the URL, what its host resolved to, the socket error, the status. */
  detail: string;
}

export interface ClientDocumentResolverOptions {
  settings: ClientDocumentSettings;
  fetcher: SafeFetcher;
  scopeCatalogue: ReadonlySet<string>;
  now: () => number;
  /** Told once per fetched copy of a document, with the request that caused the fetch. */
  onFetched?: (clientId: string, req: Request | undefined) => void;
  /** Told once per failed fetch (a remembered failure is not told again), with the request that caused it. */
  onFailed?: (failure: FetchFailureReport, req: Request | undefined) => void;
}

export interface ClientDocumentResolver {
  /** The client a document URL describes; invalid_client when it cannot be fetched or is not valid. */
  findClient(url: string, req?: Request): Promise<ClientRecord>;
  /**
   * The client's public keys, from its jwks or its jwks_uri. `refetch` asks again for a jwks_uri copy older than
   * a few seconds: a key the client has just rotated in.
   */
  clientKeys(
    client: ClientRecord,
    options?: { refetch?: boolean; req?: Request },
  ): Promise<VerificationKey[]>;
}

const MAX_DOCUMENTS = 1000;
const MAX_JWKS_BYTES = 16 * 1024;
export function createClientDocumentResolver({
  settings,
  fetcher,
  scopeCatalogue,
  now,
  onFetched = () => undefined,
  onFailed = () => undefined,
}: ClientDocumentResolverOptions): ClientDocumentResolver {
  const bounds = {
    now,
    minMs: settings.minCacheMs,
    maxMs: settings.maxCacheMs,
    maxEntries: MAX_DOCUMENTS,
    failureMs: FAILURE_CACHE_MS,
    remember: rememberFailure,
    withdrawn: withdrawsCopy,
  };

  // Nothing is written to the store here: a document is fetched for whoever sends its URL, before anyone consents,
  // and strangers must not be able to add rows at will.
  const documents = createFetchCache<ClientRecord>({
    ...bounds,
    async load(url) {
      const { body, cacheControl } = await fetcher.getJson(url, {
        maxBytes: settings.maxBytes,
        contentTypes: ['application/json'],
      });
      return { value: validateClientDocument(url, body, scopeCatalogue, now()), cacheControl };
    },
  });

  const keySets = createFetchCache<VerificationKey[]>({
    ...bounds,
    async load(url) {
      const { body, cacheControl } = await fetcher.getJson(url, {
        maxBytes: MAX_JWKS_BYTES,
        contentTypes: ['application/json', 'application/jwk-set+json'],
      });
      return { value: importKeys(body), cacheControl };
    },
  });

  // The copy last announced per URL: callers that waited on the same fetch announce it once.
  const announced = new Map<string, number>();
  const announce = (url: string, fetchedAt: number, req: Request | undefined) => {
    if (announced.get(url) === fetchedAt) return;
    if (announced.size >= MAX_DOCUMENTS) announced.delete(announced.keys().next().value as string);
    announced.set(url, fetchedAt);
    onFetched(url, req);
  };
  // Every caller that shared a failed fetch, or met it remembered, gets the same error object: reported once.
  const reported = new WeakSet<object>();
  const report = (failure: FetchFailureReport, error: unknown, req: Request | undefined) => {
    if (!error || typeof error !== 'object' || reported.has(error)) return;
    reported.add(error);
    onFailed(failure, req);
  };

  return {
    async findClient(url, req) {
      const problem = clientIdUrlProblem(url);
      if (problem)
        throw new OAuthError(
          'invalid_client',
          `The client_id "${url.slice(0, 200)}" cannot be used: ${problem}.`,
        );
      try {
        const { value, fetchedAt } = await documents.get(url);
        announce(url, fetchedAt, req);
        return value;
      } catch (error) {
        const failure = describeFailure(error, url, 'invalid_document');
        if (failure) report({ clientId: url, ...failure }, error, req);
        throw documentError(DOCUMENT, url, error);
      }
    },

    async clientKeys(client, { refetch = false, req } = {}) {
      const { jwks, jwks_uri: jwksUri } = client.metadata as { jwks?: unknown; jwks_uri?: string };
      if (jwks !== undefined) return importKeys(jwks);
      if (typeof jwksUri !== 'string') return [];
      try {
        return (await keySets.get(jwksUri, refetch ? { maxAgeMs: REFETCH_AFTER_MS } : {})).value;
      } catch (error) {
        const failure = describeFailure(error, jwksUri, 'invalid_jwks');
        if (failure) report({ clientId: client.clientId, ...failure }, error, req);
        throw documentError(KEY_SET, jwksUri, error);
      }
    },
  };
}

const DOCUMENT = { name: "The client's metadata document", at: "The app's metadata document at" };
const KEY_SET = { name: "The client's key set (jwks_uri)", at: "The app's key set (jwks_uri) at" };

/** What went wrong, for the report; undefined for an error that is not about the fetch (a bug goes on as it is). */
function describeFailure(
  error: unknown,
  url: string,
  invalid: 'invalid_document' | 'invalid_jwks',
): Omit<FetchFailureReport, 'clientId'> | undefined {
  if (error instanceof FetchRefusedError) return { reason: error.reason, detail: `${url}: ${error.message}` };
  if (isOAuthError(error)) return { reason: invalid, detail: `${url}: ${error.description}` };
  return undefined;
}

/**
 * A failed fetch or an invalid document, as the caller may see it. What the document says is the caller's own (or
 * its publisher's) and is described, so that a developer can fix it; how the network and other hosts behaved is
 * not: no address, name resolution, socket error, timeout, HTTP status, content type or size ever reaches the
 * caller, or strangers would map internal names and probe hosts through this server. All of that is in the report
 * (onFailed: the client.fetch_failed event). Anything else (a bug) goes on as it is.
 */
function documentError(what: typeof DOCUMENT, url: string, error: unknown): unknown {
  if (isOAuthError(error)) {
    return new OAuthError(
      'invalid_client',
      `${what.at} ${url} is not valid: ${error.description.replace(/\.$/, '')}.`,
      { cause: error },
    );
  }
  if (!(error instanceof FetchRefusedError)) return error;
  switch (error.reason) {
    case 'invalid_json':
      return new OAuthError('invalid_client', `${what.at} ${url} is not valid: ${error.message}.`, {
        cause: error,
      });
    case 'bad_url':
      return new OAuthError('invalid_client', `${what.at} ${url} cannot be used: ${error.message}.`, {
        cause: error,
      });
    case 'busy':
      // Not the client's fault: a client told invalid_client might throw its registration away.
      return new OAuthError(
        'temporarily_unavailable',
        'The server is fetching too many client documents at once; try again in a moment.',
        { headers: { 'Retry-After': '5' }, cause: error },
      );
    default:
      return new OAuthError('invalid_client', `${what.name} could not be fetched.`, { cause: error });
  }
}

/** The keys of a JWK Set (validated), ready to verify with. */
function importKeys(body: unknown): VerificationKey[] {
  return validateJwks(body).keys.map((jwk) => ({
    kid: typeof jwk.kid === 'string' ? jwk.kid : undefined,
    kty: String(jwk.kty),
    crv: typeof jwk.crv === 'string' ? jwk.crv : undefined,
    alg: typeof jwk.alg === 'string' ? jwk.alg : undefined,
    use: typeof jwk.use === 'string' ? jwk.use : undefined,
    key: createPublicKey({ key: jwk as never, format: 'jwk' }),
  }));
}
