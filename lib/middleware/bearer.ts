// The bearer check for the tool server (RFC 6750, RFC 9068 §4, RFC 9728 §5.1). It runs on every tool call, so all
// per-route work (header templates, the resource URL) is done once, when the middleware is created.
import type { Request, RequestHandler, Response } from 'express';
import type { OAuthContext } from '../context';
import { isUnknownKeyError } from '../crypto/signer';
import { OAuthError, isOAuthError } from '../errors';
import { isStoreUnavailable } from '../store/unavailable';
import { storeUnavailable } from './error-handler';
import { protectedResourceMetadataUrl } from '../paths';
import type { BearerCache, VerifiedToken } from './bearer-cache';
import { refuseBearer } from './bearer-refusal';

/** What requireBearer puts on `req.auth`. It is a superset of the MCP SDK's AuthInfo, so the SDK passes it to tools. */
export interface BearerAuth {
  /** The access token itself. */
  token: string;
  clientId: string;
  /**
   * Whom the token acts for: `user`, a person who consented; `client`, nobody but the client itself (the
   * client_credentials grant of a client the operator registered), and `userId` is then the client's id (its `sub`,
   * RFC 9068 §2.2). The host app decides whose data a client may act on.
   */
  actor: 'user' | 'client';
  /** The token's `sub`: the user it acts for, or for `actor: 'client'` the client's id. */
  userId: string;
  scopes: string[];
  grantId: string;
  /** Expiry, in seconds since the epoch. */
  expiresAt: number;
  /** The resource (audience) the token was issued for. */
  resource: URL;
  extra: { userId: string; grantId: string };
}

/** An Express request that passed requireBearer. */
export type AuthenticatedRequest = Request & { auth: BearerAuth };

/** Options of requireBearer. */
export interface RequireBearerOptions {
  /** Scopes the route needs; all of them must be granted. Default: none. */
  scopes?: string[];
  /** The protected resource this route belongs to; tokens for any other audience are refused. Default: the first. */
  resource?: string;
}

/** RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=". */
const BEARER_HEADER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export function createRequireBearer(
  { config, signer }: Pick<OAuthContext, 'config' | 'signer'>,
  cache: BearerCache,
): (options?: RequireBearerOptions) => RequestHandler {
  return function requireBearer(options = {}) {
    const resource = (options.resource ?? config.resources[0]!).replace(/\/+$/, '');
    if (!config.resources.includes(resource)) {
      throw new TypeError(
        `requireBearer: "${resource}" is not one of the router's resources (${config.resources.join(', ')}).`,
      );
    }
    const needed = options.scopes ?? [];
    for (const scope of needed) {
      if (!config.scopeNames.has(scope))
        throw new TypeError(`requireBearer: "${scope}" is not in the scope catalogue.`);
    }
    const resourceUrl = new URL(resource);
    const metadataUrl = protectedResourceMetadataUrl(resource);
    const routeScope = needed.length ? needed.join(' ') : undefined;
    const expected = { issuer: config.issuer, audience: resource };
    const refuse = (res: Response, error: OAuthError | undefined) =>
      refuseBearer(res, metadataUrl, error, routeScope);

    return function checkBearerToken(req, res, next) {
      const header = req.headers.authorization;
      // Another scheme (Basic, say) counts as no credentials at all (RFC 6750 §3.1).
      if (!header || !/^bearer /i.test(header)) return refuse(res, undefined);
      // The common case, a token verified before: found as is, it needs no further parsing.
      // Stryker disable next-line MethodExpression: equivalent, the fast path only: a miss is parsed below and finds the same cached token
      let token = header.slice(7);
      let known = cache.verifiedToken(token, resource);
      // Stryker disable next-line ConditionalExpression: equivalent, the fast path only: a cached token read whole from "Bearer <token>" also passes the full parse
      if (!known) {
        const match = BEARER_HEADER.exec(header);
        if (!match) {
          return refuse(
            res,
            new OAuthError('invalid_request', 'Send the token as "Authorization: Bearer <token>".'),
          );
        }
        token = match[1]!;
        try {
          known =
            cache.verifiedToken(token, resource) ??
            cache.rememberToken(token, resource, signer.verifyAccessToken(token, expected));
        } catch (error) {
          if (!isOAuthError(error)) return next(error);
          // A key set shared with other instances may have a key this one has not read yet: read it, then decide.
          if (isUnknownKeyError(error) && signer.verifyAccessTokenFresh) {
            const presented = token;
            signer.verifyAccessTokenFresh(presented, expected).then(
              (claims) => proceed(presented, cache.rememberToken(presented, resource, claims)),
              (again: unknown) => (isOAuthError(again) ? refuse(res, again) : next(again)),
            );
            return;
          }
          return refuse(res, error);
        }
      }
      proceed(token, known);

      function proceed(token: string, known: VerifiedToken) {
        const { claims, scopes } = known;
        const admit = (active: boolean) => {
          if (!active)
            return refuse(res, new OAuthError('invalid_token', 'The access token has been revoked.'));
          // Stryker disable next-line ConditionalExpression: equivalent, a shortcut: with no scope needed none is missing
          if (needed.length) {
            const missing = needed.filter((scope) => !scopes.includes(scope));
            if (missing.length) {
              return refuse(
                res,
                new OAuthError('insufficient_scope', `This needs the scope ${missing.join(' ')}.`),
              );
            }
          }
          (req as AuthenticatedRequest).auth = {
            token,
            clientId: claims.client_id,
            // A user's grant never has the client's id as its user (authorize/handlers.ts refuses it).
            actor: claims.sub === claims.client_id ? 'client' : 'user',
            userId: claims.sub,
            scopes: [...scopes],
            grantId: claims.grant_id,
            expiresAt: claims.exp,
            resource: resourceUrl,
            extra: { userId: claims.sub, grantId: claims.grant_id },
          };
          next();
        };
        // Usually answered from memory: no promise, no database read.
        const active = cache.isGrantActive(claims.grant_id);
        if (typeof active === 'boolean') return admit(active);
        active.then(admit, (error: unknown) => {
          if (!isStoreUnavailable(error)) return next(error);
          // The tool server answers the outage itself: 503 with Retry-After, not the host app's 500.
          config.onError(error, req);
          res.setHeader('Retry-After', '5');
          res.status(503).json(storeUnavailable(error).toJSON());
        });
      }
    };
  };
}
