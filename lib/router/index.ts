// createOAuthRouter: checks its arguments, parses the options once, turns off what the store cannot keep, builds the
// shared services, mounts every endpoint on one Express router, and hands the host app what it needs beside it.
import { isClientIdUrl } from '../util/client-id';
import express, { type Request, type RequestHandler, type Router } from 'express';
import type { OAuthContext } from '../context';
import type { JwtSigner } from '../crypto/signer';
import {
  registerOperatorClient,
  type OperatorClient,
  type OperatorClientOptions,
} from '../grants/operator-clients';
import { createRequireBearer, type RequireBearerOptions } from '../middleware/bearer';
import { OAuthError } from '../errors';
import { createErrorHandler } from '../middleware/error-handler';
import { createOwnPaths } from '../middleware/own-paths';
import { createRateLimiters, signInLimitsOf } from '../middleware/rate-limits';
import { parseOptions, type LifetimeOptions, type OAuthEndpoints, type OAuthRouterOptions } from '../options';
import type { OAuthStore } from '../store/types';
import type { UpstreamToken } from '../upstream/tokens';
import type { ScopeCatalogue } from '../util/scopes';
import { createBodyParsers } from './body-parsers';
import { applyStoreCapabilities } from './capabilities';
import { apiRoutes, mountEndpoints, mountWellKnown, wellKnownRouter } from './endpoints';
import { attachFastPath, createFastPath } from './fast-path';
import { warnWithoutSecret } from './secret-warning';
import { createServices } from './services';
import { downstreamToken, type DownstreamToken } from '../token-exchange/downstream';

