// createMcpHandler: a stateless MCP endpoint (Streamable HTTP, JSON responses) behind requireBearer, with tools
// gated by the token's scopes. Servers are built once and reused, not rebuilt per request: building an McpServer
// and its tools' schemas is most of a tool call's cost in the SDK's stateless example.
import type { Request, RequestHandler, Response } from 'express';
import { OAuthError } from '../errors';
import { protectedResourceMetadataUrl } from '../paths';
import type { AuthenticatedRequest } from '../middleware/bearer';
import { refuseBearer } from '../middleware/bearer-refusal';
import { McpRequestError, readJsonBody, type BodyLimits } from './read-body';
import { createScopeGate, type MessageSchema } from './scope-gate';
import { createServerPool, PoolBusyError, type McpServerLike } from './server-pool';
import { forgetSession } from './session-state';
import { createToolListMemo } from './tool-list-memo';

/** Options of createMcpHandler. */
export interface McpHandlerOptions {
  /**
   * Builds one server with every tool registered (an `McpServer` of `@modelcontextprotocol/sdk`). Called once at
   * start and then only when more requests are in flight than servers exist (up to `maxServers`), never per request.
   * Tools read the caller from `extra.authInfo` (requireBearer's `req.auth`: userId, clientId, scopes, grantId).
   */
  createServer: () => McpServerLike;
  /**
   * The scopes each tool needs, all of them. A token without them does not see the tool in `tools/list`, and
   * calling it is refused with 403 `insufficient_scope` naming the scopes (RFC 6750 §3.1), so the client can ask
   * the user for more (the MCP spec's step-up authorization). A tool not named here needs only a valid token.
   */
  toolScopes?: Readonly<Record<string, readonly string[]>>;
  /**
   * Most servers kept at once, i.e. requests served concurrently; more wait their turn, at most `queueTimeoutMs`.
   * A tool call that never returns keeps its server while its client waits, so give slow tools their own timeouts.
   * Default 32.
   */
  maxServers?: number;
  /**
   * How long a request whose body has arrived may wait for a free server before it is refused with 503 and
   * `Retry-After` (JSON-RPC error -32000). Default 10,000 ms.
   */
  queueTimeoutMs?: number;
  /** The largest request body, in bytes or as '100kb', '1mb'. Default '1mb'. */
  bodyLimit?: string | number;
  /**
   * How long the whole request body may take to arrive before the request is refused with 408 (instead of
   * Node's 300 s request timeout). Default 10,000 ms.
   */
  bodyTimeoutMs?: number;
  /**
   * Whether each server's first complete tools/list answer is given again to later requests (default true). The
   * SDK's McpServer otherwise converts every tool's schema to JSON Schema on every tools/list (about 5 ms for 30
   * tools). A server whose tools change after that (registered, removed, enabled, disabled) is replaced, not reused.
   * Set false only if you replaced the server's tools/list handler with one whose answer depends on the request.
   */
  rememberToolList?: boolean;
}

/** The subset of the SDK's transport this handler uses. */
interface Transport {
  send(message: unknown, options?: unknown): Promise<void>;
  handleRequest(req: Request, res: Response, body: unknown): Promise<void>;
}
type TransportConstructor = new (options: {
  sessionIdGenerator: undefined;
  enableJsonResponse: boolean;
}) => Transport;

/** Loaded on first use: the SDK is an optional peer dependency, needed only by those who call this. */
function loadSdk(): {
  Transport: TransportConstructor;
  ListToolsRequestSchema: unknown;
  JSONRPCMessageSchema: MessageSchema;
} {
  try {
    const http = require('@modelcontextprotocol/sdk/server/streamableHttp.js') as {
      StreamableHTTPServerTransport: TransportConstructor;
    };
    const types = require('@modelcontextprotocol/sdk/types.js') as {
      ListToolsRequestSchema: unknown;
      JSONRPCMessageSchema: MessageSchema;
    };
    return {
      Transport: http.StreamableHTTPServerTransport,
      ListToolsRequestSchema: types.ListToolsRequestSchema,
      JSONRPCMessageSchema: types.JSONRPCMessageSchema,
    };
  } catch (error) {
    throw new TypeError(
      'createMcpHandler needs @modelcontextprotocol/sdk: run `npm install @modelcontextprotocol/sdk`. ' +
        `(${(error as Error).message.split('\n')[0]})`,
    );
  }
}

