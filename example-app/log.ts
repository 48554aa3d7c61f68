// Structured JSON logs (pino): one line per request with its id, which every line logged for that request carries
// too, audit events included. Never a header, a cookie or a query string: those carry tokens.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { NodeMiddleware } from 'express-mcp-oauth/experimental';
import pino, { type DestinationStream, type Logger } from 'pino';

declare module 'node:http' {
  interface IncomingMessage {
    /** This request's id (requestLogger): the caller's X-Request-Id when it is a plain token, or a new one. */
    id?: string;
  }
}

const CHILD = Symbol('the request’s child logger');

/**
 * The logger for a request's own lines (an error, a warning): a child of `logger` carrying the request's id, made at
 * its first line and kept on the request; `logger` itself for a request the request log did not see. A function
 * rather than a `req.log` getter defined on each request: an accessor added to the request object cost a sixth of
 * a refresh grant's throughput (bench/README.md), for a logger most requests never use.
 */
export function requestLog(req: IncomingMessage, logger: Logger): Logger {
  if (req.id === undefined) return logger;
  const tagged = req as IncomingMessage & { [CHILD]?: Logger };
  return (tagged[CHILD] ??= logger.child({ reqId: req.id }));
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * A pino logger writing to `destination`, or to stdout asynchronously: under load a line then costs no write() of
 * its own (the lines logged while one write is under way go out together in the next), where writing each line
 * synchronously took a fifth of the app's time at 1,000 requests per second. Lines are flushed when the app closes
 * and when the process exits; only a hard kill loses the last few milliseconds of them.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, timestamp: isoTime() }, destination ?? pino.destination({ dest: 1, sync: false }));
}

/**
 * pino's `stdTimeFunctions.isoTime` (`,"time":"2026-11-25T04:42:11.123Z"`) without a Date and its formatting per
 * line: the part before the milliseconds changes once a second, so it is made once a second.
 */
export function isoTime(): () => string {
  let second = Number.NaN;
  let prefix = '';
  return () => {
    const now = Date.now();
    const ms = now % 1000;
    if (now - ms !== second) {
      second = now - ms;
      prefix = `,"time":"${new Date(second).toISOString().slice(0, 20)}`;
    }
    return `${prefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
  };
}

/** A caller's request id is kept when it is a plain token (so traces join up), otherwise one is made. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const QUIET_PATHS = new Set(['/healthz', '/readyz']);

/**
 * Gives each request an id (echoed in X-Request-Id, and carried by requestLog's lines), and logs one line
 * when the response is done: method, path without its query string, status, and time taken. Written by hand rather
 * than with pino-http, whose per-request wrappers (a serializer view of the whole request and response) cost about
 * a tenth of a tool call's CPU for the same line.
 */
export function requestLogger(logger: Logger): NodeMiddleware {
  return function logRequest(req, res, next) {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', id);
    // The request's own line below carries the reqId without a child logger; requestLog makes one when needed.
    req.id = id;
    const path = (req.url ?? '').split('?', 1)[0]!;
    if (QUIET_PATHS.has(path)) return next();
    const method = req.method;
    const started = Date.now();
    res.once('close', () => {
      const fields = {
        reqId: id,
        req: { id, method, path },
        res: { statusCode: res.statusCode },
        responseTime: Date.now() - started,
      };
      // Cut off before the response was sent: the client went away (or the connection failed).
      if (!res.writableFinished) return logger.warn(fields, 'request aborted');
      const status = res.statusCode;
      if (status >= 500) logger.error(fields, 'request errored');
      else if (status >= 400) logger.warn(fields, 'request completed');
      else logger.info(fields, 'request completed');
    });
    next();
  };
}
