// createMcpHandler: a stateless MCP endpoint (Streamable HTTP, JSON responses) behind requireBearer, with tools
// gated by the token's scopes. Servers are built once and reused, not rebuilt per request: building an McpServer
// and its tools' schemas is most of a tool call's cost in the SDK's stateless example.
import express, { type Request, type RequestHandler, type Response } from 'express';
import { OAuthError } from '../errors';
import { protectedResourceMetadataUrl } from '../paths';
import type { AuthenticatedRequest } from '../middleware/bearer';
import { refuseBearer } from '../middleware/bearer-refusal';
import { createServerPool, type McpServerLike } from './server-pool';
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
   * Most servers kept at once, i.e. requests served concurrently; more wait their turn. A tool call that never
   * returns keeps its server while its client waits, so give slow tools their own timeouts. Default 32.
   */
  maxServers?: number;
  /** Largest request body when the handler parses it itself (no JSON parser before it). Default '1mb'. */
  bodyLimit?: string | number;
  /**
   * Whether each server's first complete tools/list answer is given again to later requests (default true). The
   * SDK's McpServer otherwise converts every tool's schema to JSON Schema on every tools/list (about 5 ms for 30
   * tools). A server whose tools change after that (registered, removed, enabled, disabled) is replaced, not reused.
   * Set false only if you replaced the server's tools/list handler with one whose answer depends on the request.
   */
  rememberToolList?: boolean;
}

interface JsonRpcMessage {
  id?: unknown;
  method?: unknown;
  params?: { name?: unknown; cursor?: unknown };
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
function loadSdk(): { Transport: TransportConstructor; ListToolsRequestSchema: unknown } {
  try {
    const http = require('@modelcontextprotocol/sdk/server/streamableHttp.js') as {
      StreamableHTTPServerTransport: TransportConstructor;
    };
    const types = require('@modelcontextprotocol/sdk/types.js') as { ListToolsRequestSchema: unknown };
    return {
      Transport: http.StreamableHTTPServerTransport,
      ListToolsRequestSchema: types.ListToolsRequestSchema,
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

/**
 * A request handler for POST /mcp, mounted after `requireBearer`. It answers GET and DELETE with 405 (a stateless
 * server has no stream to resume and no session to end), parses the body itself when no JSON parser ran before it,
 * refuses tool calls outside the token's scopes, and serves the request with a pooled server.
 */
export function createMcpHandler(options: McpHandlerOptions): RequestHandler {
  if (!options || typeof options.createServer !== 'function')
    throw new TypeError('createMcpHandler: createServer must be a function that returns a new McpServer.');
  const maxServers = options.maxServers ?? 32;
  if (!Number.isInteger(maxServers) || maxServers < 1)
    throw new TypeError('createMcpHandler: maxServers must be a whole number of at least 1.');
  const toolScopes = parseToolScopes(options.toolScopes);
  if (options.rememberToolList !== undefined && typeof options.rememberToolList !== 'boolean')
    throw new TypeError('createMcpHandler: rememberToolList must be true or false.');
  const { Transport, ListToolsRequestSchema } = loadSdk();
  const toolLists =
    options.rememberToolList === false ? undefined : createToolListMemo(ListToolsRequestSchema);
  // The first server is built now, so that a broken factory fails at start rather than on the first call.
  const first = options.createServer();
  if (!first || typeof first.connect !== 'function' || typeof first.close !== 'function')
    throw new TypeError('createMcpHandler: createServer must return an McpServer (it has no connect/close).');
  const pool = createServerPool(options.createServer, maxServers, first);
  const parseJson = express.json({ limit: options.bodyLimit ?? '1mb' });

  const allowed = (name: string, granted: readonly string[]) =>
    (toolScopes.get(name) ?? []).every((scope) => granted.includes(scope));

  async function serve(req: Request, res: Response): Promise<void> {
    const { auth } = req as AuthenticatedRequest;
    const messages: JsonRpcMessage[] = (Array.isArray(req.body) ? req.body : [req.body]).filter(
      (message: unknown): message is JsonRpcMessage => typeof message === 'object' && message !== null,
    );
    const listIds = new Set<unknown>();
    // Only an answer to a request for the first page (no cursor) may be remembered as the whole list.
    const firstPageIds = new Set<unknown>();
    for (const message of messages) {
      if (message.method === 'tools/list') listIds.add(message.id);
      if (message.method === 'tools/list' && message.params?.cursor === undefined)
        firstPageIds.add(message.id);
      if (message.method !== 'tools/call') continue;
      const name = String(message.params?.name);
      if (allowed(name, auth.scopes)) continue;
      const needed = toolScopes.get(name)!.join(' ');
      const metadataUrl = protectedResourceMetadataUrl(auth.resource.href.replace(/\/+$/, ''));
      const error = new OAuthError('insufficient_scope', `The tool ${name} needs the scopes ${needed}.`);
      return refuseBearer(res, metadataUrl, error, needed);
    }

    const server = await pool.acquire();
    let settled = false;
    const giveBack = (reusable: boolean) => {
      if (settled) return;
      settled = true;
      pool.release(server, reusable && !toolLists?.changed(server));
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
            const tools = reply.result.tools.filter((tool) => allowed(tool.name, auth.scopes));
            message = { ...reply, result: { ...reply.result, tools } };
          }
          return send(message, sendOptions);
        };
      }
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
      await server.close();
      giveBack(true);
    } catch (error) {
      server.close().catch(() => undefined);
      giveBack(false);
      throw error;
    }
  }

  return function mcpHandler(req, res, next) {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return rpcError(res, 405, -32000, 'This server is stateless: use POST.');
    }
    if (!(req as Partial<AuthenticatedRequest>).auth?.scopes)
      return next(new TypeError('createMcpHandler: mount it after requireBearer(), which sets req.auth.'));
    const run = () => serve(req, res).catch(next);
    if (req.body !== undefined) return void run();
    parseJson(req, res, (error?: { status?: number; type?: string }) => {
      if (!error) return void run();
      if (error.type === 'entity.too.large')
        return rpcError(res, 413, -32000, 'The request body is too large.');
      if (error.status === 400) return rpcError(res, 400, -32700, 'Parse error: the body is not JSON.');
      next(error);
    });
  };
}
