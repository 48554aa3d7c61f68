// Where each endpoint is mounted and what runs in front of it: CORS, rate limits, a body parser, the control-character
// check, then its handler; every other method gets 405 with Allow. Each handler gets only the services it uses.
import express, { type RequestHandler, type Router } from 'express';
import { authorizePageHandler, decisionHandler, signInHandler } from '../authorize/handlers';
import type { OAuthContext } from '../context';
import {
  authorizationServerMetadataHandler,
  jwksHandler,
  protectedResourceMetadataHandler,
} from '../handlers/metadata';
import { introspectHandler } from '../handlers/introspect';
import { deviceAuthorizationHandler } from '../handlers/device-authorization';
import { registerHandler } from '../handlers/register';
import { revokeHandler } from '../handlers/revoke';
import { tokenHandler } from '../handlers/token';
import { allowMethods } from '../middleware/allowed-methods';
import { refuseControlCharacters } from '../middleware/control-characters';
import { openCors } from '../middleware/cors';
import type { OwnPaths } from '../middleware/own-paths';
import { passThrough, signInLimitsOf, type RateLimiters } from '../middleware/rate-limits';
import {
  decisionPath,
  deviceCodePath,
  deviceDecisionPath,
  deviceSignInPath,
  protectedResourceMetadataPath,
  signInPath,
  upstreamStartPath,
} from '../paths';
import {
  deviceCodeHandler,
  deviceDecisionHandler,
  deviceEntryHandler,
  deviceSignInHandler,
} from '../authorize/device';
import { upstreamCallbackHandler, upstreamStartHandler } from '../authorize/upstream';
import { withRequestSpan } from '../telemetry/spans';
import type { BodyParsers } from './body-parsers';

/** A route's steps without the limits that are off: each step is one more layer Express walks through. */
const steps = (...handlers: RequestHandler[]) => handlers.filter((handler) => handler !== passThrough);

/** The first step of an endpoint's route: its span (`oauth token`, ...), when the host app registered an SDK. */
const traced =
  (endpoint: string): RequestHandler =>
  (req, res, next) =>
    withRequestSpan(`oauth ${endpoint}`, req, res, next, { 'oauth.endpoint': endpoint });

// Public documents: GET with open CORS (set by the document handler itself, one step less on a hot path), OPTIONS
// for preflights, 405 for the rest.
const metadataCors = openCors(['GET']);

function serveDocument(target: Router, path: string, handler: RequestHandler): void {
  target
    .route(path)
    .get(handler)
    .options(metadataCors)
    .all(allowMethods(['GET']));
}

/** The well-known documents (RFC 8414 §3.1, RFC 9728 §3.1) on `target`, at their absolute paths. */
export function mountWellKnown(
  target: Router,
  ctx: Pick<OAuthContext, 'config'>,
  add: (path: string) => string = (path) => path,
): void {
  const { config } = ctx;
  // RFC 8414 §3.1: for an issuer with a path, the well-known segment goes between host and path.
  serveDocument(
    target,
    add(`/.well-known/oauth-authorization-server${config.mountPath}`),
    authorizationServerMetadataHandler(config),
  );
  for (const resource of config.resources) {
    serveDocument(
      target,
      add(protectedResourceMetadataPath(resource)),
      protectedResourceMetadataHandler(config, resource),
    );
  }
  // The operator's resources too (RFC 9728 §3): requireBearer's challenges point there.
  for (const [resource, scopes] of config.operatorResources) {
    serveDocument(
      target,
      add(protectedResourceMetadataPath(resource)),
      protectedResourceMetadataHandler(config, resource, scopes),
    );
  }
}

/** An API endpoint: its path below the issuer, whether browsers may call it, and the steps of its POST. */
export interface ApiRoute {
  path: string;
  cors: boolean;
  post: RequestHandler[];
}

/**
 * The endpoints clients call most (token, revocation, introspection), built once and shared by the router and the
 * fast path (fast-path.ts): the same steps, whichever of the two dispatches the request.
 */
export function apiRoutes(
  ctx: OAuthContext,
  { limits, parsers }: { limits: RateLimiters; parsers: BodyParsers },
): ApiRoute[] {
  const { paths } = ctx.config;
  const { formOrJson } = parsers;
  const plainText = refuseControlCharacters();
  return [
    {
      path: paths.token,
      cors: true,
      post: steps(traced('token'), limits.token, formOrJson, plainText, tokenHandler(ctx)),
    },
    {
      path: paths.revocation,
      cors: true,
      post: steps(traced('revocation'), limits.revoke, formOrJson, plainText, revokeHandler(ctx)),
    },
    // Server to server: no CORS, so no browser page can ask.
    {
      path: paths.introspection,
      cors: false,
      post: steps(traced('introspection'), limits.introspect, formOrJson, plainText, introspectHandler(ctx)),
    },
    ...(ctx.config.deviceAuthorization
      ? [
          {
            path: paths.deviceAuthorization,
            cors: true,
            post: steps(
              traced('device_authorization'),
              limits.deviceAuthorization,
              formOrJson,
              plainText,
              deviceAuthorizationHandler(ctx),
            ),
          },
        ]
      : []),
  ];
}

