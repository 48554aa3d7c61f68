// The API endpoints (token, revocation, introspection), and the host's own routes it names (its /mcp), served in
// front of Express. Express sets up every request it dispatches: it swaps the Node request's and response's
// prototypes for its own, which leaves every later property access on them slower, and walks the layers of the app
// and its routers. On a refresh grant that is about a third of the CPU, on an MCP ping about half (bench/README.md).
// fastPath(oauth, app), the experimental entry (express-mcp-oauth/experimental), takes the requests it can serve whole, a POST of a plain form to one of these endpoints, and runs the
// very steps the router runs for them (endpoints.ts: apiRoutes); a POST to one of the host's `routes` runs that
// route's chain, written for Node's request and response (requireBearer and createMcpEndpoint are); every other
// request goes to the app untouched, its body unread.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { sendOAuthError, toOAuthError } from '../middleware/error-handler';
import type { OAuthConfig } from '../options';
import { BODY_LIMIT_BYTES } from './body-parsers';
import { apiCors, type ApiRoute } from './endpoints';
import { isPlainForm } from './read-form';

// Express's own module for req.ip, so that an address (in events, and the rate limits' key) is the one Express
// would report for the same request and `trust proxy` setting.
const proxyAddress = require('proxy-addr') as (
  req: IncomingMessage,
  trust: (address: string, hop: number) => boolean,
) => string;

