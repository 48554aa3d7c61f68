// Everything that reaches into `@modelcontextprotocol/sdk` 1.x beyond its public API, in one file: which fields of
// its Server hold a session's state, how its McpServer's tools/list handler is replaced, how its transport's send
// is wrapped, and where its McpServer keeps its tools (for the consent page). Pooling servers needs the first three,
// and each depends on how 1.x is built inside; a new major may change any of them, so loading refuses a major this file was not written for (KNOWN_MAJOR), and its test fails when the
// installed SDK is one.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { MessageSchema } from './scope-gate';
import { isRequest, NO_REQUESTS_TO_CLIENT, type Response as RpcResponse } from './lean-transport';

/** The major version of `@modelcontextprotocol/sdk` this file knows the inside of. */
export const KNOWN_MAJOR = 1;

/** The subset of the SDK's StreamableHTTPServerTransport the endpoint uses. */
export interface SdkTransport {
  send(message: unknown, options?: unknown): Promise<void>;
  handleRequest(req: object, res: object, body: unknown): Promise<void>;
}
type TransportConstructor = new (options: {
  sessionIdGenerator: undefined;
  enableJsonResponse: boolean;
}) => SdkTransport;

/** What the endpoint takes from SDK 1.x. */
export interface SdkV1 {
  Transport: TransportConstructor;
  ListToolsRequestSchema: unknown;
  JSONRPCMessageSchema: MessageSchema;
  SUPPORTED_PROTOCOL_VERSIONS: readonly string[];
  /** The McpServer class, to tell its servers from those of another major. */
  McpServer: abstract new (...args: never[]) => object;
  /** The low-level Server class. */
  Server: abstract new (...args: never[]) => object;
}

/** The installed version of the package whose file `entry` is (its package.json, up the tree: 1.x exports none). */
export function installedVersion(entry: string, name: string): string | undefined {
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (manifest.name === name && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No package.json here: look further up.
    }
  }
  return undefined;
}

/** Refuses an SDK of another major than KNOWN_MAJOR, with what to do. */
export function checkMajor(version: string | undefined): void {
  const major = Number(version?.split('.')[0]);
  if (major !== KNOWN_MAJOR)
    throw new TypeError(
      `createMcpEndpoint: @modelcontextprotocol/sdk ${version ?? '(version unknown)'} is not a version this ` +
        `package knows; it pools servers of @modelcontextprotocol/sdk ${KNOWN_MAJOR}.x and serves ` +
        '@modelcontextprotocol/server 2.x. Install @modelcontextprotocol/sdk@1 or move to @modelcontextprotocol/server.',
    );
}

let loaded: SdkV1 | undefined;

/** Loads SDK 1.x on first use (an optional peer dependency), or undefined when it is not installed. */
export function loadSdkV1(): SdkV1 | undefined {
  if (loaded) return loaded;
  let entry: string;
  try {
    entry = require.resolve('@modelcontextprotocol/sdk/types.js');
  } catch {
    return undefined;
  }
  checkMajor(installedVersion(entry, '@modelcontextprotocol/sdk'));
  const http = require('@modelcontextprotocol/sdk/server/streamableHttp.js') as {
    StreamableHTTPServerTransport: TransportConstructor;
  };
  const types = require('@modelcontextprotocol/sdk/types.js') as Pick<
    SdkV1,
    'ListToolsRequestSchema' | 'JSONRPCMessageSchema' | 'SUPPORTED_PROTOCOL_VERSIONS'
  >;
  const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js') as Pick<SdkV1, 'McpServer'>;
  const { Server } = require('@modelcontextprotocol/sdk/server/index.js') as Pick<SdkV1, 'Server'>;
  loaded = { Transport: http.StreamableHTTPServerTransport, ...types, McpServer, Server };
  return loaded;
}

// A pooled server serves one caller after another, so nothing one caller told it may reach the next. The SDK's
// Server keeps what `initialize` said (the client's name, version and capabilities) and the `logging/setLevel`
// level after close(): with a pool, the next user's tools would see the previous user's client and capabilities,
// and send it log messages at the level another user chose. That state is per session, and a stateless request is a
// session of its own, so it is cleared when a server is given back.

/** The per-session fields of the SDK's Server (`@modelcontextprotocol/sdk` 1.x `server/index.js`). */
interface SessionFields {
  _clientCapabilities?: unknown;
  _clientVersion?: unknown;
  _loggingLevels?: { clear(): void };
}

