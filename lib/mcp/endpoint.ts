// createMcpEndpoint: a stateless MCP endpoint (Streamable HTTP) behind requireBearer, with tools gated by the token's
// scopes. Servers are built once and reused, not rebuilt per request: building an McpServer and its tools' schemas is
// most of a tool call's cost in the SDK's stateless example. Each pooled server stays connected to a lean transport
// of its own (lean-transport.ts) that answers with JSON; a request that may stream goes to the SDK's transport.
import type { Request, RequestHandler, Response } from 'express';
import { OAuthError } from '../errors';
import { protectedResourceMetadataUrl } from '../paths';
import type { AuthenticatedRequest } from '../middleware/bearer';
import { refuseBearer } from '../middleware/bearer-refusal';
import { parseMcpEndpointOptions, type McpEndpointOptions } from './endpoint-options';
import {
  createLeanTransport,
  isRequest,
  NO_REQUESTS_TO_CLIENT,
  type LeanTransport,
  type Response as RpcResponse,
} from './lean-transport';
import { checkAccept, checkVersion } from './negotiation';
import { McpRequestError, readJsonBody, type BodyLimits } from './read-body';
import { createScopeGate, type MessageSchema } from './scope-gate';
import { createServerPool, PoolBusyError, type McpServerLike } from './server-pool';
import { forgetSession } from './session-state';
import { createToolListMemo } from './tool-list-memo';
import { writeJson } from '../util/json-response';

export type { McpEndpointOptions } from './endpoint-options';

/** The subset of the SDK's transport this handler uses. */
interface SdkTransport {
  send(message: unknown, options?: unknown): Promise<void>;
  handleRequest(req: Request, res: Response, body: unknown): Promise<void>;
}
type TransportConstructor = new (options: {
  sessionIdGenerator: undefined;
  enableJsonResponse: boolean;
}) => SdkTransport;

/** Loaded on first use: the SDK is an optional peer dependency, needed only by those who call this. */
function loadSdk(): {
  Transport: TransportConstructor;
  ListToolsRequestSchema: unknown;
  JSONRPCMessageSchema: MessageSchema;
  SUPPORTED_PROTOCOL_VERSIONS: readonly string[];
} {
  try {
    const http = require('@modelcontextprotocol/sdk/server/streamableHttp.js') as {
      StreamableHTTPServerTransport: TransportConstructor;
    };
    const types = require('@modelcontextprotocol/sdk/types.js') as {
      ListToolsRequestSchema: unknown;
      JSONRPCMessageSchema: MessageSchema;
      SUPPORTED_PROTOCOL_VERSIONS: readonly string[];
    };
    return {
      Transport: http.StreamableHTTPServerTransport,
      ListToolsRequestSchema: types.ListToolsRequestSchema,
      JSONRPCMessageSchema: types.JSONRPCMessageSchema,
      SUPPORTED_PROTOCOL_VERSIONS: types.SUPPORTED_PROTOCOL_VERSIONS,
    };
  } catch (error) {
    throw new TypeError(
      'createMcpEndpoint needs @modelcontextprotocol/sdk: run `npm install @modelcontextprotocol/sdk`. ' +
        `(${(error as Error).message.split('\n')[0]})`,
    );
  }
}

const rpcError = (res: Response, status: number, code: number, message: string) =>
  writeJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });

/** Requests answered by the SDK's own handlers, which never stream: served by the lean transport in any mode. */
const NEVER_STREAMS = new Set(['initialize', 'ping', 'tools/list']);

/** Whether a request of these messages may stream: one of them asks for something other than NEVER_STREAMS. */
const mayStream = (messages: readonly unknown[]) =>
  messages.some((message) => {
    const { id, method } = message as { id?: unknown; method?: unknown };
    return id !== undefined && method !== undefined && !NEVER_STREAMS.has(method as string);
  });

/**
 * A request handler for POST /mcp, mounted after `requireBearer` and without a body parser before it. It answers
 * GET and DELETE with 405 (a stateless server has no stream to resume and no session to end), reads the body itself
 * (an unambiguous UTF-8 JSON body within the size and time limits), refuses tool calls outside the token's scopes,
 * and serves the request with a pooled server, handing it exactly the message the scope check read.
 */