/** A Node middleware: no Express helpers on `req` or `res`, `next(error)` to fail. */
export type NodeMiddleware = (
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

export interface FastPathOptions {
  /**
   * What the host app must run on these requests too, in order, before the endpoint (request ids, logs, a Host
   * check): its own middleware in front of the OAuth router does not see them. Each gets the plain Node request
   * and response; it answers (and does not call `next`) to stop the request, or calls `next(error)` to fail it
   * (a 500, or `onRouteError`'s answer on one of `routes`). Which chain serves a request is chosen before these run:
   * rewriting `req.url` here does not change it.
   */
  before?: readonly NodeMiddleware[];
  /**
   * More POST endpoints of the host app served here, after `before`: each exact path (`'/mcp'`, no query string) with
   * the chain that serves it, such as `[oauth.requireBearer(), createMcpEndpoint(...)]`. The same chain stays mounted
   * in the app, which serves every other request to that path (GET, OPTIONS, `/mcp/`). Its handlers get the plain
   * Node request and response: no Express helpers (`res.json`, `req.params`, `req.body`), no app settings. (Express
   * handlers are accepted by type, as the library's own are typed so; they must not use those helpers.) The last step
   * must answer: `next()` past it, or `next('route')`, is an error here, where Express would try its next route.
   */
  routes?: Readonly<Record<string, readonly (NodeMiddleware | RequestHandler)[]>>;
  /**
   * Answers an error one of `routes` failed with (`next(error)`, a throw), before anything was sent: the app's own
   * error answer, say a JSON-RPC error for /mcp. Default: the OAuth error JSON (RFC 6749 §5.2), 503 when the store
   * is unavailable, 500 otherwise.
   */
  onRouteError?: (error: unknown, req: IncomingMessage, res: ServerResponse) => void;
}

/** The host app: its request listener, and (an Express app, 4 or 5) its `trust proxy` setting. */
export type HostApp = RequestListener & { get?(setting: string): unknown };

type Trust = (address: string, hop: number) => boolean;
const trustNone: Trust = () => false;
/** For express-rate-limit's checks of the setting, when the host app is not Express: no proxy trusted. */
const NO_SETTINGS = { get: (setting: string) => (setting === 'trust proxy' ? false : undefined) };

/** Express's res.append (a header's values added to those already set), for express-rate-limit. */
function append(this: ServerResponse, name: string, value: string | string[]): ServerResponse {
  return this.appendHeader(name, value);
}

/** A router's fast path, built with it (createOAuthRouter) so that it runs the router's own steps. */
type FastPath = (app: HostApp, options?: FastPathOptions) => RequestListener;

// Each router's fast path, found from the router: the experimental entry reaches it without a property on the
// router, so that the root's OAuthRouter type says nothing of it.
const fastPaths = new WeakMap<object, FastPath>();

/** Records a router's fast path (createOAuthRouter does, for every router). */
export function attachFastPath(router: object, serve: FastPath): void {
  fastPaths.set(router, serve);
}

/**
 * The token, revocation and introspection endpoints of `oauth` in front of the host app, for its HTTP server:
 * `http.createServer(fastPath(oauth, app))`. Experimental: see FastPathOptions for what it does not run.
 */
export function fastPath(oauth: object, app: HostApp, options?: FastPathOptions): RequestListener {
  // WeakMap.get answers undefined for anything that is not an object, null included.
  const serve = fastPaths.get(oauth);
  if (!serve)
    throw new TypeError(
      'fastPath: the first argument must be the router createOAuthRouter returned: fastPath(oauth, app).',
    );
  return serve(app, options);
}

/** One path's chain, and whether it is one of the host's routes (which read their own bodies) or the router's. */
interface Chain {
  steps: NodeMiddleware[];
  hostRoute: boolean;
}

/** The host's routes, checked once: each an absolute path of its own with a chain of functions. */
function hostChains(
  routes: FastPathOptions['routes'],
  before: readonly NodeMiddleware[],
  taken: ReadonlySet<string>,
): Array<[string, Chain]> {
  if (routes === undefined) return [];
  if (typeof routes !== 'object' || routes === null || Array.isArray(routes))
    throw new TypeError("fastPath: routes must be an object of paths and chains, e.g. { '/mcp': [...] }.");
  return Object.entries(routes).map(([path, steps]) => {
    if (!/^\/[^?#]*$/.test(path))
      throw new TypeError(`fastPath: the route "${path}" must be a path starting with "/", without ? or #.`);
    // As Express matches them (any case, a trailing slash or not): a route the router would have served instead.
    if (taken.has(path.toLowerCase().replace(/\/+$/, '')))
      throw new TypeError(`fastPath: the route "${path}" is one of the OAuth router's endpoints.`);
    if (!Array.isArray(steps) || steps.length === 0 || steps.some((step) => typeof step !== 'function'))
      throw new TypeError(`fastPath: the route "${path}" needs an array of (req, res, next) functions.`);
    return [path, { steps: [...before, ...(steps as NodeMiddleware[])], hostRoute: true }];
  });
}

export function createFastPath(
  config: Pick<OAuthConfig, 'mountPath' | 'onError'>,
  api: ApiRoute[],
): FastPath {
  return function fastPath(app, options = {}) {
    if (typeof app !== 'function')
      throw new TypeError(
        'fastPath: pass your app (an Express app or a Node request listener): http.createServer(fastPath(oauth, app)).',
      );
    const before = options.before ?? [];
    if (!Array.isArray(before) || before.some((step) => typeof step !== 'function'))
      throw new TypeError('fastPath: before must be an array of (req, res, next) functions.');
    const { onRouteError } = options;
    if (onRouteError !== undefined && typeof onRouteError !== 'function')
      throw new TypeError('fastPath: onRouteError must be a function (error, req, res).');
    // The absolute path of each endpoint (the router is mounted at the issuer's path), with its whole chain.
    const chains = new Map<string, Chain>(
      api.map(({ path, cors, post }) => [
        config.mountPath + path,
        {
          steps: [...before, ...((cors ? [apiCors, ...post] : post) as unknown as NodeMiddleware[])],
          hostRoute: false,
        },
      ]),
    );
    const taken = new Set([...chains.keys()].map((path) => path.toLowerCase()));
    for (const [path, chain] of hostChains(options.routes, before, taken)) chains.set(path, chain);
    const settings = typeof app.get === 'function' ? app : undefined;
    const fail = (req: IncomingMessage, res: ServerResponse, error: unknown, hostRoute: boolean) => {
      if (!res.headersSent) {
        if (!hostRoute || !onRouteError) return sendOAuthError(res, toOAuthError(error, req, config));
        try {
          return onRouteError(error, req, res);
        } catch (thrown) {
          error = thrown;
        }
      }
      // As Express does: the answer is already on its way (or the host's error answer failed), so the connection is
      // all there is left to end.
      config.onError(error, req as Request);
      req.socket.destroy();
    };

    return function serveFast(req, res) {
      // Only what the router would serve the same way: POST, the exact path (no query string, which the router
      // would also check), and a plain form body (read-form.ts); the host's routes read their bodies themselves.
      // Anything else, the app decides.
      const chain = req.method === 'POST' ? chains.get(req.url ?? '') : undefined;
      if (!chain || (!chain.hostRoute && !isPlainForm(req as Request, BODY_LIMIT_BYTES)))
        return app(req, res);
      const { steps, hostRoute } = chain;
      const fields = req as IncomingMessage & { ip?: string; app?: unknown; query?: unknown };
      fields.ip = proxyAddress(req, (settings?.get!('trust proxy fn') as Trust | undefined) ?? trustNone);
      // express-rate-limit reads the setting through req.app and writes its RateLimit headers with res.append; the
      // control-character check reads req.query.
      fields.app = settings ?? NO_SETTINGS;
      fields.query = {};
      (res as ServerResponse & { append?: typeof append }).append = append;
      let index = 0;
      const next = (error?: unknown): void => {
        if (error !== undefined && error !== null) return fail(req, res, error, hostRoute);
        const step = steps[index++];
        if (!step) return fail(req, res, new Error(`fastPath: nothing answered POST ${req.url}`), hostRoute);
        try {
          step(req, res, next);
        } catch (thrown) {
          fail(req, res, thrown, hostRoute);
        }
      };
      next();
    };
  };
}