function parseToolScopes(toolScopes: McpHandlerOptions['toolScopes']): Map<string, readonly string[]> {
  const table = new Map<string, readonly string[]>();
  if (toolScopes === undefined) return table;
  if (typeof toolScopes !== 'object' || toolScopes === null)
    throw new TypeError('createMcpHandler: toolScopes must be an object of tool name to scope list.');
  for (const [name, scopes] of Object.entries(toolScopes)) {
    if (
      !Array.isArray(scopes) ||
      scopes.some((scope) => typeof scope !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))
    )
      throw new TypeError(
        `createMcpHandler: toolScopes.${name} must be a list of scope names (RFC 6749 §3.3), e.g. ['notes:read'].`,
      );
    table.set(name, Object.freeze([...scopes]));
  }
  return table;
}

const rpcError = (res: Response, status: number, code: number, message: string) =>
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });

const SIZE = /^(\d+)\s*(b|kb|mb)?$/i;
const UNIT: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** bodyLimit as bytes: a whole number, or '512kb', '1mb'. */
function parseBodyLimit(limit: string | number | undefined): number {
  const match = SIZE.exec(String(limit ?? '1mb').trim());
  const bytes = match ? Number(match[1]) * UNIT[(match[2] ?? 'b').toLowerCase()]! : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1)
    throw new TypeError("createMcpHandler: bodyLimit must be a number of bytes or a size such as '1mb'.");
  return bytes;
}

function milliseconds(name: string, value: number | undefined, fallback: number): number {
  const parsed = value ?? fallback;
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 600_000)
    throw new TypeError(`createMcpHandler: ${name} must be a whole number of milliseconds from 1 to 600000.`);
  return parsed;
}

/**
 * A request handler for POST /mcp, mounted after `requireBearer` and without a body parser before it. It answers
 * GET and DELETE with 405 (a stateless server has no stream to resume and no session to end), reads the body itself
 * (an unambiguous UTF-8 JSON body within the size and time limits), refuses tool calls outside the token's scopes,
 * and serves the request with a pooled server, handing it exactly the message the scope check read.
 */
