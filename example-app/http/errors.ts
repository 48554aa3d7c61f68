// What the app answers an error no route answered: JSON-RPC, as its clients are MCP clients. The same answer whether
// Express dispatched the request or the OAuth fast path served it (its /mcp route), so it uses Node's response alone.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isStoreUnavailable } from 'express-mcp-oauth';
import type { Logger } from 'pino';
import { requestLog } from '../log';

function writeRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

export function answerError(
  logger: Logger,
): (error: unknown, req: IncomingMessage, res: ServerResponse) => void {
  return function answerError(error, req, res) {
    if (isStoreUnavailable(error) && !res.headersSent) {
      // The database went away for a moment: say so, and when to try again, instead of a 500.
      requestLog(req, logger).warn({ err: error }, 'the database cannot be reached');
      res.setHeader('Retry-After', '5');
      return writeRpcError(res, 503, -32000, 'The service is briefly unavailable; try again in a moment.');
    }
    const given = (error as { status?: unknown } | null)?.status;
    const status = typeof given === 'number' && given >= 400 && given < 500 ? given : 500;
    if (status === 500) requestLog(req, logger).error({ err: error }, 'unexpected error');
    // The answer is already on its way: ending the connection is all that is left (the client sees it cut off).
    if (res.headersSent) return void req.socket.destroy();
    if (status === 500) return writeRpcError(res, 500, -32603, 'Internal error');
    writeRpcError(res, status, -32700, 'Bad request');
  };
}
