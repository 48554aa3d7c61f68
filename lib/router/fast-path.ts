// The API endpoints (token, revocation, introspection) served in front of Express. Express sets up every request it
// dispatches: it swaps the Node request's and response's prototypes for its own, which leaves every later property
// access on them slower, and walks the layers of the app and its routers. On a refresh grant that is about a third
// of the CPU (bench/README.md). fastPath(app) takes the requests it can serve whole, a POST of a plain form to one of
// these endpoints, and runs the very steps the router runs for them (endpoints.ts: apiRoutes); every other request
// goes to the app untouched, its body unread.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Request } from 'express';
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
   * with a 500.
   */
  before?: readonly NodeMiddleware[];
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

export type FastPath = (app: HostApp, options?: FastPathOptions) => RequestListener;

export function createFastPath(
  config: Pick<OAuthConfig, 'mountPath' | 'onError'>,
  api: ApiRoute[],
): FastPath {
  return function fastPath(app, options = {}) {
    if (typeof app !== 'function')
      throw new TypeError(
        'fastPath: pass your app (an Express app or a Node request listener): http.createServer(oauth.fastPath(app)).',
      );
    const before = options.before ?? [];
    if (!Array.isArray(before) || before.some((step) => typeof step !== 'function'))
      throw new TypeError('fastPath: before must be an array of (req, res, next) functions.');
    // The absolute path of each endpoint (the router is mounted at the issuer's path), with its whole chain.
    const chains = new Map<string, NodeMiddleware[]>(
      api.map(({ path, cors, post }) => [
        config.mountPath + path,
        [...before, ...((cors ? [apiCors, ...post] : post) as unknown as NodeMiddleware[])],
      ]),
    );
    const settings = typeof app.get === 'function' ? app : undefined;
    const fail = (req: IncomingMessage, res: ServerResponse, error: unknown) => {
      if (!res.headersSent) return sendOAuthError(res, toOAuthError(error, req, config));
      // As Express does: the answer is already on its way, so the connection is all there is left to end.
      config.onError(error, req as Request);
      req.socket.destroy();
    };

    return function serveFast(req, res) {
      // Only what the router would serve the same way: POST, the exact path (no query string, which the router
      // would also check), and a plain form body (read-form.ts). Anything else, the app decides.
      const chain = req.method === 'POST' ? chains.get(req.url ?? '') : undefined;
      if (!chain || !isPlainForm(req as Request, BODY_LIMIT_BYTES)) return app(req, res);
      const fields = req as IncomingMessage & { ip?: string; app?: unknown; query?: unknown };
      fields.ip = proxyAddress(req, (settings?.get!('trust proxy fn') as Trust | undefined) ?? trustNone);
      // express-rate-limit reads the setting through req.app and writes its RateLimit headers with res.append; the
      // control-character check reads req.query.
      fields.app = settings ?? NO_SETTINGS;
      fields.query = {};
      (res as ServerResponse & { append?: typeof append }).append = append;
      let index = 0;
      const next = (error?: unknown): void => {
        if (error !== undefined && error !== null) return fail(req, res, error);
        const step = chain[index++];
        if (!step) return fail(req, res, new Error(`fastPath: nothing answered POST ${req.url}`));
        try {
          step(req, res, next);
        } catch (thrown) {
          fail(req, res, thrown);
        }
      };
      next();
    };
  };
}
