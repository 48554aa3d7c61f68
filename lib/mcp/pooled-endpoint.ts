// The endpoint for `@modelcontextprotocol/sdk` 1.x servers: servers built once and reused, not rebuilt per request
// (building an McpServer and its tools' schemas is most of a tool call's cost in the SDK's stateless example). Each
// pooled server stays connected to a lean transport of its own (lean-transport.ts) that answers with JSON; a request
// that may stream goes to the SDK's transport.
import type { Request, Response } from 'express';
import type { BearerAuth } from '../middleware/bearer';
import type { McpEndpointConfig } from './endpoint-options';
import { createLeanTransport, type LeanTransport, type Response as RpcResponse } from './lean-transport';
import { checkVersion } from './negotiation';
import { McpRequestError } from './read-body';
import { refuseTool } from './refuse-tool';
import { createScopeGate } from './scope-gate';
import { forgetSession, wrapSend, createToolListMemo, type SdkV1 } from './sdk-v1';
import { createServerPool, type McpServerLike } from './server-pool';

/** Serves one POST whose token passed requireBearer, given its body as read by readJsonBody. */
export type Serve = (req: Request, res: Response, auth: BearerAuth, body: unknown) => Promise<void>;

/** Requests answered by the SDK's own handlers, which never stream: served by the lean transport in any mode. */
const NEVER_STREAMS = new Set(['initialize', 'ping', 'tools/list']);

/** Whether a request of these messages may stream: one of them asks for something other than NEVER_STREAMS. */
const mayStream = (messages: readonly unknown[]) =>
  messages.some((message) => {
    const { id, method } = message as { id?: unknown; method?: unknown };
    return id !== undefined && method !== undefined && !NEVER_STREAMS.has(method as string);
  });

/**
 * Serves requests with pooled servers of `createServer` (`first` already built), handing each exactly the message
 * the scope check read.
 */
export function createPooledServe(
  config: McpEndpointConfig,
  createServer: () => McpServerLike,
  first: McpServerLike,
  sdk: SdkV1,
): Serve {
  const { maxServers, queueTimeoutMs, toolScopes, streaming, hideToolsOutsideScope } = config;
  const gate = createScopeGate(toolScopes, sdk.JSONRPCMessageSchema);
  const toolLists = config.rememberToolList ? createToolListMemo(sdk.ListToolsRequestSchema) : undefined;
  const pool = createServerPool(createServer, maxServers, first);
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
    const transport = new sdk.Transport({ sessionIdGenerator: undefined, enableJsonResponse: false });
    wrapSend(transport, answer);
    await server.connect(transport);
    // The SDK's event stream says Connection: keep-alive whatever the request said; a client that asked to close gets
    // its connection closed once the answer is out (RFC 9112 §9.6).
    if (/(?:^|,)[ \t]*close[ \t]*(?:,|$)/i.test(req.headers.connection ?? ''))
      res.once('finish', () => req.socket.end());
    // The SDK is handed the value the gate checked: it never reads or parses the body itself.
    await transport.handleRequest(req, res, body);
    await server.close();
  }

  return async function servePooled(req, res, auth, body) {
    const decision = gate.check(body, auth.scopes);
    if (decision.refused) return refuseTool(res, auth, decision.refused);
    const messages = Array.isArray(body) ? body : [body];
    checkVersion(req, body, messages, sdk.SUPPORTED_PROTOCOL_VERSIONS);
    const server = await borrow(res);
    const { listIds, firstPageIds } = decision;
    // A complete first page is remembered for later requests (rememberToolList); with hideToolsOutsideScope, tools/list
    // answers with the tools this token may call, and no others.
    const answer = listIds.size
      ? (reply: RpcResponse): RpcResponse => {
          const result = reply.result as
            { tools?: Array<{ name: string }>; nextCursor?: unknown } | undefined;
          if (!listIds.has(reply.id) || !Array.isArray(result?.tools)) return reply;
          if (firstPageIds.has(reply.id) && result.nextCursor === undefined)
            toolLists?.remember(server, result);
          if (!hideToolsOutsideScope) return reply;
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
  };
}