/** The router returned by createOAuthRouter, with what the host app needs beside it. */
export interface OAuthRouter extends Router {
  /** Middleware for the tool server: a valid access token for the resource, with the given scopes. */
  requireBearer(options?: RequireBearerOptions): RequestHandler;
  /** The well-known documents at their absolute paths; mount at the app's root when the issuer has a path. */
  wellKnown: Router;
  /**
   * Revokes a grant (a "connected app"): its refresh tokens at once, its access tokens at their next use. Say who
   * did it for the grant.revoked event (default `admin`; `actor`, an administrator's or an automation client's id),
   * with the request when there is one. True if this call revoked it.
   */
  revokeGrant(
    grantId: string,
    cause?: { by?: 'user' | 'admin'; req?: Request; userId?: string; clientId?: string; actor?: string },
  ): Promise<boolean>;
  /**
   * Registers a client on the operator's word: the only way to a client that may use the client_credentials grant
   * (a machine client acting without a user). Its secret, when it has one, is in the answer and nowhere else.
   */
  registerOperatorClient(options: OperatorClientOptions): Promise<OperatorClient>;
  /**
   * Disables a client (true) or enables it again (false), for an operator's console. A disabled client is treated as
   * unknown (invalid_client at the token endpoint, an error page at the authorization endpoint): at once by this
   * process, by every other instance within a minute. Disabling also ends its grants at once (a grant.revoked event
   * each, `by: 'admin'`); enabling gives none back. A client.disabled or client.enabled event names who did it
   * (`actor`, as you name them). Resolves false for a client the store does not hold. Needs a store with
   * setClientDisabled and revokeClientGrants.
   */
  setClientDisabled(
    clientId: string,
    disabled: boolean,
    cause?: { req?: Request; actor?: string },
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
  /**
   * The user's access token at the upstream provider they signed in with, for a tool to call its API: given
   * requireBearer's `req.auth` (or a grant id), for a provider with `keepTokens`. Refreshed upstream first when it
   * has expired (one refresh for concurrent callers, across instances). Rejects with an OAuthError: invalid_token
   * when the grant keeps none (signed in otherwise, revoked, or the provider refused to refresh: the user must
   * connect again), temporarily_unavailable when the provider cannot be reached or answers anything but
   * invalid_grant (the tokens stay; the next call tries again).
   */
  upstreamToken(auth: { grantId: string } | string): Promise<UpstreamToken>;
  /**
   * A token for a downstream API (the `tokenExchange` option's resources), for the user of requireBearer's
   * `req.auth` (or of an access token): the same exchange as the token-exchange grant (RFC 8693), in process, with
   * the tool server as the actor (`act.sub` is the resource the user's token was issued for). At most the user's
   * scopes (and the resource's), the `scope` asked for when given; it expires no later than the user's token, and
   * with their grant. Rejects with an OAuthError: invalid_target (a resource not listed), invalid_scope,
   * invalid_grant (the user's token is no longer live), or what the policy chose.
   */
  downstreamToken(
    auth: { token: string } | string,
    request: { resource: string; scope?: string | readonly string[] },
  ): Promise<DownstreamToken>;
}

/** What the host app may read of the parsed options: public facts, frozen. */
export interface OAuthServerInfo {
  readonly issuer: string;
  readonly endpoints: Readonly<OAuthEndpoints>;
  readonly resources: readonly string[];
  readonly scopes: ScopeCatalogue;
  readonly lifetimes: Readonly<Required<LifetimeOptions>>;
}

export function createOAuthRouter(
  store: OAuthStore,
  signer: JwtSigner,
  options: OAuthRouterOptions,
): OAuthRouter {
  checkArguments(store, signer);
  const config = applyStoreCapabilities(store, parseOptions(options));
  warnWithoutSecret(options.secret);
  const { ctx, cache } = createServices(store, signer, config);
  const limits = createRateLimiters(config, ctx.emit);
  const errorHandler = createErrorHandler(config, ctx.pages);

  const router = express.Router() as OAuthRouter;
  // A request for a path none of the routes serve leaves at this first layer instead of being matched against each.
  const own = createOwnPaths();
  router.use(own.skipOthers);
  // Mounted at the root, the well-known documents sit in this router itself rather than one router deeper.
  if (config.mountPath === '') mountWellKnown(router, ctx, own.add);
  const parsers = createBodyParsers();
  const api = apiRoutes(ctx, { limits, parsers });
  mountEndpoints(router, ctx, { limits, parsers, own, api });
  router.use(errorHandler);

  router.requireBearer = createRequireBearer(ctx, cache);
  attachFastPath(router, createFastPath(config, api));
  router.wellKnown = wellKnownRouter(ctx, errorHandler);
  router.revokeGrant = (grantId, cause = {}) =>
    ctx.revokeGrant(grantId, { ...cause, by: cause.by ?? 'admin' });
  router.registerOperatorClient = (clientOptions) =>
    registerOperatorClient(store, config.scopes, clientOptions, config.now(), [
      ...new Set([...config.operatorResources.values()].flatMap((scopes) => Object.keys(scopes))),
    ]);
  router.setClientDisabled = async (clientId, disabled, cause = {}) => {
    if (!store.setClientDisabled || !store.revokeClientGrants)
      throw new TypeError(
        'setClientDisabled: the store has no setClientDisabled() and revokeClientGrants(); implement them (see OAuthStore).',
      );
    // A document's client is fetched from its URL whenever it is not cached, never read from the stored copy alone.
    if (isClientIdUrl(clientId))
      throw new TypeError(
        'setClientDisabled: a client named by a metadata document URL cannot be disabled; it is fetched from its URL.',
      );
    if (!(await store.setClientDisabled(clientId, disabled))) return false;
    ctx.forgetClient(clientId);
    const actor = cause.actor === undefined ? {} : { actor: cause.actor };
    ctx.emit(cause.req, disabled ? 'client.disabled' : 'client.enabled', { clientId, ...actor });
    if (!disabled) return true;
    for (const grantId of await store.revokeClientGrants(clientId)) {
      // Revoked in the store already: forgotten here, its upstream tokens dropped, and told.
      cache.forgetGrant(grantId);
      await ctx.upstream?.tokens?.forget(grantId);
      ctx.emit(cause.req, 'grant.revoked', { grantId, by: 'admin', clientId, ...actor });
    }
    return true;
  };
  router.info = serverInfo(ctx);
  router.signInLimits = signInLimitsOf(limits);
  router.upstreamToken = async (auth) => {
    const grantId = typeof auth === 'string' ? auth : auth?.grantId;
    const tokens = ctx.upstream?.tokens;
    if (!tokens)
      throw new TypeError('upstreamToken: no upstream provider keeps tokens; set keepTokens: true on one.');
    if (typeof grantId !== 'string' || !(await store.isGrantActive(grantId)))
      throw new OAuthError('invalid_token', 'This grant is not active; connect again.');
    return tokens.accessToken(grantId);
  };
  router.downstreamToken = (auth, request) => downstreamToken(ctx, auth, request);
  return router;
}

function checkArguments(store: OAuthStore, signer: JwtSigner): void {
  if (!store || typeof store.findClient !== 'function')
    throw new TypeError(
      'createOAuthRouter: the first argument must be a store (e.g. createSqliteStore(path)).',
    );
  if (!signer || typeof signer.signAccessToken !== 'function')
    throw new TypeError('createOAuthRouter: the second argument must be a signer (createJwtSigner()).');
}

function serverInfo({ config }: Pick<OAuthContext, 'config'>): OAuthServerInfo {
  return Object.freeze({
    issuer: config.issuer,
    endpoints: Object.freeze({ ...config.endpoints }),
    resources: Object.freeze([...config.resources]),
    scopes: config.scopes,
    lifetimes: Object.freeze({ ...config.lifetimes }),
  });
}
