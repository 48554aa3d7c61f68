// createOAuthRouter: parses the options once, builds every endpoint and mounts them on one Express router.
import express, { type Request, type RequestHandler, type Router } from 'express';
import { createClientDocumentResolver } from './cimd/resolver';
import { createSafeFetcher, systemResolveHost } from './cimd/safe-fetch';
import { createClientLookup, type OAuthContext } from './context';
import { createSealer } from './authorize/seal';
import type { JwtSigner } from './crypto/signer';
import { OAuthError } from './errors';
import { authorizePageHandler, decisionHandler, signInHandler } from './authorize/handlers';
import {
  authorizationServerMetadataHandler,
  jwksHandler,
  protectedResourceMetadataHandler,
} from './handlers/metadata';
import { registerHandler } from './handlers/register';
import { introspectHandler } from './handlers/introspect';
import { revokeHandler } from './handlers/revoke';
import { tokenHandler } from './handlers/token';
import { allowMethods } from './middleware/allowed-methods';
import { createRequireBearer, type RequireBearerOptions } from './middleware/bearer';
import { createBearerCache } from './middleware/bearer-cache';
import { refuseControlCharacters } from './middleware/control-characters';
import { openCors } from './middleware/cors';
import { createOwnPaths } from './middleware/own-paths';
import { createErrorHandler } from './middleware/error-handler';
import { createRateLimiters } from './middleware/rate-limits';
import {
  parseOptions,
  type LifetimeOptions,
  type OAuthConfig,
  type OAuthEndpoints,
  type OAuthRouterOptions,
} from './options';
import { createPages } from './pages';
import { decisionPath, protectedResourceMetadataPath, signInPath } from './paths';
import { createBrowserSession } from './authorize/session';
import { createEventEmitter } from './events';
import type { OAuthStore } from './store/types';
import type { ScopeCatalogue } from './util/scopes';

/** The router returned by createOAuthRouter, with what the host app needs beside it. */
export interface OAuthRouter extends Router {
  /** Middleware for the tool server: a valid access token for the resource, with the given scopes. */
  requireBearer(options?: RequireBearerOptions): RequestHandler;
  /** The well-known documents at their absolute paths; mount at the app's root when the issuer has a path. */
  wellKnown: Router;
  /**
   * Revokes a grant (a "connected app"): its refresh tokens at once, its access tokens at their next use. Say who
   * did it for the grant.revoked event (default `admin`), with the request when there is one. True if this call
   * revoked it.
   */
  revokeGrant(
    grantId: string,
    cause?: { by?: 'user' | 'admin'; req?: Request; userId?: string; clientId?: string },
  ): Promise<boolean>;
  /** Read-only facts about this server (issuer, endpoint URLs, resources, scopes, lifetimes); never its secret. */
  info: OAuthServerInfo;
  /**
   * The rate limits of the built-in sign-in form (failed sign-ins per address and per account), to mount in front of
   * any other sign-in form of the host app, after its body parser: the same counters (shared through the rate-limit
   * store when one is configured), so a guesser gains nothing by switching forms. A refused request goes to `next`
   * as an OAuthError too_many_requests (status 429).
   */
  signInLimits: RequestHandler[];
}

/** What the host app may read of the parsed options: public facts, frozen. */
export interface OAuthServerInfo {
  readonly issuer: string;
  readonly endpoints: Readonly<OAuthEndpoints>;
  readonly resources: readonly string[];
  readonly scopes: ScopeCatalogue;
  readonly lifetimes: Readonly<Required<LifetimeOptions>>;
}

const BODY_LIMIT = '16kb';

