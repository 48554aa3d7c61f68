// What the endpoints share, built once from the parsed options: the store and signer, sealing and sessions for the
// browser, the pages, audit events, the client lookup (registrations and metadata documents) and grant revocation.
import { createSealer } from '../crypto/signed-value';
import { createBrowserSession } from '../authorize/session';
import { createIssuerKeys } from '../id-jag/issuer-keys';
import { createClientDocumentResolver } from '../cimd/resolver';
import { createSafeFetcher, systemResolveHost } from '../outbound/safe-fetch';
import { createClientLookup, type OAuthContext, type UpstreamServices } from '../context';
import type { JwtSigner } from '../crypto/signer';
import { createEventEmitter } from '../events';
import { createBearerCache, type BearerCache } from '../middleware/bearer-cache';
import type { OAuthConfig } from '../options';
import { createPages } from '../pages/render';
import type { OAuthStore, UpstreamTokenStore } from '../store/types';
import { createUpstreamConnector } from '../upstream/client';
import { createUpstreamTokens } from '../upstream/tokens';
import { createStepUpWindow } from '../grants/step-up-window';

/** The shared services, and the bearer check's memory of grants (revocation clears it at once). */
export function createServices(
  store: OAuthStore,
  signer: JwtSigner,
  config: OAuthConfig,
): { ctx: OAuthContext; cache: BearerCache } {
  const sealer = createSealer(config.secret, config.now);
  const cache = createBearerCache(store, config.cache, config.now);
  const emit = createEventEmitter(
    config.onEvent,
    (error, req) =>
      req ? config.onError(error, req) : console.error('express-mcp-oauth: onEvent failed', error),
    config.now,
  );
  const settings = config.clientDocuments;
  // One fetcher, so one set of limits, for documents, clients' jwks_uri and enterprise IdPs' keys.
  const fetcher = createSafeFetcher({
    allowLoopback: settings.allowLoopback,
    timeoutMs: settings.timeoutMs,
    ca: settings.ca,
    resolveHost: settings.resolveHost ?? systemResolveHost,
  });
  // The resolver also fetches the jwks_uri of registered private_key_jwt clients, so it exists either way.
  const resolver = createClientDocumentResolver({
    settings,
    fetcher,
    scopeCatalogue: config.scopeNames,
    now: config.now,
    onFetched: (clientId, req) => emit(req, 'client.document_fetched', { clientId }),
    // The caller was told only that the fetch failed; the operator gets the whole story here.
    onFailed: ({ clientId, reason, detail }, req) =>
      emit(req, 'client.fetch_failed', { clientId, reason, detail }),
  });
  const upstream = createUpstreamServices(store, config);
  const clientLookup = createClientLookup(
    store,
    settings.enabled ? resolver : undefined,
    config.authMethods,
    config.now,
  );
  const ctx: OAuthContext = {
    store,
    signer,
    config,
    sealer,
    pages: createPages(config),
    session: createBrowserSession(config, sealer),
    findClient: clientLookup,
    forgetClient: clientLookup.forget,
    clientKeys: (client, options) => resolver.clientKeys(client, options),
    // Enterprise IdPs' and workload platforms' keys: fetched alike, each only for an issuer its grant trusts.
    issuerKeys:
      config.enterpriseIdps || config.workloadIdentity
        ? createIssuerKeys({
            fetcher,
            now: config.now,
            minCacheMs: settings.minCacheMs,
            maxCacheMs: settings.maxCacheMs,
            onFailed: ({ reason, detail }, req) => emit(req, 'idp.fetch_failed', { reason, detail }),
          })
        : undefined,
    upstream,
    stepUp: createStepUpWindow(store, config.stepUpWindowMs, config.now),
    revokeGrant: async (grantId, cause) => {
      // This process refuses the grant's tokens from now on, before the store has even answered.
      cache.forgetGrant(grantId);
      const revoked = Boolean(await store.revokeGrant(grantId));
      // Even when the store had revoked it already (a refresh token's reuse): the upstream tokens go with the grant.
      await upstream?.tokens?.forget(grantId);
      if (revoked && cause) {
        const { req, by, clientId, userId, actor } = cause;
        emit(req, 'grant.revoked', {
          grantId,
          by,
          clientId,
          userId,
          ...(actor === undefined ? {} : { actor }),
        });
      }
      return revoked;
    },
    emit,
  };
  return { ctx, cache };
}

/** Upstream sign-in's services; the tokens' part only when a provider keeps tokens (the store is checked for it). */
function createUpstreamServices(store: OAuthStore, config: OAuthConfig): UpstreamServices | undefined {
  const { upstream } = config;
  if (!upstream) return undefined;
  const connect = createUpstreamConnector();
  const tokens = upstream.keepsTokens
    ? createUpstreamTokens({
        store: store as OAuthStore & UpstreamTokenStore,
        secret: config.secret,
        upstream,
        connect,
        now: config.now,
        onError: (error) => console.error('express-mcp-oauth: upstream token revocation failed', error),
      })
    : undefined;
  return { config: upstream, connect, tokens };
}
