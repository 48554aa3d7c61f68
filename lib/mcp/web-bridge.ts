// Node's request and response, seen as the Web Request and Response the MCP SDK 2.x handler works with. The body is
// not passed on: the handler is given the value the scope gate read (`parsedBody`), so the SDK never reads or parses
// the request itself.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createEventStreamRewriter, rewriteJson, type Rewrite } from './rewrite-answers';

/** A body-less Web Request with the method, URL and headers of `req`, aborted when `signal` aborts. */
export function toWebRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  // Headers a Web Request may not carry with no body; the SDK never reads them.
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name === 'content-length' || name === 'transfer-encoding') continue;
    headers.append(raw[i]!, raw[i + 1]!);
  }
  return new Request(requestUrl(req), { method: req.method, headers, signal });
}

/**
 * The request's URL as the SDK is told it (for its handlers' information only: nothing routes on it). A Host or a
 * target that makes no URL (Node lets `Host: [::1` through) falls back to localhost rather than failing the request.
 */
function requestUrl(req: IncomingMessage): string {
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const path = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  for (const base of [`${scheme}://${req.headers.host ?? 'localhost'}`, `${scheme}://localhost`])
    if (URL.canParse(path, base)) return new URL(path, base).href;
  return `${scheme}://localhost/`;
}

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1): they describe a connection, and the Web Response has none; Node's server
 * decides them for its own. (The SDK's event stream says `Connection: keep-alive` even to a client that asked to
 * close, and Node would then keep the socket open.)
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

/**
 * Writes `response` to `res`: status, headers and body, streamed as it comes. With `rewrite`, every JSON-RPC response
 * in the body (one JSON document or an event stream) passes through it first. Resolves once the body is written, or
 * the client went away.
 */
export async function writeWebResponse(
  res: ServerResponse,
  response: Response,
  rewrite?: Rewrite,
): Promise<void> {
  const type = response.headers.get('content-type') ?? '';
  const json = /^application\/json\b/i.test(type);
  const stream = /^text\/event-stream\b/i.test(type);
  // The rewritten JSON body is whole before anything is written: it may still be refused.
  const body = rewrite && json && response.body ? rewriteJson(await response.text(), rewrite) : undefined;
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (HOP_BY_HOP.has(name)) return;
    if (name === 'content-length' && (body !== undefined || (rewrite && stream))) return;
    res.setHeader(name, value);
  });
  if (body !== undefined) {
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
    return;
  }
  if (!response.body) {
    res.end();
    return;
  }
  const events = rewrite && stream ? createEventStreamRewriter(rewrite) : undefined;
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  res.once('close', stop);
  try {
    res.flushHeaders();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) return;
      if (events === undefined) res.write(value);
      else {
        const text = events.push(decoder.decode(value, { stream: true }));
        if (text) res.write(text);
      }
    }
    if (events) res.write(events.push(decoder.decode()) + events.end());
    res.end();
  } finally {
    res.off('close', stop);
  }
}
