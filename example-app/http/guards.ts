// Guards every route of the app shares: the Host check (DNS rebinding) and the Bearer challenge the tool server
// sends with each of its 401 and 403 answers (RFC 6750 §3, RFC 9728 §5.1), so a client always learns where to
// authorize, whatever refused it.
import type { ServerResponse } from 'node:http';
import { OAuthError, refuseBearer } from 'express-mcp-oauth';
import type { NodeMiddleware } from 'express-mcp-oauth/experimental';

/**
 * Answers a refusal of the tool server with the library's Bearer refusal (the same challenge requireBearer and
 * createMcpEndpoint send): the status, `WWW-Authenticate` naming the resource metadata, and the error as JSON.
 */
export function refuseMcp(
  res: ServerResponse,
  status: 401 | 403,
  resourceMetadata: string,
  error: 'invalid_request' | 'invalid_token' | 'insufficient_scope',
  description: string,
  scope?: string,
  usedDpop = false,
): void {
  // RFC 9449 §7.1: a request made with a DPoP-bound token is answered in the DPoP scheme.
  const dpop = usedDpop ? { used: true } : undefined;
  refuseBearer(res, resourceMetadata, new OAuthError(error, description, { status }), scope, dpop);
}

/** The path of a request's target, in origin form (`/mcp?x`) or absolute form (`http://host/mcp`) alike. */
export function pathOf(url = ''): string {
  if (url.startsWith('/')) return url.split('?', 1)[0]!;
  return URL.canParse(url) ? new URL(url).pathname : url;
}

/**
 * DNS rebinding protection for every route: a request whose Host is not one of this server's names is refused
 * with 403 before anything runs (a page that rebinds its own name to 127.0.0.1 cannot reach the OAuth or account
 * routes either). Requests to the tool server get its Bearer challenge with the refusal. Plain Node middleware, so
 * that it guards the requests the OAuth fast path serves too.
 */
export function checkHost(allowedHosts: readonly string[], resourceMetadata: string): NodeMiddleware {
  const allowed = new Set(allowedHosts);
  const isToolServer = (path: string) => path === '/mcp' || path.startsWith('/mcp/');
  // Host headers already found allowed (a few: this server's names with their ports), so the check on every tool
  // call is one lookup instead of parsing a URL. Bounded, as a client chooses the port it writes there.
  const seen = new Set<string>();
  const isAllowed = (header: string) => {
    if (seen.has(header)) return true;
    const hostname = URL.canParse(`http://${header}`) ? new URL(`http://${header}`).hostname : undefined;
    if (!header || hostname === undefined || !allowed.has(hostname)) return false;
    if (seen.size < 100) seen.add(header);
    return true;
  };
  return function rejectForeignHost(req, res, next) {
    const header = req.headers.host ?? '';
    if (isAllowed(header)) return next();
    const description = `This server does not answer to the host ${header.slice(0, 100) || '(none)'}.`;
    if (isToolServer(pathOf(req.url)))
      return refuseMcp(res, 403, resourceMetadata, 'invalid_request', description);
    const body = JSON.stringify({ error: 'invalid_request', error_description: description });
    res.statusCode = 403;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.end(body);
  };
}
