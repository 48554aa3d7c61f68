// createMcpEndpoint: a stateless MCP endpoint (Streamable HTTP) behind requireBearer, with tools gated by the token's
// scopes, for servers of either SDK major: `@modelcontextprotocol/sdk` 1.x through a pool of reused servers
// (pooled-endpoint.ts), `@modelcontextprotocol/server` 2.x through the host's own createMcpHandler
// (handler-endpoint.ts), or both, each serving the era it is given. The body is read once, here, and each path checks
// it with one scope gate; this file maps what they refuse to HTTP.
import type { RequestHandler, Response } from 'express';
import type { AuthenticatedRequest } from '../middleware/bearer';
import { writeJson } from '../util/json-response';
import { parseMcpEndpointOptions, type McpEndpointOptions } from './endpoint-options';
import { registerEndpointTools } from './describe-tools';
import { createHandlerServe } from './handler-endpoint';
import { checkAccept, mayBeModern } from './negotiation';
import { createPooledServe, type Serve } from './pooled-endpoint';
import { McpRequestError, readJsonBody } from './read-body';
import { UnreadableAnswerError } from './rewrite-answers';
import { loadSdkV1 } from './sdk-v1';
import { loadSdkV2 } from './sdk-v2';
import { PoolBusyError } from './server-pool';
import { toWebRequest } from './web-bridge';
import { annotateMcpRequest, withRequestSpan } from '../telemetry/spans';

export type { McpEndpointOptions } from './endpoint-options';

const rpcError = (res: Response, status: number, code: number, message: string) =>
  writeJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });

/** The pooled 1.x serve: its SDK loaded and its first server built now, so a broken factory fails at start. */
function createPooled(
  config: ReturnType<typeof parseMcpEndpointOptions>,
  options: McpEndpointOptions,
): { serve: Serve; versions: readonly string[]; first: object } {
  const sdk = loadSdkV1();
  if (sdk === undefined)
    throw new TypeError(
      'createMcpEndpoint({ createServer }) needs @modelcontextprotocol/sdk 1.x: run `npm install ' +
        '@modelcontextprotocol/sdk@1`, or pass handler from createMcpHandler of @modelcontextprotocol/server 2.x.',
    );
  const createServer = options.createServer!;
  const first = createServer();
  if (!first || typeof first.connect !== 'function' || typeof first.close !== 'function')
    throw new TypeError(
      'createMcpEndpoint: createServer must return an McpServer of @modelcontextprotocol/sdk 1.x (it has no ' +
        'connect/close). For @modelcontextprotocol/server 2.x, pass handler: createMcpHandler(factory).',
    );
  return {
    serve: createPooledServe(config, createServer, first, sdk),
    versions: sdk.SUPPORTED_PROTOCOL_VERSIONS,
    first,
  };
}

type Handle = (req: Parameters<Serve>[0], res: Response, auth: Parameters<Serve>[2]) => Promise<void>;

/** Reads the body once and hands it to the path the options set up: the 1.x pool, the 2.x handler, or by era both. */
function createServe(
  config: ReturnType<typeof parseMcpEndpointOptions>,
  options: McpEndpointOptions,
): Handle {
  const limits = { maxBytes: config.maxBytes, timeoutMs: config.bodyTimeoutMs };
  // The whole body first: a request whose body is slow to come never holds a server while it trickles in.
  const read = async (req: Parameters<Serve>[0]) => {
    const body = await readJsonBody(req, limits);
    annotateMcpRequest(body, (tool) => config.toolScopes.has(tool));
    return body;
  };
  const pool = options.createServer === undefined ? undefined : createPooled(config, options);
  // The consent page names the tools each scope unlocks, from this very table (lib/consent-tools), with the titles
  // the servers give them.
  registerEndpointTools(config.toolScopes, pool ? { server: pool.first } : { handler: config.handler });
  if (config.handler === undefined)
    return async (req, res, auth) => {
      // The Streamable HTTP rule, checked before the body is read, as the SDK 1.x transport does.
      checkAccept(req);
      return pool!.serve(req, res, auth, await read(req));
    };
  const sdk = loadSdkV2();
  // The SDK 2.x handler checks Accept itself.
  const modern = createHandlerServe(config, config.handler, sdk.messageSchema);
  if (pool === undefined) return async (req, res, auth) => modern(req, res, auth, await read(req));
  return async (req, res, auth) => {
    const body = await read(req);
    // The era is the SDK's own decision, on the very value the gate will check; a request with no sign of 2026-07-28
    // is one it routes to 2025-era serving, and goes there without the cost of asking.
    const messages = Array.isArray(body) ? body : [body];
    const legacy =
      !mayBeModern(req, messages, pool.versions) ||
      (await sdk.isLegacyRequest(toWebRequest(req, new AbortController().signal), body));
    if (!legacy) return modern(req, res, auth, body);
    checkAccept(req);
    return pool.serve(req, res, auth, body);
  };
}

/**
 * A request handler for POST /mcp, mounted after `requireBearer` and without a body parser before it. It answers
 * GET and DELETE with 405 (a stateless server has no stream to resume and no session to end), reads the body itself
 * (an unambiguous UTF-8 JSON body within the size and time limits), refuses tool calls outside the token's scopes,
 * and hands the SDK exactly the message the scope check read.
 */
export function createMcpEndpoint(options: McpEndpointOptions): RequestHandler {
  const config = parseMcpEndpointOptions(options);
  const serve = createServe(config, options);

  /** What a refused request is answered: the status and JSON-RPC error it carries, 503 when no server was free. */
  function refuse(res: Response, error: McpRequestError | PoolBusyError | UnreadableAnswerError): void {
    if (res.destroyed) return;
    // Part of the answer is out: the client learns of the failure from the connection's end.
    if (res.headersSent) return void res.destroy();
    if (error instanceof PoolBusyError) {
      res.setHeader('Retry-After', '1');
      return void rpcError(res, 503, -32000, 'The server is busy; try again shortly.');
    }
    if (error instanceof UnreadableAnswerError)
      return void rpcError(res, 502, -32603, `Internal error: ${error.message}`);
    if (error.closeConnection) res.setHeader('Connection', 'close');
    rpcError(res, error.status, error.code, error.message);
  }

  return function mcpHandler(req, res, next) {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return rpcError(res, 405, -32000, 'This server is stateless: use POST.');
    }
    const { auth } = req as Partial<AuthenticatedRequest>;
    if (!auth?.scopes)
      return next(new TypeError('createMcpEndpoint: mount it after requireBearer(), which sets req.auth.'));
    // Its span (`mcp tools/call`, ...), when the host app registered an OpenTelemetry SDK.
    withRequestSpan('mcp', req, res, () => {
      serve(req, res, auth).catch((error: unknown) => {
        if (
          error instanceof McpRequestError ||
          error instanceof PoolBusyError ||
          error instanceof UnreadableAnswerError
        )
          return refuse(res, error);
        next(error);
      });
    });
  };
}