export const apiCors: RequestHandler = openCors(['POST']);

/** Every endpoint below the issuer, on the router; `own` records each path the router serves. */
export function mountEndpoints(
  router: Router,
  ctx: OAuthContext,
  {
    limits,
    parsers,
    own,
    api,
  }: { limits: RateLimiters; parsers: BodyParsers; own: OwnPaths; api: ApiRoute[] },
): void {
  const { config, pages } = ctx;
  const { paths } = config;
  const { form, registrationJson } = parsers;
  const plainText = refuseControlCharacters();
  // Every form a page posts (sign-in, consent, in the code flow and the device flow) is guarded alike.
  const formPost = [pages.headers, limits.authorize, form, plainText];
  const signInLimits = signInLimitsOf(limits);
  // The endpoints clients call most come first: Express matches a request against the routes in turn.
  for (const { path, cors, post } of api) {
    const route = router.route(own.add(path));
    if (cors) route.all(apiCors);
    route.post(...post).all(allowMethods(['POST']));
  }
  if (config.mountPath !== '') {
    // Clients that append the well-known suffix to the issuer find it too.
    serveDocument(
      router,
      own.add('/.well-known/oauth-authorization-server'),
      authorizationServerMetadataHandler(config),
    );
  }
  serveDocument(router, own.add(paths.jwks), jwksHandler(ctx.signer));
  router
    .route(own.add(paths.registration))
    .all(openCors(['POST']))
    .post(
      traced('registration'),
      limits.register,
      registrationJson,
      refuseControlCharacters('invalid_client_metadata'),
      registerHandler(ctx),
    )
    .all(allowMethods(['POST']));
  router
    .route(own.add(paths.authorization))
    .get(traced('authorization'), pages.headers, limits.authorize, plainText, authorizePageHandler(ctx))
    .all(allowMethods(['GET']));
  router
    .route(own.add(signInPath(paths)))
    .post(traced('sign_in'), ...formPost, ...signInLimits, signInHandler(ctx))
    .all(allowMethods(['POST']));
  router
    .route(own.add(decisionPath(paths)))
    .post(traced('decision'), ...formPost, decisionHandler(ctx))
    .all(allowMethods(['POST']));
  if (config.deviceAuthorization) {
    // RFC 8628 §3.3: the page the device names, then the pages of its flow below the authorization endpoint.
    router
      .route(own.add(paths.device))
      .get(traced('device'), pages.headers, limits.authorize, plainText, deviceEntryHandler(ctx))
      .all(allowMethods(['GET']));
    // §5.1: codes are guessed here, so wrong ones are limited per address, and any one code per code.
    router
      .route(own.add(deviceCodePath(paths)))
      .get(
        traced('device_code'),
        pages.headers,
        limits.authorize,
        plainText,
        limits.userCodePerCode,
        limits.userCode,
        deviceCodeHandler(ctx),
      )
      .all(allowMethods(['GET']));
    router
      .route(own.add(deviceSignInPath(paths)))
      .post(traced('device_sign_in'), ...formPost, ...signInLimits, deviceSignInHandler(ctx))
      .all(allowMethods(['POST']));
    router
      .route(own.add(deviceDecisionPath(paths)))
      .post(traced('device_decision'), ...formPost, deviceDecisionHandler(ctx))
      .all(allowMethods(['POST']));
  }
  if (config.upstream) {
    router
      .route(own.add(upstreamStartPath(paths)))
      .get(pages.headers, limits.authorize, plainText, upstreamStartHandler(ctx))
      .all(allowMethods(['GET']));
    for (const provider of config.upstream.providers.values()) {
      router
        .route(own.add(paths.upstreamCallback + provider.callbackSuffix))
        .get(pages.headers, limits.authorize, upstreamCallbackHandler(ctx, provider.id))
        .all(allowMethods(['GET']));
    }
  }
}

/** A router of its own for the well-known documents, for an app to mount at its root when the issuer has a path. */
export function wellKnownRouter(
  ctx: Pick<OAuthContext, 'config'>,
  errorHandler: express.ErrorRequestHandler,
): Router {
  const router = express.Router();
  mountWellKnown(router, ctx);
  router.use(errorHandler);
  return router;
}
