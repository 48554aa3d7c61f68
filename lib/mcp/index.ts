// express-mcp-oauth/mcp: scope-gated MCP tools behind the router's bearer check. Needs @modelcontextprotocol/sdk.
// Named re-exports only.

/**
 * A stateless MCP endpoint for `@modelcontextprotocol/sdk` servers, mounted after requireBearer: servers built once
 * and reused, tools listed and callable only with their scopes (403 insufficient_scope otherwise).
 */
export { createMcpEndpoint } from './endpoint';
/** createMcpEndpoint's options, and what it needs of a server. */
export type { McpEndpointOptions } from './endpoint-options';
export type { McpServerLike } from './server-pool';
