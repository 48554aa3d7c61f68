// What the consent page shows of this endpoint's tools (lib/consent-tools): the tools `toolScopes` names, with the
// title and read-only hint their server gives, the first time a consent page needs them: for SDK 1.x read from the
// pool's first server, for SDK 2.x by a 2026-07-28 `tools/list` sent to the host's handler (with a User-Agent that
// says so, for its logs). When a server cannot tell, the page shows the tools by name.
import { DESCRIBE_TIMEOUT_MS, registerToolCatalogue, type ConsentTool } from '../consent-tools/registry';
import type { McpHttpHandlerLike } from './sdk-v2';
import { registeredToolsV1 } from './sdk-v1';

/** A tool as tools/list gives it (MCP 2025-06-18 and later: `title`, and `annotations`). */
interface ListedTool {
  name?: unknown;
  title?: unknown;
  annotations?: { title?: unknown; readOnlyHint?: unknown };
}

/** Lists every tool of the endpoint's server, following pagination. */
type ListTools = () => Promise<ListedTool[]>;

/** Registers the endpoint's tools for consent pages; nothing when `toolScopes` names none. */
export function registerEndpointTools(
  toolScopes: ReadonlyMap<string, readonly string[]>,
  source: { server?: object; handler?: McpHttpHandlerLike },
): void {
  if (toolScopes.size === 0) return;
  const list = source.server ? listFromServer(source.server) : listFromHandler(source.handler!);
  let described: Promise<readonly ConsentTool[]> | undefined;
  registerToolCatalogue({
    describe() {
      described ??= list().then(
        (listed) => describe(toolScopes, listed),
        () => {
          // Asked again a minute later, not on every consent page: a server that failed (a database still
          // starting) may answer then, and one that always fails is not asked at every sign-in.
          setTimeout(() => (described = undefined), RETRY_MS).unref();
          return describe(toolScopes, undefined);
        },
      );
      return described;
    },
  });
}

/** How long the tools of a server that could not describe them are shown by name before it is asked again. */
const RETRY_MS = 60_000;

/** The named tools the server lists, with its titles and hints; by name alone when it could not be asked. */
function describe(
  toolScopes: ReadonlyMap<string, readonly string[]>,
  listed: ListedTool[] | undefined,
): ConsentTool[] {
  if (listed === undefined)
    return [...toolScopes].map(([name, scopes]) => ({ name, readOnly: false, scopes }));
  const tools: ConsentTool[] = [];
  for (const tool of listed) {
    if (typeof tool.name !== 'string') continue;
    const scopes = toolScopes.get(tool.name);
    // A tool toolScopes does not name needs only a valid token: no scope unlocks it.
    if (scopes === undefined || scopes.length === 0) continue;
    const title = [tool.title, tool.annotations?.title].find(
      (value): value is string => typeof value === 'string' && value.trim() !== '',
    );
    tools.push({
      name: tool.name,
      ...(title === undefined ? {} : { title }),
      // MCP: readOnlyHint defaults to false, a tool that may change its environment.
      readOnly: tool.annotations?.readOnlyHint === true,
      scopes,
    });
  }
  return tools;
}

const MAX_PAGES = 50;

/**
 * SDK 1.x: the tools the pool's first server holds, read without building, connecting or asking one (a pool counts
 * on createServer being called only when it needs a server).
 */
function listFromServer(server: object): ListTools {
  return async () => {
    const tools = registeredToolsV1(server);
    if (tools === undefined) throw new Error('not an McpServer of @modelcontextprotocol/sdk 1.x');
    return tools;
  };
}

const MODERN = '2026-07-28';
/** The User-Agent of the consent page's tools/list, so that a host can tell it from a client's. */
export const CONSENT_USER_AGENT = 'express-mcp-oauth (consent page)';

/** SDK 2.x: a stateless 2026-07-28 tools/list, handed to the host's handler as a request with no user. */
function listFromHandler(handler: McpHttpHandlerLike): ListTools {
  return async () => {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const body = {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          ...(cursor === undefined ? {} : { cursor }),
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientInfo': { name: 'express-mcp-oauth consent page', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      };
      const response = await handler.fetch(
        new Request('http://localhost/mcp', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': MODERN,
            'mcp-method': 'tools/list',
            'user-agent': CONSENT_USER_AGENT,
          },
          body: JSON.stringify(body),
          // A handler that never answers is let go when the consent page stops waiting (consent-tools/registry.ts).
          signal: AbortSignal.timeout(DESCRIBE_TIMEOUT_MS),
        }),
        // No user: listing runs no tool. A factory that needs one to build its server fails here, and the page
        // shows the tools by name.
        { authInfo: { token: '', clientId: 'express-mcp-oauth', scopes: [], extra: {} }, parsedBody: body },
      );
      const answer = answerOf(await response.text(), response.headers.get('content-type') ?? '');
      const result = answer?.result as { tools?: unknown; nextCursor?: unknown } | undefined;
      if (!Array.isArray(result?.tools)) throw new Error(`tools/list was answered ${response.status}`);
      tools.push(...(result.tools as ListedTool[]));
      cursor = typeof result.nextCursor === 'string' && result.nextCursor ? result.nextCursor : undefined;
      if (!cursor) break;
    }
    return tools;
  };
}

/** The JSON-RPC answer with id 1 in a JSON body or an event stream. */
function answerOf(text: string, contentType: string): { id?: unknown; result?: unknown } | undefined {
  const messages = contentType.includes('text/event-stream')
    ? text
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
    : [text];
  for (const message of messages) {
    try {
      const parsed = JSON.parse(message) as { id?: unknown; result?: unknown };
      if (parsed?.id === 1) return parsed;
    } catch {
      // Not JSON: not the answer.
    }
  }
  return undefined;
}
