// The endpoint for `@modelcontextprotocol/server` 2.x: the host's own `createMcpHandler` (which serves protocol
// 2026-07-28, `server/discover` included, and the 2025 versions through its stateless fallback) behind the scope
// gate. The body endpoint.ts read is checked here, and the handler is given that very value (`parsedBody`) with the
// token (`authInfo`); its answer is written back, with tools/list answers filtered to the token's tools when the host
// asked for that (hideToolsOutsideScope). The SDK builds a server per request from the host's factory: there is no
// pool to keep.
import type { RpcAnswer } from './rewrite-answers';
import type { McpEndpointConfig } from './endpoint-options';
import type { Serve } from './pooled-endpoint';
import { refuseTool } from './refuse-tool';
import { createScopeGate, type MessageSchema } from './scope-gate';
import type { McpHttpHandlerLike } from './sdk-v2';
import { toWebRequest, writeWebResponse } from './web-bridge';

export function createHandlerServe(
  config: McpEndpointConfig,
  handler: McpHttpHandlerLike,
  messageSchema: MessageSchema,
): Serve {
  const gate = createScopeGate(config.toolScopes, messageSchema);

  return async function serveWithHandler(req, res, auth, body) {
    const decision = gate.check(body, auth.scopes);
    if (decision.refused) return refuseTool(res, auth, decision.refused);
    const { listIds } = decision;
    // With hideToolsOutsideScope, tools/list answers with the tools this token may call, and no others.
    const rewrite =
      listIds.size && config.hideToolsOutsideScope
        ? (reply: RpcAnswer): RpcAnswer => {
            const result = reply.result as { tools?: Array<{ name: string }> } | undefined;
            if (!listIds.has(reply.id) || !Array.isArray(result?.tools)) return reply;
            const tools = result.tools.filter((tool) => gate.allowed(tool.name, auth.scopes));
            return { ...reply, result: { ...result, tools } };
          }
        : undefined;
    // A client that goes away aborts the SDK's exchange (its tool handlers see the signal).
    const gone = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) gone.abort();
    };
    res.once('close', onClose);
    try {
      const response = await handler.fetch(toWebRequest(req, gone.signal), {
        authInfo: auth,
        parsedBody: body,
      });
      await writeWebResponse(res, response, rewrite);
    } finally {
      res.off('close', onClose);
    }
  };
}
