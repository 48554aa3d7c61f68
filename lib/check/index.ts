// express-mcp-oauth/check: the deployment check that `npx express-mcp-oauth check <mcp url>` runs, for a host's
// own scripts and tests. Needs @modelcontextprotocol/sdk. Named re-exports only.

/**
 * Walks discovery from an MCP URL as clients do, with the MCP SDK client's own discovery (the 401 and its
 * challenge, protected resource metadata, the authorization server's metadata, PKCE, registration), and reports each
 * problem that would stop a client, with its fix.
 */
export { checkDeployment } from './deployment';
/** What checkDeployment takes, and the report and findings it returns. */
export type { CheckFinding, CheckOptions, CheckReport } from './deployment';