/** Forgets what the last caller's initialize and setLevel told `server` (an McpServer or a low-level Server). */
export function forgetSession(server: object): void {
  const low = ((server as { server?: object }).server ?? server) as SessionFields;
  if ('_clientCapabilities' in low) low._clientCapabilities = undefined;
  if ('_clientVersion' in low) low._clientVersion = undefined;
  low._loggingLevels?.clear();
}

/** A tool as an McpServer of 1.x holds it (`_registeredTools`): what the consent page shows of it. */
export interface RegisteredToolV1 {
  name: string;
  title?: unknown;
  annotations?: { title?: unknown; readOnlyHint?: unknown };
}

/**
 * The enabled tools an McpServer of 1.x holds, read from its `_registeredTools` (what its own tools/list answers
 * from), without building or connecting a server; undefined for a low-level Server or a server built otherwise.
 */
export function registeredToolsV1(server: object): RegisteredToolV1[] | undefined {
  const held = (server as { _registeredTools?: unknown })._registeredTools;
  if (typeof held !== 'object' || held === null) return undefined;
  return Object.entries(held as Record<string, { enabled?: unknown; title?: unknown; annotations?: never }>)
    .filter(([, tool]) => tool?.enabled !== false)
    .map(([name, tool]) => ({ name, title: tool?.title, annotations: tool?.annotations }));
}

/**
 * Wraps the send of the SDK's transport for one streamed request: a request to the client fails at once (its answer
 * would never reach this server, as on the lean path), and each response passes through `answer` (the tools/list
 * filter).
 */
export function wrapSend(
  transport: SdkTransport,
  answer: ((reply: RpcResponse) => RpcResponse) | undefined,
): void {
  const send = transport.send.bind(transport);
  transport.send = (message, sendOptions) => {
    if (isRequest(message)) return Promise.reject(new Error(NO_REQUESTS_TO_CLIENT));
    return send(
      answer && 'result' in (message as object) ? answer(message as RpcResponse) : message,
      sendOptions,
    );
  };
}

// A pooled server's tools/list answer, remembered. The SDK's McpServer builds that answer anew on every call,
// converting each tool's zod schema to JSON Schema: about 5 ms for 30 tools, most of a tools/list request's time and
// garbage, where a ping takes a tenth of a millisecond. A pooled server's tools are fixed once createServer returns
// it, so its first complete answer is given again, through the SDK's own request handling (only the handler that
// builds the list is replaced). A server whose tool list changes afterwards (a tool registered, removed, enabled or
// disabled: McpServer announces each through sendToolListChanged) is not reused: the pool builds a fresh one.

/** The parts of the SDK's McpServer this needs; a low-level Server (no `.server`) keeps its own handler. */
interface McpServerParts {
  server?: { setRequestHandler?: (schema: unknown, handler: () => unknown) => void };
  sendToolListChanged?: () => void;
}

/** What the MCP handler asks of the memo, per pooled server. */
export interface ToolListMemo {
  /**
   * Answers the server's later tools/list requests with `result`, the server's own complete (unpaginated) answer.
   * Does nothing for a server that has one already, or that is not an McpServer.
   */
  remember(server: object, result: unknown): void;
  /** Whether the server's tool list changed after its answer was remembered: it must not be reused. */
  changed(server: object): boolean;
}

/** `listToolsRequestSchema` is the SDK's ListToolsRequestSchema (from `@modelcontextprotocol/sdk/types.js`). */
export function createToolListMemo(listToolsRequestSchema: unknown): ToolListMemo {
  const remembered = new WeakSet<object>();
  const changed = new WeakSet<object>();
  // Servers from one factory give the same answer: they share one copy of it rather than keep one each (a list of
  // 30 tools with their schemas is some 100 KB of objects, and a pool holds up to 32 servers).
  let last: { json: string; result: unknown } | undefined;
  return {
    remember(server, result) {
      const parts = server as McpServerParts;
      const lowLevel = parts.server;
      if (remembered.has(server) || typeof lowLevel?.setRequestHandler !== 'function') return;
      remembered.add(server);
      const json = JSON.stringify(result);
      if (last?.json !== json) last = { json, result };
      const shared = last.result;
      lowLevel.setRequestHandler(listToolsRequestSchema, function rememberedToolList() {
        return shared;
      });
      const announce = parts.sendToolListChanged;
      if (typeof announce !== 'function') return;
      parts.sendToolListChanged = function toolListChanged(this: unknown) {
        changed.add(server);
        return announce.call(server);
      };
    },
    changed: (server) => changed.has(server),
  };
}
