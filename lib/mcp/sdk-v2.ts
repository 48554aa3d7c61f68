// What the endpoint takes from `@modelcontextprotocol/server` 2.x, through its public API only: the JSON-RPC message
// schema the scope gate checks with, and the shape of the handler `createMcpHandler` returns. The host builds that
// handler with its own import of the SDK, so its servers and the handler come from one copy of the package (an ESM
// and a CommonJS copy would not recognise each other's McpServer).
import type { MessageSchema } from './scope-gate';

/** The part of the SDK's `McpHttpHandler` (from `createMcpHandler`) the endpoint calls. */
export interface McpHttpHandlerLike {
  fetch(request: Request, options?: { authInfo?: unknown; parsedBody?: unknown }): Promise<Response>;
}

/** Whether `value` looks like the SDK's McpHttpHandler. */
export const isMcpHttpHandler = (value: unknown): value is McpHttpHandlerLike =>
  typeof value === 'object' && value !== null && typeof (value as McpHttpHandlerLike).fetch === 'function';

/** The SDK's JSON-RPC message schema, as the gate uses it: `parseJSONRPCMessage` throws on what it refuses. */
export function loadMessageSchemaV2(): MessageSchema {
  let parse: (value: unknown) => unknown;
  try {
    ({ parseJSONRPCMessage: parse } = require('@modelcontextprotocol/server') as {
      parseJSONRPCMessage: (value: unknown) => unknown;
    });
  } catch (error) {
    throw new TypeError(
      'createMcpEndpoint({ handler }) needs @modelcontextprotocol/server 2.x: run `npm install ' +
        `@modelcontextprotocol/server\`. (${(error as Error).message.split('\n')[0]})`,
    );
  }
  if (typeof parse !== 'function')
    throw new TypeError(
      'createMcpEndpoint({ handler }): @modelcontextprotocol/server has no parseJSONRPCMessage; install 2.x.',
    );
  return {
    safeParse(value) {
      try {
        parse(value);
        return { success: true };
      } catch {
        return { success: false };
      }
    },
  };
}
