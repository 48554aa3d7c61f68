// The client matrix's requests to /mcp: the initialize a client sends (without a token for the 401, with one to see
// whether it is still taken), the read-only tool a grant allows, and a tool call with the MCP SDK client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientProfile } from './profile';

/** Read-only tools, each with the scope it needs, in the order a client is given one. */
const READ_TOOLS: Array<[scope: string, tool: string]> = [
  ['company:read', 'get_company'],
  ['clients:read', 'list_clients'],
  ['fakture:read', 'list_invoices'],
  ['products:read', 'list_products'],
  ['user:read', 'get_profile'],
  ['prospektor:read', 'list_prospects'],
  ['dokument:read', 'list_documents'],
  ['bridge:read', 'list_bank_accounts'],
];

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'matrix', version: '1.0.0' },
  },
};

/** The first read-only tool `scope` (space-separated) allows, if any. */
export function readToolWithin(scope: string): string | undefined {
  const granted = new Set(scope.split(' '));
  return READ_TOOLS.find(([needs]) => granted.has(needs))?.[1];
}

/** POSTs an initialize request to /mcp, with `accessToken` as its Bearer token when given. */
export function postInitialize(mcpUrl: URL, accessToken?: string): Promise<Response> {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: {
      ...(accessToken ? { Authorization: `Bearer ${accessToken}` } : {}),
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(INITIALIZE),
  });
}

/** Whether /mcp still takes `accessToken` (false once it has expired). */
export async function mcpAccepts(mcpUrl: URL, accessToken: string): Promise<boolean> {
  const response = await postInitialize(mcpUrl, accessToken);
  await response.body?.cancel();
  return response.status !== 401;
}

/** The company of the client's user: get_company must answer it. */
export const companyOf = (profile: ClientProfile) => `${profile.name} test company`;

/** One read-only tool call on a connected SDK client; get_company must answer the client's user's company. */
export async function callToolOn(client: Client, profile: ClientProfile, tool: string) {
  const result = await client.callTool({ name: tool, arguments: {} });
  if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content)}`);
  // The token is this client's user's: their company, not another client's user's.
  const company = result.structuredContent as { name?: string } | undefined;
  if (tool === 'get_company' && company?.name !== companyOf(profile)) {
    throw new Error(`get_company answered ${company?.name}, not ${companyOf(profile)}`);
  }
}

/** One MCP session with the SDK client and `accessToken` as its Bearer token; one read-only tool call. */
export async function callToolWith(mcpUrl: URL, profile: ClientProfile, tool: string, accessToken: string) {
  const client = new Client({ name: profile.id, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(mcpUrl, {
      requestInit: { headers: { Authorization: `Bearer ${accessToken}` } },
    }),
  );
  try {
    await callToolOn(client, profile, tool);
  } finally {
    await client.close();
  }
}
