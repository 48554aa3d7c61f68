// express-mcp-oauth/experimental: what may change or go in any release, even a patch. Named re-exports only.

/**
 * Serves the token, revocation and introspection endpoints of a router (and the host's own POST routes it names,
 * such as its /mcp) in front of the host app, without Express's per-request set-up (about a third of a grant's CPU):
 * `http.createServer(fastPath(oauth, app, { before, routes }))`. Every other request goes to `app` untouched. The
 * app's own middleware does not see the requests served here: pass what must run on them as `before`, plain Node
 * middleware.
 */
export { fastPath } from '../router/fast-path';
/** fastPath's options (before, routes, onRouteError), the host app it takes, and a plain Node middleware. */
export type { FastPathOptions, HostApp, NodeMiddleware } from '../router/fast-path';
