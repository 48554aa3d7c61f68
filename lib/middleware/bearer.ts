// The bearer check for the tool server (RFC 6750, RFC 9068 §4, RFC 9728 §5.1). It runs on every tool call, so all
// per-route work (header templates, the resource URL) is done once, when the middleware is created.
import type { ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import type { OAuthContext } from '../context';
import type { ActClaim } from '../crypto/act';
import { isUnknownKeyError } from '../crypto/signer';
import { OAuthError, isOAuthError } from '../errors';
import { isStoreUnavailable } from '../store/unavailable';
import { storeUnavailable } from './error-handler';
import { protectedResourceMetadataUrl } from '../paths';
import type { BearerCache, VerifiedToken } from './bearer-cache';
import {
  refuseBearer,
  SCOPE_REFUSAL_MARKER,
  type DpopChallengeOptions,
  type ScopeRefusalMarker,
} from './bearer-refusal';
import { readDpopHeader, verifyDpopProof } from '../dpop/proof';
import { writeJson } from '../util/json-response';

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
  /**
   * For a DPoP-bound token (RFC 9449), the thumbprint of its key: this request came with a fresh proof made with it.
   * Absent for a bearer token.
   */
  jkt?: string;
  /**
   * For a token from a token exchange (RFC 8693 §4.1), who acts for the user: `act.sub` the latest actor (the
   * exchanging client, or the tool server), a nested `act` those before. Only a downstream resource's route sees one.
   */
  act?: ActClaim;
  extra: { userId: string; grantId: string };
}

/** An Express request that passed requireBearer. */
export type AuthenticatedRequest = Request & { auth: BearerAuth };

/** Options of requireBearer. */
export interface RequireBearerOptions {
  /** Scopes the route needs; all of them must be granted. Default: none. */
  scopes?: string[];
  /**
   * The protected resource this route belongs to; tokens for any other audience are refused. One of the router's
   * resources, or a downstream resource of its tokenExchange (an API of the same app that tools call with exchanged
   * tokens). Default: the first resource.
   */
  resource?: string;
}

/** RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=". */
const BEARER_HEADER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** RFC 9449 §7.1: the DPoP scheme, with the same token68 syntax. */
const DPOP_HEADER = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * The path of the URL a request was sent to, as a client names it in a proof's htu: an absolute-form request target
 * gives its path only (the origin is this server's, never the request's). A path that a URL parser would rewrite
 * (dot segments, "%2e", "//host") gives "", which no htu matches: Express routes the path as sent, so a proof for
 * "/mcp" must not pass at "/files/%2e%2e/mcp" because both normalise to the same URL.
 */
