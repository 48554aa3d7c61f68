// createMcpEndpoint's options, parsed once at start, failing fast with a message that says how to fix each.
import type { McpServerLike } from './server-pool';
import { isMcpHttpHandler, type McpHttpHandlerLike } from './sdk-v2';

/**
 * Options of createMcpEndpoint: `createServer` for `@modelcontextprotocol/sdk` 1.x, or `handler` for
 * `@modelcontextprotocol/server` 2.x, and the options of both.
 */
export interface McpEndpointOptions {
  /**
   * For `@modelcontextprotocol/server` 2.x: the handler its `createMcpHandler(factory)` returns. It serves protocol
   * 2026-07-28 (`server/discover` included) and the 2025 versions, building a server per request from your factory;
   * this endpoint reads and checks the body, then hands the handler that value and the token (`authInfo`). Tools
   * read the caller from `ctx.http.authInfo` (requireBearer's `req.auth`). Build the handler with the same import
   * of the SDK as your servers. The 1.x pool's options (`maxServers`, `queueTimeoutMs`, `rememberToolList`,
   * `streaming`) need `createServer`; the handler's own `responseMode` decides when it streams. With both `handler`
   * and `createServer`, each request goes where the SDK's `isLegacyRequest` says: 2025-era traffic to the pool of
   * 1.x servers, 2026-07-28 traffic to the handler (build it with `legacy: 'reject'`).
   */
  handler?: McpHttpHandlerLike;
  /**
   * For `@modelcontextprotocol/sdk` 1.x: builds one server with every tool registered (an `McpServer`). Called once
   * at start and then only when more requests are in flight than servers exist (up to `maxServers`), never per
   * request. Tools read the caller from `extra.authInfo` (requireBearer's `req.auth`: userId, clientId, scopes,
   * grantId).
   */
  createServer?: () => McpServerLike;
  /**
   * The scopes each tool needs, all of them. Calling a tool without them is refused with 403 `insufficient_scope`
   * whose challenge names the token's scopes together with the tool's (RFC 6750 §3.1), so the client can ask the
   * user for more without losing what it had (the MCP spec's step-up authorization). A tool not named here needs
   * only a valid token.
   */
  toolScopes?: Readonly<Record<string, readonly string[]>>;
  /**
   * Whether `tools/list` leaves out the tools the token's scopes do not cover (default false). By default every
   * tool is listed: a person who unticked a scope on the consent page, or a client that asked for less, still has
   * the model see the tool, and calling it meets the step-up challenge that lets the person allow it. With true, a
   * token sees only the tools it may call, and the model never learns that the others exist.
   */
  hideToolsOutsideScope?: boolean;
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
  /**
   * Whether tools stream (default false). By default every request is answered with one JSON document, written
   * straight to the response by a transport of this package: what a tool sends during a request other than its
   * answer (progress, log messages) is not delivered. With true, a request that runs your code (tools/call, resources/read, prompts/get, completion/complete,
   * anything but initialize, ping and tools/list) is served by the SDK's StreamableHTTPServerTransport instead,
   * answering with an event stream that carries its notifications, at about twice the cost per request. Either way a
   * request to the client (sampling, elicitation, roots) fails at once: its answer would come back on another HTTP
   * request, to another server.
   */
  streaming?: boolean;
}

/** The options as the handler uses them. */
export interface McpEndpointConfig {
  /** The SDK 2.x handler, when given; else the 1.x pool serves with `createServer`. */
  handler?: McpHttpHandlerLike;
  maxServers: number;
  queueTimeoutMs: number;
  maxBytes: number;
  bodyTimeoutMs: number;
  toolScopes: Map<string, readonly string[]>;
  hideToolsOutsideScope: boolean;
  rememberToolList: boolean;
  streaming: boolean;
}

function parseToolScopes(toolScopes: McpEndpointOptions['toolScopes']): Map<string, readonly string[]> {
  const table = new Map<string, readonly string[]>();
  if (toolScopes === undefined) return table;
  if (typeof toolScopes !== 'object' || toolScopes === null)
    throw new TypeError('createMcpEndpoint: toolScopes must be an object of tool name to scope list.');
  for (const [name, scopes] of Object.entries(toolScopes)) {
    if (
      !Array.isArray(scopes) ||
      scopes.some((scope) => typeof scope !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))
    )
      throw new TypeError(
        `createMcpEndpoint: toolScopes.${name} must be a list of scope names (RFC 6749 §3.3), e.g. ['notes:read'].`,
      );
    table.set(name, Object.freeze([...scopes]));
  }
  return table;
}

