// express-mcp-oauth/mcp: scope-gated MCP tools behind the router's bearer check, for servers of
// `@modelcontextprotocol/server` 2.x (through its createMcpHandler) and of `@modelcontextprotocol/sdk` 1.x.
// Named re-exports only.

/**
 * A stateless MCP endpoint mounted after requireBearer: tools listed and callable only with their scopes (403
 * insufficient_scope otherwise). With `handler` (SDK 2.x), the SDK's own handler serves protocol 2026-07-28 and the
 * 2025 versions; with `createServer` (SDK 1.x), servers are built once and reused.
 */
export { createMcpEndpoint } from './endpoint';
/** createMcpEndpoint's options, and what it needs of a server or a handler. */
export type { McpEndpointOptions } from './endpoint-options';
export type { McpServerLike } from './server-pool';
export type { McpHttpHandlerLike } from './sdk-v2';
