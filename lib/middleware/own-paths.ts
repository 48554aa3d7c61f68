// The OAuth router is usually mounted at the root of the host app, in front of its tool server: without this, every
// tool call would be matched against each OAuth route in turn before leaving the router. A request for a path no
// route here serves now leaves at once, after one lookup.
import type { RequestHandler } from 'express';

export interface OwnPaths {
  /** Records a path a route of the router serves, and returns it (to pass on to `router.route()`). */
  add(path: string): string;
  /** First in the router: a request for any other path goes on to what follows the router (`next('router')`). */
  skipOthers: RequestHandler;
}

export function createOwnPaths(): OwnPaths {
  const paths = new Set<string>();
  // Express matches routes without regard to case, with or without one trailing slash (its defaults, `caseSensitive`
  // and `strict` off, in Express 4 and 5): a path is looked up the same way, so no request a route would serve is
  // sent past it.
  const key = (path: string) =>
    (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase();
  return {
    add(path) {
      paths.add(key(path));
      return path;
    },
    skipOthers: function skipOtherPaths(req, _res, next) {
      next(paths.has(key(req.path)) ? undefined : 'router');
    },
  };
}
