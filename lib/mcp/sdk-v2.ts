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

/** What the endpoint takes from SDK 2.x itself. */
export interface SdkV2 {
  /** The SDK's JSON-RPC message schema, as the gate uses it (`parseJSONRPCMessage` throws on what it refuses). */
  messageSchema: MessageSchema;
  /**
   * The SDK's own routing decision (`isLegacyRequest`): whether createMcpHandler would serve this request as 2025-era
   * traffic. Pure, so any copy of the SDK answers the same.
   */
  isLegacyRequest(request: Request, parsedBody: unknown): Promise<boolean>;
}

/** Loads SDK 2.x (an optional peer dependency) on first use. */
export function loadSdkV2(): SdkV2 {
  let sdk: { parseJSONRPCMessage?: unknown; isLegacyRequest?: unknown };
  try {
    sdk = require('@modelcontextprotocol/server') as typeof sdk;
  } catch (error) {
    throw new TypeError(
      'createMcpEndpoint({ handler }) needs @modelcontextprotocol/server 2.x: run `npm install ' +
        `@modelcontextprotocol/server\`. (${(error as Error).message.split('\n')[0]})`,
    );
  }
  const { parseJSONRPCMessage: parse, isLegacyRequest } = sdk;
  if (typeof parse !== 'function' || typeof isLegacyRequest !== 'function')
    throw new TypeError(
      'createMcpEndpoint({ handler }): @modelcontextprotocol/server has no parseJSONRPCMessage or isLegacyRequest; ' +
        'install 2.x.',
    );
  return {
    messageSchema: {
      safeParse(value) {
        try {
          parse(value);
          return { success: true };
        } catch {
          return { success: false };
        }
      },
    },
    isLegacyRequest: isLegacyRequest as SdkV2['isLegacyRequest'],
  };
}