function requestPath(originalUrl: string): string {
  const base = 'http://request.invalid';
  // Not reached through Express, which routes no target a URL parser refuses (Node passes "http://[" on, Express
  // answers 404), nor through oauth.fastPath, which takes only exact paths; kept so that new URL below can never throw.
  // Stryker disable next-line all: not reached (above)
  if (!URL.canParse(originalUrl, base)) return '';
  const { pathname } = new URL(originalUrl, base);
  // Stryker disable next-line Regex,StringLiteral: equivalent, any string has a path group; an empty path reads as "/"
  const sent = /^(?:[a-z][a-z\d+.-]*:\/\/[^/?#]*)?([^?#]*)/i.exec(originalUrl)![1] || '/';
  return sent === pathname ? pathname : '';
}

export function createRequireBearer(
  { config, signer, store, stepUp }: Pick<OAuthContext, 'config' | 'signer' | 'store' | 'stepUp'>,
  cache: BearerCache,
): (options?: RequireBearerOptions) => RequestHandler {
  const { dpop } = config;
  return function requireBearer(options = {}) {
    const resource = (options.resource ?? config.resources[0]!).replace(/\/+$/, '');
    const own = config.operatorResources.get(resource);
    if (!config.resources.includes(resource) && !config.tokenExchange?.resources.has(resource) && !own) {
      throw new TypeError(
        `requireBearer: "${resource}" is none of the router's resources (${config.resources.join(', ')}), its ` +
          "tokenExchange's downstream resources and its operatorResources.",
      );
    }
    // An operator resource's tokens carry its own scopes (grants/operator-resources.ts), never the catalogue's.
    const offered = own ? new Set(Object.keys(own)) : config.scopeNames;
    const needed = options.scopes ?? [];
    for (const scope of needed) {
      if (!offered.has(scope))
        throw new TypeError(
          own
            ? `requireBearer: "${scope}" is not a scope of the operator resource ${resource}.`
            : `requireBearer: "${scope}" is not in the scope catalogue.`,
        );
    }
    const resourceUrl = new URL(resource);
    const metadataUrl = protectedResourceMetadataUrl(resource);
    const routeScope = needed.length ? needed.join(' ') : undefined;
    const expected = { issuer: config.issuer, audience: resource };
    // Stryker disable next-line ObjectLiteral: equivalent, refuseBearer's default algorithms are the same list
    const bearerChallenge: DpopChallengeOptions | undefined = dpop && { algorithms: dpop.algorithms };
    const dpopChallenge: DpopChallengeOptions | undefined = dpop && {
      algorithms: dpop.algorithms,
      used: true,
    };
    // The step-up window's mark (grants/step-up-window.ts), one function per route: a store that fails to write it
    // costs the step-up, never the answer.
    const markGrant: ScopeRefusalMarker | undefined =
      stepUp &&
      ((grantId, res) =>
        stepUp
          .mark(grantId)
          .catch((error: unknown) => config.onError(error, (res as ServerResponse & { req: Request }).req)));
    const refuse = (res: Response, error: OAuthError | undefined, usedDpop = false) =>
      refuseBearer(res, metadataUrl, error, routeScope, usedDpop ? dpopChallenge : bearerChallenge);

    return function checkBearerToken(req, res, next) {
      const header = req.headers.authorization;
      // Stryker disable next-line ConditionalExpression: equivalent, a shortcut: "undefined" matches neither scheme below
      if (!header) return refuse(res, undefined);
      // Another scheme (Basic, say) counts as no credentials at all (RFC 6750 §3.1); so does DPoP while it is off.
      const usedDpop = !/^bearer /i.test(header);
      if (usedDpop && !(dpop && /^dpop /i.test(header))) return refuse(res, undefined);
      // The common case, a token verified before: found as is, it needs no further parsing.
      // Stryker disable next-line MethodExpression: equivalent, the fast path only: a miss is parsed below and finds the same cached token
      let token = header.slice(usedDpop ? 5 : 7);
      let known = cache.verifiedToken(token, resource);
      // Stryker disable next-line ConditionalExpression: equivalent, the fast path only: a cached token read whole from "Bearer <token>" also passes the full parse
      if (!known) {
        const match = (usedDpop ? DPOP_HEADER : BEARER_HEADER).exec(header);
        if (!match) {
          const form = usedDpop ? 'DPoP' : 'Bearer';
          return refuse(
            res,
            new OAuthError('invalid_request', `Send the token as "Authorization: ${form} <token>".`),
            usedDpop,
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
            signer
              .verifyAccessTokenFresh(presented, expected)
              .then(
                (claims) => proceed(presented, cache.rememberToken(presented, resource, claims)),
                (again: unknown) => (isOAuthError(again) ? refuse(res, again, usedDpop) : next(again)),
              )
              .catch(next);
            return;
          }
          return refuse(res, error, usedDpop);
        }
      }
      proceed(token, known);

      function proceed(token: string, known: VerifiedToken) {
        const jkt = known.claims.cnf?.jkt;
        if (jkt === undefined && !usedDpop) return checkGrant(token, known);
        // RFC 9449 §7.1: a bound token is worth nothing without a proof of its key, so it never passes as Bearer.
        if (!usedDpop) {
          return refuse(
            res,
            new OAuthError(
              'invalid_token',
              'This access token is bound to a DPoP key: send it as "Authorization: DPoP <token>" with a DPoP proof.',
            ),
            true,
          );
        }
        if (jkt === undefined) {
          return refuse(
            res,
            new OAuthError(
              'invalid_token',
              'This access token is not DPoP-bound: send it as "Authorization: Bearer <token>".',
            ),
            true,
          );
        }
        proveKey(token, jkt)
          .then(
            () => checkGrant(token, known, jkt),
            (error: unknown) => (isOAuthError(error) ? refuse(res, error, true) : storeFailed(error)),
          )
          // Whatever goes wrong in answering reaches the error handler: a request is never left hanging.
          .catch(next);
      }

      /** RFC 9449 §7.1 and §4.3: a fresh proof for this request and this token, made with the token's key. */
      async function proveKey(token: string, jkt: string): Promise<void> {
        try {
          const proof = readDpopHeader(req.headers.dpop);
          if (proof === undefined)
            throw new OAuthError(
              'invalid_dpop_proof',
              'Send a DPoP proof in the DPoP header with the token.',
            );
          const { jkt: proven } = await verifyDpopProof(proof, {
            method: req.method,
            // §4.3 item 9: the URL the client called, as this server publishes it; not the Host header's.
            url: resourceUrl.origin + requestPath(req.originalUrl ?? req.url),
            now: config.now(),
            accessToken: token,
            useJti: (key, jti, expiresAt) => store.useAssertionId!(`dpop ${key}`, jti, expiresAt),
          });
          if (proven !== jkt)
            throw new OAuthError(
              'invalid_token',
              'The DPoP proof is made with another key than the token’s.',
            );
        } catch (error) {
          // §7.1: at a protected resource a bad proof is a 401, as any other credential problem.
          // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent, every other OAuthError here is a 401 invalid_token already
          if (isOAuthError(error) && error.code === 'invalid_dpop_proof')
            throw new OAuthError(error.code, error.description, { status: 401 });
          throw error;
        }
      }

      function checkGrant(token: string, known: VerifiedToken, jkt?: string) {
        const { claims, scopes } = known;
        // Only a person's grant has a refresh token to be sent back to authorize from (grants/step-up-window.ts). The
        // mark is written before the 403 goes out: the client's refresh may follow at once, on another instance. A
        // store that fails to write it costs the step-up, never the answer.
        // Not a token from a token exchange either: it names its subject's grant, but its holder (another client, a
        // tool server) has no refresh token of that grant, and a refusal of it must not send the subject's client back.
        const marks = markGrant !== undefined && claims.sub !== claims.client_id && claims.act === undefined;
        const admit = (active: boolean) => {
          if (!active)
            return refuse(
              res,
              new OAuthError('invalid_token', 'The access token has been revoked.'),
              usedDpop,
            );
          // Stryker disable next-line ConditionalExpression: equivalent, a shortcut: with no scope needed none is missing
          if (needed.length) {
            const missing = needed.filter((scope) => !scopes.includes(scope));
            if (missing.length) {
              const refusal = new OAuthError(
                'insufficient_scope',
                `This needs the scope ${missing.join(' ')}.`,
              );
              if (!marks) return refuse(res, refusal, usedDpop);
              markGrant(claims.grant_id, res)
                .then(() => refuse(res, refusal, usedDpop))
                .catch(next);
              return;
            }
          }
          const auth: BearerAuth & { [SCOPE_REFUSAL_MARKER]: ScopeRefusalMarker | undefined } = {
            token,
            clientId: claims.client_id,
            // A user's grant never has the client's id as its user (authorize/handlers.ts refuses it).
            actor: claims.sub === claims.client_id ? 'client' : 'user',
            userId: claims.sub,
            scopes: [...scopes],
            grantId: claims.grant_id,
            expiresAt: claims.exp,
            resource: resourceUrl,
            // Stryker disable next-line ConditionalExpression: equivalent, only "jkt" in auth tells { jkt: undefined } from no jkt
            ...(jkt === undefined ? {} : { jkt }),
            ...(claims.act === undefined ? {} : { act: claims.act }),
            extra: { userId: claims.sub, grantId: claims.grant_id },
            // Always present, so that every auth object has one shape.
            [SCOPE_REFUSAL_MARKER]: marks ? markGrant : undefined,
          };
          (req as AuthenticatedRequest).auth = auth;
          next();
        };
        // Usually answered from memory: no promise, no database read.
        const active = cache.isGrantActive(claims.grant_id);
        if (typeof active === 'boolean') return admit(active);
        active.then(admit, storeFailed).catch(next);
      }

      function storeFailed(error: unknown) {
        if (!isStoreUnavailable(error)) return next(error);
        // The tool server answers the outage itself: 503 with Retry-After, not the host app's 500.
        config.onError(error, req);
        res.setHeader('Retry-After', '5');
        writeJson(res, 503, storeUnavailable(error).toJSON());
      }
    };
  };
}