export function createOAuthRouter(
  store: OAuthStore,
  signer: JwtSigner,
  options: OAuthRouterOptions,
): OAuthRouter {
  if (!store || typeof store.findClient !== 'function')
    throw new TypeError(
      'createOAuthRouter: the first argument must be a store (e.g. createSqliteStore(path)).',
    );
  if (typeof store.useAssertionId !== 'function')
    throw new TypeError(
      'createOAuthRouter: the store has no useAssertionId(); private_key_jwt needs it (see OAuthStore in the README).',
    );
  if (!signer || typeof signer.signAccessToken !== 'function')
    throw new TypeError('createOAuthRouter: the second argument must be a signer (createJwtSigner()).');
  const config = parseOptions(options);
  const sealer = createSealer(config.secret, config.now);
  const pages = createPages(config);
  const cache = createBearerCache(store, config.cache, config.now);
  const fetchSettings = config.clientDocuments;
  const fetcher = createSafeFetcher({
    allowLoopback: fetchSettings.allowLoopback,
    timeoutMs: fetchSettings.timeoutMs,
    ca: fetchSettings.ca,
    resolveHost: fetchSettings.resolveHost ?? systemResolveHost,
  });
  // The resolver also fetches the jwks_uri of registered private_key_jwt clients, so it exists either way.
  const emit = createEventEmitter(
    config.onEvent,
    (error, req) =>
      req ? config.onError(error, req) : console.error('express-mcp-oauth: onEvent failed', error),
    config.now,
  );
  const resolver = createClientDocumentResolver({
    settings: fetchSettings,
    fetcher,
    scopeCatalogue: config.scopeNames,
    now: config.now,
    onFetched: (clientId, req) => emit(req, 'client.document_fetched', { clientId }),
    // The caller was told only that the fetch failed; the operator gets the whole story here.
    onFailed: ({ clientId, reason, detail }, req) =>
      emit(req, 'client.fetch_failed', { clientId, reason, detail }),
  });
  const ctx: OAuthContext = {
    store,
    signer,
    config,
    sealer,
    pages,
    session: createBrowserSession(config, sealer),
    findClient: createClientLookup(store, fetchSettings.enabled ? resolver : undefined),
    clientKeys: (client, options) => resolver.clientKeys(client, options),
    revokeGrant: async (grantId, cause) => {
      // This process refuses the grant's tokens from now on, before the store has even answered.
      cache.forgetGrant(grantId);
      const revoked = Boolean(await store.revokeGrant(grantId));
      if (revoked && cause) {
        const { req, by, clientId, userId } = cause;
        emit(req, 'grant.revoked', { grantId, by, clientId, userId });
      }
      return revoked;
    },
    emit,
  };
  const limits = createRateLimiters(config, emit);
  const json = express.json({ limit: BODY_LIMIT, type: ['application/json', 'application/*+json'] });
  const form = express.urlencoded({ extended: false, limit: BODY_LIMIT, parameterLimit: 50 });
  // RFC 7591 §3.2.2: registration metadata that cannot be read is invalid_client_metadata, not invalid_request.
  const registrationJson: express.RequestHandler = function parseRegistrationJson(req, res, next) {
    json(req, res, (error?: { type?: string }) =>
      next(
        error?.type === 'entity.parse.failed'
          ? new OAuthError('invalid_client_metadata', 'The client metadata is not valid JSON.')
          : error,
      ),
    );
  };
  // The token and revocation endpoints take a form (RFC 6749 §3.2) or JSON: one parser, chosen by Content-Type, so
  // the common form request does not also pass through the JSON parser's type check.
  const formOrJson: express.RequestHandler = function parseFormOrJson(req, res, next) {
    if (req.is('application/x-www-form-urlencoded')) return form(req, res, next);
    json(req, res, next);
  };
  const errorHandler = createErrorHandler(config, pages);
  const plainText = refuseControlCharacters();

  // Public documents: GET with open CORS (set by the document handler itself, one step less on a hot path),
  // OPTIONS for preflights, 405 for the rest.
  const metadataCors = openCors(['GET']);
  const router = express.Router() as OAuthRouter;
  const own = createOwnPaths();
  router.use(own.skipOthers);
  const serveDocument = (target: express.Router, path: string, handler: express.RequestHandler) =>
    target
      .route(target === router ? own.add(path) : path)
      .get(handler)
      .options(metadataCors)
      .all(allowMethods(['GET']));
  const asMetadata = authorizationServerMetadataHandler(ctx);
  const mountWellKnown = (target: express.Router) => {
    // RFC 8414 §3.1: for an issuer with a path, the well-known segment goes between host and path.
    serveDocument(target, `/.well-known/oauth-authorization-server${config.mountPath}`, asMetadata);
    for (const resource of config.resources) {
      serveDocument(
        target,
        protectedResourceMetadataPath(resource),
        protectedResourceMetadataHandler(ctx, resource),
      );
    }
  };
  const wellKnown = express.Router();
  mountWellKnown(wellKnown);
  wellKnown.use(errorHandler);

  if (config.mountPath === '') {
    // Mounted at the root, the documents sit in this router itself rather than one router deeper.
    mountWellKnown(router);
  } else {
    // Clients that append the well-known suffix to the issuer find it too.
    serveDocument(router, '/.well-known/oauth-authorization-server', asMetadata);
  }
  const { paths } = config;
  serveDocument(router, paths.jwks, jwksHandler(ctx));
  router
    .route(own.add(paths.registration))
    .all(openCors(['POST']))
    .post(
      limits.register,
      registrationJson,
      refuseControlCharacters('invalid_client_metadata'),
      registerHandler(ctx),
    )
    .all(allowMethods(['POST']));
  router
    .route(own.add(paths.authorization))
    .get(pages.headers, limits.authorize, plainText, authorizePageHandler(ctx))
    .all(allowMethods(['GET']));
  router
    .route(own.add(signInPath(paths)))
    .post(
      pages.headers,
      limits.authorize,
      form,
      plainText,
      limits.signIn,
      limits.signInPerAccount,
      limits.signInSlowdown,
      signInHandler(ctx),
    )
    .all(allowMethods(['POST']));
  router
    .route(own.add(decisionPath(paths)))
    .post(pages.headers, limits.authorize, form, plainText, decisionHandler(ctx))
    .all(allowMethods(['POST']));
  router
    .route(own.add(paths.token))
    .all(openCors(['POST']))
    .post(limits.token, formOrJson, plainText, tokenHandler(ctx))
    .all(allowMethods(['POST']));
  router
    .route(own.add(paths.revocation))
    .all(openCors(['POST']))
    .post(limits.revoke, formOrJson, plainText, revokeHandler(ctx))
    .all(allowMethods(['POST']));
  // Server to server: no CORS, so no browser page can ask.
  router
    .route(own.add(paths.introspection))
    .post(limits.introspect, formOrJson, plainText, introspectHandler(ctx))
    .all(allowMethods(['POST']));
  router.use(errorHandler);

  router.requireBearer = createRequireBearer(ctx, cache);
  router.wellKnown = wellKnown;
  router.revokeGrant = (grantId, cause = {}) =>
    ctx.revokeGrant(grantId, { ...cause, by: cause.by ?? 'admin' });
  router.info = Object.freeze({
    issuer: config.issuer,
    endpoints: Object.freeze({ ...config.endpoints }),
    resources: Object.freeze([...config.resources]),
    scopes: config.scopes,
    lifetimes: Object.freeze({ ...config.lifetimes }),
  });
  router.signInLimits = [limits.signIn, limits.signInPerAccount, limits.signInSlowdown];
  return router;
}
