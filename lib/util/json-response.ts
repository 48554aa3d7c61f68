// A JSON answer written with Node's own response methods, so that the same code serves a request Express set up and
// one the fast path took before Express (router/fast-path.ts). No ETag: res.json would hash every body for one, and
// none of these answers (tokens, errors, introspection) may be cached (RFC 6749 §5.1, RFC 7662 §2.2).
import type { ServerResponse } from 'node:http';

export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const json = Buffer.from(JSON.stringify(body));
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', json.length);
  res.end(json);
}
