// The whole journey of an AI client against an MCP server protected by the library, with the official MCP SDK
// client: the 401, discovery, registration, consent (a scripted browser), the token exchange, tools.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { consentTo } from './http-browser';
import { memoryProvider } from './mcp-client-provider';

export async function mcpJourney(
  mcpUrl: URL,
  user: { email: string; password: string },
  call: { name: string; arguments?: Record<string, unknown> },
  /** How the user gets from the authorization URL to a code; default: the built-in sign-in form, then Allow. */
  authorize: (authorizationUrl: URL) => Promise<string> = (url) => consentTo(url, user),
): Promise<{ tools: string[]; text: string; scope: string | undefined; accessToken: string }> {
  const { provider, state } = memoryProvider('http://127.0.0.1:9/callback');
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await new Client({ name: 'journey', version: '1.0.0' }).connect(first).catch((error: Error) => {
    if (!/Unauthorized/.test(error.message)) throw error;
  });
  const authorizationUrl = state.authorizationUrls[0];
  if (!authorizationUrl) throw new Error('the client was never sent to authorize');
  await first.finishAuth(await authorize(authorizationUrl));
  const client = new Client({ name: 'journey', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  try {
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    const result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
    const text = (result.content as Array<{ type: string; text?: string }>).map((part) => part.text).join('');
    return { tools, text, scope: state.tokens?.scope, accessToken: state.tokens!.access_token };
  } finally {
    await client.close();
  }
}
