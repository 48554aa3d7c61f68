// Guards every route of the app shares: the Host check (DNS rebinding) and the Bearer challenge the tool server
// sends with each of its 401 and 403 answers (RFC 6750 §3, RFC 9728 §5.1), so a client always learns where to
// authorize, whatever refused it.
import type { Request, RequestHandler, Response } from 'express';
import { OAuthError, refuseBearer } from 'express-mcp-oauth';

/**
 * Answers a refusal of the tool server with the library's Bearer refusal (the same challenge requireBearer and
 * createMcpHandler send): the status, `WWW-Authenticate` naming the resource metadata, and the error as JSON.
 */
export function refuseMcp(
  res: Response,
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

/**
 * DNS rebinding protection for every route: a request whose Host is not one of this server's names is refused
 * with 403 before anything runs (a page that rebinds its own name to 127.0.0.1 cannot reach the OAuth or account
 * routes either). Requests to the tool server get its Bearer challenge with the refusal.
 */
export function checkHost(allowedHosts: readonly string[], resourceMetadata: string): RequestHandler {
  const allowed = new Set(allowedHosts);
  const isToolServer = (req: Request) => req.path === '/mcp' || req.path.startsWith('/mcp/');
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
    if (isToolServer(req)) return refuseMcp(res, 403, resourceMetadata, 'invalid_request', description);
    res.status(403).json({ error: 'invalid_request', error_description: description });
  };
}
