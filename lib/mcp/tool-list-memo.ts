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
