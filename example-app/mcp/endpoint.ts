// The MCP tool server at /mcp: Streamable HTTP (stateless, so any instance can answer any request), behind the
// bearer check, listing and running only the tools the token's scopes allow, for the token's user's company (a
// machine client's token: the company of the user the operator named for that client).
import type { AppDb } from '../db/database';
import express, { type RequestHandler, type Router } from 'express';
import type { AuthenticatedRequest, OAuthRouter, OAuthStore } from 'express-mcp-oauth';
import { createMcpEndpoint } from 'express-mcp-oauth/mcp';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { refuseMcp } from '../http/guards';
import { actingUserId } from '../operator-clients';
import { findUser, type AppUser } from '../users';
import {
  createBusinessMcpServer,
  createBusinessMcpServerV2,
  TOOL_SCOPES,
  type CallerExtra,
  type ToolServices,
} from './server';
import { createUserCache } from './user-cache';

export interface McpRoutesOptions {
  db: AppDb;
  oauth: OAuthRouter;
  /** Where a machine client's record (and the user it acts on) is read. */
  store: Pick<OAuthStore, 'findClient'>;
  /** The public URL of the MCP endpoint, i.e. the protected resource. */
  resource: string;
  /** The public base URL: its origin may always call /mcp from a browser. */
  baseUrl: string;
  /** More origins that may (ALLOWED_ORIGINS). */
  allowedOrigins: string[];
  serverName?: string;
  /** What tools reach beyond the database (the document renderer). */
  services?: ToolServices;
}

/**
 * Browser-based MCP clients call /mcp from other origins with a bearer or DPoP-bound token and its proof (no cookies),
 * and must read these.
 */
const allowCors: RequestHandler = function mcpCors(req, res, next) {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version');
  if (req.method !== 'OPTIONS') return next();
  res.setHeader('Access-Control-Allow-Methods', 'POST, GET, DELETE, OPTIONS');
  res.setHeader(
    'Access-Control-Allow-Headers',
    'Authorization, Content-Type, Accept, DPoP, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID',
  );
  res.setHeader('Access-Control-Max-Age', '86400');
  res.statusCode = 204;
  res.end();
};

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The MCP transport spec: a server MUST validate Origin, and refuse with 403 an origin it does not allow (a web page
 * the user happens to visit must not drive the tool server). A request without Origin (not from a browser) passes.
 */
export function checkOrigin(
  baseUrl: string,
  extra: readonly string[],
  resourceMetadata: string,
): RequestHandler {
  const base = new URL(baseUrl);
  const allowed = new Set([base.origin, ...extra]);
  const anyLoopback = LOOPBACK_HOSTS.has(base.hostname);
  return function rejectForeignOrigin(req, res, next) {
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    const parsed = URL.canParse(origin) ? new URL(origin) : undefined;
    const ok =
      parsed !== undefined &&
      (allowed.has(parsed.origin) ||
        (anyLoopback && LOOPBACK_HOSTS.has(parsed.hostname) && /^https?:$/.test(parsed.protocol)));
    if (ok) return next();
    const description = `The origin ${String(origin).slice(0, 200)} may not call this server.`;
    refuseMcp(res, 403, resourceMetadata, 'invalid_request', description);
  };
}

export interface McpRoutes {
  /** Every request to /mcp, mounted with `app.use('/mcp', router)`. */
  router: Router;
  /**
   * The chain of a tool call (POST /mcp), as the router runs it: for the OAuth fast path, which serves these ahead of
   * Express. Each step uses Node's request and response alone.
   */
  post: RequestHandler[];
}

export function createMcpRoutes({
  db,
  oauth,
  store,
  resource,
  baseUrl,
  allowedOrigins,
  serverName = 'business-service',
  services = {},
}: McpRoutesOptions): McpRoutes {
  const router = express.Router();
  const resourceMetadata = `${new URL(resource).origin}/.well-known/oauth-protected-resource${new URL(resource).pathname}`;
  const users = createUserCache((id) => findUser(db, id));
  // A client_credentials token names its client, not a user: the client acts on the user kept in its metadata by
  // `npm run client:create -- --user`. Cached per client id the same way, so a machine client's user deleted stops
  // its tokens within the same second, and a client with no such user is refused as a deleted user's token is.
  const clientUsers = createUserCache(async (clientId) => {
    const userId = actingUserId(await store.findClient(clientId));
    return userId === null ? null : findUser(db, userId);
  });

  // The token names its user; the tools need the user's company. A deleted user's tokens stop working within a
  // second (the cache's lifetime), even though the tokens themselves are still valid.
  const requireUser: RequestHandler = function requireUser(req, res, next) {
    const { auth } = req as AuthenticatedRequest;
    const admit = (user: AppUser | null) => {
      if (!user) {
        return refuseMcp(
          res,
          401,
          resourceMetadata,
          'invalid_token',
          'The user of this token no longer exists.',
          undefined,
          auth.jkt !== undefined,
        );
      }
      const extra: CallerExtra = { userId: user.id, grantId: auth.grantId, companyId: user.companyId };
      (req as AuthenticatedRequest).auth = { ...auth, extra };
      next();
    };
    const user = auth.actor === 'client' ? clientUsers.get(auth.clientId) : users.get(auth.userId);
    if (!(user instanceof Promise)) return admit(user);
    user.then(admit, next);
  };

  // Each token sees and calls only the tools its scopes allow, and a call outside them is a 403 naming the scopes it
  // needs (RFC 6750 §3.1: step-up authorization). Protocol 2026-07-28 (server/discover, the newest clients) is served
  // by the MCP SDK 2.x's own handler, a server per request; 2025-era requests, what most clients send today, by SDK
  // 1.x servers built once and pooled, at a fraction of the cost (docs/performance.md).
  const serve = createMcpEndpoint({
    handler: createMcpHandler(() => createBusinessMcpServerV2(db, serverName, services), {
      legacy: 'reject',
    }),
    createServer: () => createBusinessMcpServer(db, serverName, undefined, services),
    toolScopes: TOOL_SCOPES,
  });

  const notAllowed: RequestHandler = (_req, res) => {
    res.setHeader('Allow', 'POST, OPTIONS');
    res.status(405).json({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'This server is stateless: use POST.' },
      id: null,
    });
  };

  // The Host check (DNS rebinding) covers every route of the app, /mcp included: see http/guards.ts.
  const origin = checkOrigin(baseUrl, allowedOrigins, resourceMetadata);
  const bearer = oauth.requireBearer({ resource });
  // A tool call's whole chain, one list for both paths: Express's route below and the OAuth fast path (app.ts). No
  // body parser here: the handler reads the body itself, so its scope check and the SDK read the same message.
  const post = [origin, allowCors, bearer, requireUser, serve];
  router.post('/', ...post);
  router.use(origin);
  router.use(allowCors);
  router.get('/', bearer, notAllowed);
  router.delete('/', bearer, notAllowed);
  router.all('/', notAllowed);
  return { router, post };
}
