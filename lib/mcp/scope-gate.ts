// The scope gate: which JSON-RPC messages of a request a token may send. It reads the very value the SDK will be
// handed (read-body.ts), checks every message against the SDK's own JSON-RPC schema, and fails closed: a message it
// cannot classify is refused, never passed on for the SDK to interpret differently.
import { McpRequestError } from './read-body';

/** The SDK's JSONRPCMessageSchema, or anything with its safeParse. */
export interface MessageSchema {
  safeParse(value: unknown): { success: boolean };
}

/** What the gate decided for an admitted request. */
export interface Admitted {
  refused?: undefined;
  /** Ids of tools/list requests, whose answers may be filtered to the token's tools (hideToolsOutsideScope). */
  listIds: Set<unknown>;
  /** Ids of tools/list requests for the first page (no cursor): only their complete answer may be remembered. */
  firstPageIds: Set<unknown>;
}

/** A tool call the token's scopes do not cover (RFC 6750 §3.1 insufficient_scope). */
export interface Refused {
  refused: { tool: string; needed: readonly string[] };
}

/** The SDK's bound on a batch (MAX_BATCH_SIZE): a larger one is refused here as it would be there. */
const MAX_BATCH = 100;
/** The `_meta` key that ties a message to a task (MCP 2025-11-25, tasks). */
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

const invalid = (message: string) => new McpRequestError(400, -32600, `Invalid Request: ${message}.`);

export function createScopeGate(
  toolScopes: ReadonlyMap<string, readonly string[]>,
  messageSchema: MessageSchema,
): {
  /** Whether a token with `granted` may call the tool `name`. */
  allowed(name: string, granted: readonly string[]): boolean;
  /** Admits or refuses the request's JSON value; throws McpRequestError for what is not a JSON-RPC message. */
  check(body: unknown, granted: readonly string[]): Admitted | Refused;
} {
  const allowed = (name: string, granted: readonly string[]) =>
    (toolScopes.get(name) ?? []).every((scope) => granted.includes(scope));

  return {
    allowed,
    check(body, granted) {
      const messages = Array.isArray(body) ? body : [body];
      if (messages.length === 0) throw invalid('an empty batch');
      if (messages.length > MAX_BATCH) throw invalid(`a batch may hold at most ${MAX_BATCH} messages`);
      const listIds = new Set<unknown>();
      const firstPageIds = new Set<unknown>();
      const requestIds = new Set<unknown>();
      const cancelledIds: unknown[] = [];
      for (const message of messages) {
        if (!messageSchema.safeParse(message).success) throw invalid('not a JSON-RPC 2.0 message');
        // The schema is strict: a request is { jsonrpc, id, method, params? }, a notification the same without id.
        const { id, method, params } = message as { id?: unknown; method?: unknown; params?: unknown };
        const fields = (params ?? {}) as {
          name?: unknown;
          cursor?: unknown;
          task?: unknown;
          _meta?: unknown;
          requestId?: unknown;
        };
        // JSON-RPC 2.0 §4: an id names one request. The SDK keys its answers and its abort controllers by id, so a
        // second request with a tool call's id (a ping) would answer the HTTP request, end it and give the server
        // back while the tool still runs, out of reach of close() and of maxServers.
        if (id !== undefined && method !== undefined) {
          if (requestIds.has(id)) throw invalid('two requests of a batch share an id');
          requestIds.add(id);
        }
        // MCP tasks outlive the request that made them, and a stateless server has no session to scope them to: any
        // caller could list or read another user's task results through a pooled server. Not served here.
        if (
          (typeof method === 'string' && method.startsWith('tasks/')) ||
          fields.task !== undefined ||
          // Stryker disable next-line ConditionalExpression: equivalent, the schema refuses a null _meta before this
          (typeof fields._meta === 'object' && fields._meta !== null && RELATED_TASK in fields._meta)
        )
          throw invalid('tasks are not supported by this stateless server');
        // A batch that cancels its own request would never be answered: the SDK drops a cancelled request's answer,
        // and the HTTP request waits for it until the client gives up.
        if (method === 'notifications/cancelled' && id === undefined) cancelledIds.push(fields.requestId);
        if (method === 'tools/list') {
          listIds.add(id);
          if (fields.cursor === undefined) firstPageIds.add(id);
        }
        if (method !== 'tools/call') continue;
        if (id === undefined) throw invalid('tools/call must be a request, with an id');
        if (typeof fields.name !== 'string') throw invalid('tools/call needs params.name, a string');
        if (!allowed(fields.name, granted))
          return { refused: { tool: fields.name, needed: toolScopes.get(fields.name)! } };
      }
      if (cancelledIds.some((cancelled) => requestIds.has(cancelled)))
        throw invalid('a batch may not cancel a request of its own');
      return { listIds, firstPageIds };
    },
  };
}
