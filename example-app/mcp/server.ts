// The MCP server of the business service, in each MCP SDK major, from one table of tools: every tool registered with
// its zod schema built once for the process. The library's createMcpEndpoint shows each token only the tools its
// scopes allow; a tool learns whose company it acts on from the request's authInfo (see endpoint.ts), never from
// server state. 2026-07-28 requests are served by the SDK 2.x server, built per request by the SDK's
// createMcpHandler; 2025-era requests by SDK 1.x servers, built once and pooled (the fast path of the bench).
import type { AppDb } from '../db/database';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { toolError, toolResult, type ToolContext } from './tool';
import { ALL_TOOLS } from './tools';
import type { RenderDocument } from '../renderer/client';

/** What endpoint.ts adds to `req.auth.extra` once it has found the token's user. */
export type CallerExtra = {
  userId: string;
  grantId: string;
  companyId: number;
};

/** Each tool's scopes, for createMcpEndpoint's `toolScopes`. */
export const TOOL_SCOPES: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  ALL_TOOLS.map((tool) => [tool.name, tool.scopes]),
);

/** Each tool's input schema, by tool name. */
export type InputSchemas = ReadonlyMap<string, z.ZodObject>;

/** Builds every tool's input schema. */
export function buildInputSchemas(): InputSchemas {
  return new Map(
    ALL_TOOLS.map((tool) => [
      tool.name,
      // Strict: a misspelt argument is reported to the model instead of being silently dropped.
      z.object(tool.input).strict(),
    ]),
  );
}

// Built once for the process: every pooled server registers the same (immutable) schemas.
const INPUT_SCHEMAS = buildInputSchemas();

/** What tools reach beyond the database: the document renderer (a downstream API), when the app has one. */
export interface ToolServices {
  renderDocument?: RenderDocument;
}

/** Runs `tool` for the caller that endpoint.ts put in `authInfo.extra`, with the caller's token for downstream calls. */
async function runTool(
  db: AppDb,
  services: ToolServices,
  tool: (typeof ALL_TOOLS)[number],
  args: unknown,
  authInfo: { token?: unknown; extra?: unknown } | undefined,
) {
  const caller = authInfo?.extra as CallerExtra | undefined;
  // Unreachable behind endpoint.ts, which refuses a request before it gets here without a known user.
  if (!caller?.companyId) throw new Error('No signed-in user for this tool call.');
  const context: ToolContext = {
    db,
    userId: caller.userId,
    companyId: caller.companyId,
    renderDocument: async (documentId) => {
      // The bench's servers have no renderer; the app's always do.
      if (!services.renderDocument) throw new Error('This server has no document renderer.');
      return services.renderDocument({ token: String(authInfo?.token) }, documentId);
    },
  };
  try {
    return toolResult(await tool.run(context, args as never));
  } catch (error) {
    return toolError(error);
  }
}

/** What a tool shows of itself in tools/list, in either major. */
const describe = (tool: (typeof ALL_TOOLS)[number]) => ({
  title: tool.title,
  description: `${tool.description} (Needs ${tool.scopes.join(', ')}.)`,
  annotations: {
    readOnlyHint: tool.readOnly,
    destructiveHint: tool.destructive ?? false,
    openWorldHint: false,
  },
});

/** The server for 2026-07-28 requests, on `@modelcontextprotocol/server` 2.x: built per request by createMcpHandler. */
export function createBusinessMcpServerV2(
  db: AppDb,
  serverName: string,
  services: ToolServices = {},
): McpServerV2 {
  const server = new McpServerV2({ name: serverName, version: '1.0.0' }, { capabilities: { tools: {} } });
  for (const tool of ALL_TOOLS)
    server.registerTool(
      tool.name,
      { ...describe(tool), inputSchema: INPUT_SCHEMAS.get(tool.name)! },
      (args: unknown, ctx) => runTool(db, services, tool, args, ctx.http?.authInfo),
    );
  return server;
}

/**
 * A server with every tool. `schemas` defaults to the ones built once for the process; the bench's baseline of the
 * SDK README's stateless pattern passes new ones, as that pattern builds them with each server.
 */
export function createBusinessMcpServer(
  db: AppDb,
  serverName: string,
  schemas: InputSchemas = INPUT_SCHEMAS,
  services: ToolServices = {},
): McpServer {
  const server = new McpServer({ name: serverName, version: '1.0.0' }, { capabilities: { tools: {} } });
  for (const tool of ALL_TOOLS) {
    server.registerTool(
      tool.name,
      { ...describe(tool), inputSchema: schemas.get(tool.name)! },
      (args: unknown, extra) => runTool(db, services, tool, args, extra.authInfo),
    );
  }
  return server;
}
