// Structured JSON logs (pino): one line per request with its id (pino-http), which every line logged for that
// request carries too, audit events included. Never a header, a cookie or a query string: those carry tokens.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import pino, { type DestinationStream, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * A pino logger writing to `destination`, or to stdout asynchronously: under load a line then costs no write() of
 * its own (the lines logged while one write is under way go out together in the next), where writing each line
 * synchronously took a fifth of the app's time at 1,000 requests per second. Lines are flushed when the app closes
 * and when the process exits; only a hard kill loses the last few milliseconds of them.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    { level, timestamp: pino.stdTimeFunctions.isoTime },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** A caller's request id is kept when it is a plain token (so traces join up), otherwise one is made. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function requestLogger(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    // Lines logged through req.log carry { reqId } (the request's own line included), like the audit events.
    quietReqLogger: true,
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
    customLogLevel: (_req, res, error) =>
      error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        path: req.url.split('?')[0],
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  }) as unknown as RequestHandler;
}