export function createMcpHandler(options: McpHandlerOptions): RequestHandler {
  if (!options || typeof options.createServer !== 'function')
    throw new TypeError('createMcpHandler: createServer must be a function that returns a new McpServer.');
  const maxServers = options.maxServers ?? 32;
  if (!Number.isInteger(maxServers) || maxServers < 1)
    throw new TypeError('createMcpHandler: maxServers must be a whole number of at least 1.');
  const queueTimeoutMs = milliseconds('queueTimeoutMs', options.queueTimeoutMs, 10_000);
  const limits: BodyLimits = {
    maxBytes: parseBodyLimit(options.bodyLimit),
    timeoutMs: milliseconds('bodyTimeoutMs', options.bodyTimeoutMs, 10_000),
  };
  const toolScopes = parseToolScopes(options.toolScopes);
  if (options.rememberToolList !== undefined && typeof options.rememberToolList !== 'boolean')
    throw new TypeError('createMcpHandler: rememberToolList must be true or false.');
  const { Transport, ListToolsRequestSchema, JSONRPCMessageSchema } = loadSdk();
  const gate = createScopeGate(toolScopes, JSONRPCMessageSchema);
  const toolLists =
    options.rememberToolList === false ? undefined : createToolListMemo(ListToolsRequestSchema);
  // The first server is built now, so that a broken factory fails at start rather than on the first call.
  const first = options.createServer();
  if (!first || typeof first.connect !== 'function' || typeof first.close !== 'function')
    throw new TypeError('createMcpHandler: createServer must return an McpServer (it has no connect/close).');
  const pool = createServerPool(options.createServer, maxServers, first);

  async function serve(req: Request, res: Response): Promise<void> {
    const { auth } = req as AuthenticatedRequest;
    // The whole body first: a request whose body is slow to come never holds a server while it trickles in.
    const body = await readJsonBody(req, limits);
    const decision = gate.check(body, auth.scopes);
    if (decision.refused) {
      const { tool, needed } = decision.refused;
      const scope = needed.join(' ');
      const metadataUrl = protectedResourceMetadataUrl(auth.resource.href.replace(/\/+$/, ''));
      const error = new OAuthError('insufficient_scope', `The tool ${tool} needs the scopes ${scope}.`);
      // RFC 9449 §7.1: a request made with a DPoP-bound token is answered in the DPoP scheme.
      const dpop = auth.jkt === undefined ? undefined : { used: true };
      return refuseBearer(res, metadataUrl, error, scope, dpop);
    }
    const { listIds, firstPageIds } = decision;

    // A caller that goes away while waiting for a server leaves the queue.
    const gone = new AbortController();
    const onClose = () => gone.abort(new McpRequestError(499, -32000, 'The client went away.'));
    res.once('close', onClose);
    const server = await pool.acquire(queueTimeoutMs, gone.signal).finally(() => res.off('close', onClose));
    let settled = false;
    const giveBack = (reusable: boolean) => {
      if (settled) return;
      settled = true;
      const reuse = reusable && !toolLists?.changed(server);
      if (reuse) forgetSession(server);
      pool.release(server, reuse);
    };
    // Cut off mid-request: the server may still be running a tool, so it is closed (which aborts its handlers) and
    // dropped rather than lent to the next request.
    res.once('close', () => {
      if (res.writableFinished) return;
      server.close().catch(() => undefined);
      giveBack(false);
    });
    try {
      const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      if (listIds.size) {
        // tools/list answers with the tools this token may call, and no others.
        const send = transport.send.bind(transport);
        transport.send = (message, sendOptions) => {
          const reply = message as {
            id?: unknown;
            result?: { tools?: Array<{ name: string }>; nextCursor?: unknown };
          };
          if (listIds.has(reply.id) && Array.isArray(reply.result?.tools)) {
            if (firstPageIds.has(reply.id) && reply.result.nextCursor === undefined)
              toolLists?.remember(server, reply.result);
            const tools = reply.result.tools.filter((tool) => gate.allowed(tool.name, auth.scopes));
            message = { ...reply, result: { ...reply.result, tools } };
          }
          return send(message, sendOptions);
        };
      }
      await server.connect(transport);
      // The SDK is handed the value the gate checked: it never reads or parses the body itself.
      await transport.handleRequest(req, res, body);
      await server.close();
      giveBack(true);
    } catch (error) {
      server.close().catch(() => undefined);
      giveBack(false);
      throw error;
    }
  }

  /** What a refused request is answered: the status and JSON-RPC error it carries, 503 when no server was free. */
  function refuse(res: Response, error: McpRequestError | PoolBusyError): void {
    if (res.headersSent || res.destroyed) return;
    if (error instanceof PoolBusyError) {
      res.setHeader('Retry-After', '1');
      return void rpcError(res, 503, -32000, 'The server is busy; try again shortly.');
    }
    if (error.closeConnection) res.setHeader('Connection', 'close');
    rpcError(res, error.status, error.code, error.message);
  }

  return function mcpHandler(req, res, next) {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return rpcError(res, 405, -32000, 'This server is stateless: use POST.');
    }
    if (!(req as Partial<AuthenticatedRequest>).auth?.scopes)
      return next(new TypeError('createMcpHandler: mount it after requireBearer(), which sets req.auth.'));
    serve(req, res).catch((error: unknown) => {
      if (error instanceof McpRequestError || error instanceof PoolBusyError) return refuse(res, error);
      next(error);
    });
  };
}