export function createMcpEndpoint(options: McpEndpointOptions): RequestHandler {
  const config = parseMcpEndpointOptions(options);
  const { maxServers, queueTimeoutMs, toolScopes, streaming } = config;
  const limits: BodyLimits = { maxBytes: config.maxBytes, timeoutMs: config.bodyTimeoutMs };
  const { Transport, ListToolsRequestSchema, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS } = loadSdk();
  const gate = createScopeGate(toolScopes, JSONRPCMessageSchema);
  const toolLists = config.rememberToolList ? createToolListMemo(ListToolsRequestSchema) : undefined;
  // The first server is built now, so that a broken factory fails at start rather than on the first call.
  const first = options.createServer();
  if (!first || typeof first.connect !== 'function' || typeof first.close !== 'function')
    throw new TypeError(
      'createMcpEndpoint: createServer must return an McpServer (it has no connect/close).',
    );
  const pool = createServerPool(options.createServer, maxServers, first);
  const leanTransports = new WeakMap<McpServerLike, LeanTransport>();

  /** A free server now, or the next one given back; a caller that goes away while waiting leaves the queue. */
  async function borrow(res: Response): Promise<McpServerLike> {
    const ready = pool.take();
    if (ready !== undefined) return ready;
    const gone = new AbortController();
    const onClose = () => gone.abort(new McpRequestError(499, -32000, 'The client went away.'));
    res.once('close', onClose);
    return pool.acquire(queueTimeoutMs, gone.signal).finally(() => res.off('close', onClose));
  }

  /** The server's lean transport, connected: each server keeps its own across requests. */
  async function leanTransportOf(server: McpServerLike): Promise<LeanTransport> {
    let transport = leanTransports.get(server);
    if (transport === undefined) leanTransports.set(server, (transport = createLeanTransport()));
    if (!transport.connected) await server.connect(transport);
    return transport;
  }

  /** The SDK's transport for one request that may stream (`streaming`): an event stream of its messages. */
  async function serveWithSdk(
    server: McpServerLike,
    req: Request,
    res: Response,
    body: unknown,
    answer: ((reply: RpcResponse) => RpcResponse) | undefined,
  ): Promise<void> {
    // A Protocol holds one transport at a time: the server leaves its lean transport for this request.
    if (leanTransports.get(server)?.connected) await server.close();
    const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: false });
    const send = transport.send.bind(transport);
    transport.send = (message, sendOptions) => {
      // As on the lean path: the answer to a request to the client would never reach this server.
      if (isRequest(message)) return Promise.reject(new Error(NO_REQUESTS_TO_CLIENT));
      return send(
        answer && 'result' in (message as object) ? answer(message as RpcResponse) : message,
        sendOptions,
      );
    };
    await server.connect(transport);
    // The SDK's event stream says Connection: keep-alive whatever the request said; a client that asked to close gets
    // its connection closed once the answer is out (RFC 9112 §9.6).
    if (/(?:^|,)[ \t]*close[ \t]*(?:,|$)/i.test(req.headers.connection ?? ''))
      res.once('finish', () => req.socket.end());
    // The SDK is handed the value the gate checked: it never reads or parses the body itself.
    await transport.handleRequest(req, res, body);
    await server.close();
  }

  async function serve(req: Request, res: Response): Promise<void> {
    const { auth } = req as AuthenticatedRequest;
    checkAccept(req);
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
    const messages = Array.isArray(body) ? body : [body];
    checkVersion(req, body, messages, SUPPORTED_PROTOCOL_VERSIONS);
    const server = await borrow(res);
    const { listIds, firstPageIds } = decision;
    // tools/list answers with the tools this token may call, and no others.
    const answer = listIds.size
      ? (reply: RpcResponse): RpcResponse => {
          const result = reply.result as
            { tools?: Array<{ name: string }>; nextCursor?: unknown } | undefined;
          if (!listIds.has(reply.id) || !Array.isArray(result?.tools)) return reply;
          if (firstPageIds.has(reply.id) && result.nextCursor === undefined)
            toolLists?.remember(server, result);
          const tools = result.tools.filter((tool) => gate.allowed(tool.name, auth.scopes));
          return { ...reply, result: { ...result, tools } };
        }
      : undefined;

    let settled = false;
    const giveBack = (reusable: boolean) => {
      if (settled) return;
      settled = true;
      const reuse = reusable && !toolLists?.changed(server);
      if (reuse) forgetSession(server);
      else server.close().catch(() => undefined);
      pool.release(server, reuse);
    };
    // Cut off mid-request: the server may still be running a tool, so it is closed (which aborts its handlers) and
    // dropped rather than lent to the next request.
    res.once('close', () => {
      if (!res.writableFinished) giveBack(false);
    });
    try {
      if (streaming && mayStream(messages)) await serveWithSdk(server, req, res, body, answer);
      else await (await leanTransportOf(server)).exchange(messages, req, res, auth, answer);
      giveBack(true);
    } catch (error) {
      giveBack(false);
      // The exchange failed because the client went away and its server was closed: nobody is left to answer.
      if (res.destroyed && !res.writableFinished) return;
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
      return next(new TypeError('createMcpEndpoint: mount it after requireBearer(), which sets req.auth.'));
    serve(req, res).catch((error: unknown) => {
      if (error instanceof McpRequestError || error instanceof PoolBusyError) return refuse(res, error);
      next(error);
    });
  };
}