const SIZE = /^(\d+)\s*(b|kb|mb)?$/i;
const UNIT: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** bodyLimit as bytes: a whole number, or '512kb', '1mb'. */
function parseBodyLimit(limit: string | number | undefined): number {
  const match = SIZE.exec(String(limit ?? '1mb').trim());
  const bytes = match ? Number(match[1]) * UNIT[(match[2] ?? 'b').toLowerCase()]! : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1)
    throw new TypeError("createMcpEndpoint: bodyLimit must be a number of bytes or a size such as '1mb'.");
  return bytes;
}

function milliseconds(name: string, value: number | undefined, fallback: number): number {
  const parsed = value ?? fallback;
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 600_000)
    throw new TypeError(
      `createMcpEndpoint: ${name} must be a whole number of milliseconds from 1 to 600000.`,
    );
  return parsed;
}

/** Options of the 1.x pool, which mean nothing without createServer. */
const POOL_ONLY = ['maxServers', 'queueTimeoutMs', 'rememberToolList', 'streaming'] as const;

/** The 2.x handler when `options` names one, after checking that the 1.x pool's options come with createServer. */
function parseHandler(options: McpEndpointOptions): McpHttpHandlerLike | undefined {
  if (options.handler === undefined) {
    if (typeof options.createServer !== 'function')
      throw new TypeError(
        'createMcpEndpoint: pass handler, what createMcpHandler of @modelcontextprotocol/server 2.x returns, or ' +
          'createServer, a function that returns a new McpServer of @modelcontextprotocol/sdk 1.x.',
      );
    return undefined;
  }
  if (!isMcpHttpHandler(options.handler))
    throw new TypeError(
      'createMcpEndpoint: handler must be what createMcpHandler(factory) of @modelcontextprotocol/server returns ' +
        '(an object with fetch).',
    );
  if (options.createServer !== undefined && typeof options.createServer !== 'function')
    throw new TypeError(
      'createMcpEndpoint: createServer must be a function that returns a new McpServer of @modelcontextprotocol/sdk 1.x.',
    );
  const extra = POOL_ONLY.filter((name) => options[name] !== undefined);
  if (options.createServer === undefined && extra.length > 0)
    throw new TypeError(
      `createMcpEndpoint: ${extra.join(', ')} ${extra.length === 1 ? 'is an option' : 'are options'} of the ` +
        '@modelcontextprotocol/sdk 1.x pool; with handler alone (2.x) the SDK builds a server per request. Remove ' +
        `${extra.length === 1 ? 'it' : 'them'}, or add createServer to serve 2025-era requests from the pool.`,
    );
  return options.handler;
}

export function parseMcpEndpointOptions(options: McpEndpointOptions): McpEndpointConfig {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('createMcpEndpoint: pass an options object ({ handler } or { createServer }).');
  const handler = parseHandler(options);
  const maxServers = options.maxServers ?? 32;
  if (!Number.isInteger(maxServers) || maxServers < 1)
    throw new TypeError('createMcpEndpoint: maxServers must be a whole number of at least 1.');
  for (const name of ['rememberToolList', 'streaming', 'hideToolsOutsideScope'] as const)
    if (options[name] !== undefined && typeof options[name] !== 'boolean')
      throw new TypeError(`createMcpEndpoint: ${name} must be true or false.`);
  return {
    handler,
    maxServers,
    queueTimeoutMs: milliseconds('queueTimeoutMs', options.queueTimeoutMs, 10_000),
    maxBytes: parseBodyLimit(options.bodyLimit),
    bodyTimeoutMs: milliseconds('bodyTimeoutMs', options.bodyTimeoutMs, 10_000),
    toolScopes: parseToolScopes(options.toolScopes),
    hideToolsOutsideScope: options.hideToolsOutsideScope === true,
    rememberToolList: options.rememberToolList !== false,
    streaming: options.streaming === true,
  };
}
