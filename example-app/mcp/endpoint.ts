// The MCP tool server at /mcp: Streamable HTTP (stateless, so any instance can answer any request), behind the
// bearer check, listing and running only the tools the token's scopes allow, for the token's user's company.
import type { AppDb } from '../db/database';
import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthenticatedRequest, OAuthRouter } from '../../lib';
import { refuseMcp } from '../http/guards';
import { findUser } from '../users';
import { toolError, toolResult, type ToolContext } from './tool';
import { ALL_TOOLS, TOOLS_BY_NAME } from './tools';

export interface McpEndpointOptions {
  db: AppDb;
  oauth: OAuthRouter;
  /** The public URL of the MCP endpoint, i.e. the protected resource. */
  resource: string;
  /** The public base URL: its origin may always call /mcp from a browser. */
  baseUrl: string;
  /** More origins that may (ALLOWED_ORIGINS). */
  allowedOrigins: string[];
  serverName?: string;
}

/** Browser-based MCP clients call /mcp from other origins with a bearer token (no cookies), and must read these. */
const allowCors: RequestHandler = function mcpCors(req, res, next) {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version');
  if (req.method !== 'OPTIONS') return next();
  res.setHeader('Access-Control-Allow-Methods', 'POST, GET, DELETE, OPTIONS');
  res.setHeader(
    'Access-Control-Allow-Headers',
    'Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID',
  );
  res.setHeader('Access-Control-Max-Age', '86400');
  res.status(204).end();
};

function jsonRpcMessages(body: unknown): Array<{ method?: unknown; params?: { name?: unknown } }> {
  if (Array.isArray(body)) return body.filter((message) => message && typeof message === 'object');
  return body && typeof body === 'object' ? [body as { method?: unknown }] : [];
}

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

export function createMcpEndpoint({
  db,
  oauth,
  resource,
  baseUrl,
  allowedOrigins,
  serverName = 'business-service',
}: McpEndpointOptions): Router {
  const router = express.Router();
  const resourceMetadata = `${new URL(resource).origin}/.well-known/oauth-protected-resource${new URL(resource).pathname}`;

  // A tool outside the token's scopes is refused before anything runs: 403 naming the scope it needs (RFC 6750
  // §3.1), which MCP clients read to ask the user for more (step-up authorization).
  const requireToolScope: RequestHandler = function requireToolScope(req, res, next) {
    const { scopes } = (req as AuthenticatedRequest).auth;
    for (const message of jsonRpcMessages(req.body)) {
      if (message.method !== 'tools/call') continue;
      const tool = TOOLS_BY_NAME.get(String(message.params?.name));
      if (tool && !tool.scopes.every((scope) => scopes.includes(scope))) {
        // RFC 6750 §3: scope names what the call needs, all of it, so a client can ask for it in one step.
        const needed = tool.scopes.join(' ');
        const description = `The tool ${tool.name} needs the scopes ${needed}.`;
        return refuseMcp(res, 403, resourceMetadata, 'insufficient_scope', description, needed);
      }
    }
    next();
  };

  const serve: RequestHandler = async function serveMcp(req, res, next) {
    try {
      const { auth } = req as AuthenticatedRequest;
      const user = await findUser(db, auth.userId);
      if (!user) {
        return refuseMcp(
          res,
          401,
          resourceMetadata,
          'invalid_token',
          'The user of this token no longer exists.',
        );
      }
      const context: ToolContext = { db, userId: user.id, companyId: user.companyId };
      const server = new McpServer({ name: serverName, version: '1.0.0' }, { capabilities: { tools: {} } });
      for (const tool of ALL_TOOLS) {
        if (!tool.scopes.every((scope) => auth.scopes.includes(scope))) continue;
        server.registerTool(
          tool.name,
          {
            title: tool.title,
            description: `${tool.description} (Needs ${tool.scopes.join(', ')}.)`,
            // Strict: a misspelt argument is reported to the model instead of being silently dropped.
            inputSchema: z.object(tool.input).strict(),
            annotations: {
              readOnlyHint: tool.readOnly,
              destructiveHint: tool.destructive ?? false,
              openWorldHint: false,
            },
          },
          async (args: unknown) => {
            try {
              return toolResult(await tool.run(context, args as never));
            } catch (error) {
              return toolError(error);
            }
          },
        );
      }
      // Stateless: a fresh server and transport per request, so every instance behind a load balancer can answer.
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      next(error);
    }
  };

  const notAllowed: RequestHandler = (_req, res) => {
    res.setHeader('Allow', 'POST, OPTIONS');
    res.status(405).json({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'This server is stateless: use POST.' },
      id: null,
    });
  };

  // The Host check (DNS rebinding) covers every route of the app, /mcp included: see http/guards.ts.
  router.use(checkOrigin(baseUrl, allowedOrigins, resourceMetadata));
  router.use(allowCors);
  router.post(
    '/',
    oauth.requireBearer({ resource }),
    express.json({ limit: '1mb' }),
    requireToolScope,
    serve,
  );
  router.get('/', oauth.requireBearer({ resource }), notAllowed);
  router.delete('/', oauth.requireBearer({ resource }), notAllowed);
  router.all('/', notAllowed);
  return router;
}
