// Clients identified by a metadata document URL: fetched through the SSRF-safe fetcher, validated, remembered
// within Cache-Control bounds, and saved to the store (so that grants name them). Also the JWKS of every client
// that authenticates with private_key_jwt, whether it came by document or by registration.
import type { ClientKey } from '../crypto/client-assertion';
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { Request } from 'express';
import { OAuthError, isOAuthError } from '../errors';
import type { ClientRecord, OAuthStore } from '../store/types';
import { validateJwks } from '../util/client-metadata';
import { clientIdUrlProblem, validateClientDocument } from './client-document';
import { createFetchCache } from './fetch-cache';
import { FetchRefusedError, type SafeFetcher } from './safe-fetch';

/** A client's public key, ready to verify with. */

export interface ClientDocumentSettings {
  enabled: boolean;
  minCacheMs: number;
  maxCacheMs: number;
  maxBytes: number;
}

export interface ClientDocumentResolver {
  /** The client a document URL describes; invalid_client saying what went wrong otherwise. */
  findClient(url: string, req?: Request): Promise<ClientRecord>;
  /**
   * The client's public keys, from its jwks or its jwks_uri. `refetch` asks again for a jwks_uri copy older than
   * a few seconds: a key the client has just rotated in.
   */
  clientKeys(client: ClientRecord, options?: { refetch?: boolean }): Promise<ClientKey[]>;
}

const MAX_DOCUMENTS = 1000;
const MAX_JWKS_BYTES = 16 * 1024;
/** An unknown kid refetches the JWKS once, but not more often than this per URL (no fetch amplification). */
const REFETCH_AFTER_MS = 10_000;

export function createClientDocumentResolver(
  settings: ClientDocumentSettings,
  fetcher: SafeFetcher,
  store: OAuthStore,
  scopeCatalogue: ReadonlySet<string>,
  now: () => number,
  /** Told once per fetched copy of a document, with the request that caused the fetch. */
  onFetched: (clientId: string, req: Request | undefined) => void = () => undefined,
): ClientDocumentResolver {
  const bounds = { now, minMs: settings.minCacheMs, maxMs: settings.maxCacheMs, maxEntries: MAX_DOCUMENTS };

  const documents = createFetchCache<ClientRecord>({
    ...bounds,
    async load(url) {
      const { body, cacheControl } = await fetcher.getJson(url, {
        maxBytes: settings.maxBytes,
        contentTypes: ['application/json'],
      });
      const client = validateClientDocument(url, body, scopeCatalogue, now());
      await store.saveClientDocument(client);
      return { value: client, cacheControl };
    },
  });

  const keySets = createFetchCache<ClientKey[]>({
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
        throw documentError(`The app's metadata document at ${url}`, error);
      }
    },

    async clientKeys(client, { refetch = false } = {}) {
      const { jwks, jwks_uri: jwksUri } = client.metadata as { jwks?: unknown; jwks_uri?: string };
      if (jwks !== undefined) return importKeys(jwks);
      if (typeof jwksUri !== 'string') return [];
      try {
        return (await keySets.get(jwksUri, refetch ? { maxAgeMs: REFETCH_AFTER_MS } : {})).value;
      } catch (error) {
        throw documentError(`The app's key set (jwks_uri) at ${jwksUri}`, error);
      }
    },
  };
}

/**
 * A failed fetch or an invalid document, as invalid_client in words a developer can act on. Anything else (the
 * store failing) is the server's own fault and goes on as it is.
 */
function documentError(what: string, error: unknown): unknown {
  if (isOAuthError(error)) {
    return new OAuthError(
      'invalid_client',
      `${what} is not valid: ${error.description.replace(/\.$/, '')}.`,
      { cause: error },
    );
  }
  if (!(error instanceof FetchRefusedError)) return error;
  return new OAuthError('invalid_client', `${what} could not be used: ${error.message}.`, { cause: error });
}

function importKeys(body: unknown): ClientKey[] {
  return validateJwks(body).keys.map((jwk) => ({
    kid: typeof jwk.kid === 'string' ? jwk.kid : undefined,
    kty: String(jwk.kty),
    crv: typeof jwk.crv === 'string' ? jwk.crv : undefined,
    alg: typeof jwk.alg === 'string' ? jwk.alg : undefined,
    use: typeof jwk.use === 'string' ? jwk.use : undefined,
    key: createPublicKey({ key: jwk as never, format: 'jwk' }),
  }));
}
