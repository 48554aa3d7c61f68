// A local HTTPS server that plays the clients' side of Client ID Metadata Documents: it serves metadata documents
// and JWKS at paths the test sets, answers as badly as a test asks (slow, redirecting, oversized), and counts
// requests per path. It listens on 127.0.0.1 only, with a certificate from the test CA.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ResolveHost } from '../../lib/outbound/safe-fetch';
import { testCa } from './test-ca';

interface Route {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON value (serialised), or a string sent as it is. */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Send the headers and the first bytes of the body, then nothing more (the connection stays open). */
  hangAfterHeaders?: boolean;
}

export interface DocumentServer {
  /** https://127.0.0.1:PORT */
  origin: string;
  port: number;
  /** The URL of `path` on a host name that the test resolver sends to 127.0.0.1 (the certificate covers it). */
  url(path: string, host?: string): string;
  serve(path: string, route: Route): void;
  /** Serves a JSON document with `Content-Type: application/json` and optional Cache-Control. */
  json(path: string, body: unknown, cacheControl?: string): void;
  hits(path: string): number;
  /** The request headers of the last request for `path`. */
  lastHeaders(path: string): Record<string, unknown> | undefined;
  stop(): Promise<void>;
}

/** A resolver that answers 127.0.0.1 for every name: what lets a test reach this server by a real-looking name. */
export const resolveToLoopback: ResolveHost = async () => [{ address: '127.0.0.1', family: 4 }];

export async function startDocumentServer(): Promise<DocumentServer> {
  const { keyPem, certPem } = testCa();
  const routes = new Map<string, Route>();
  const counts = new Map<string, number>();
  const headers = new Map<string, Record<string, unknown>>();
  const server: Server = createServer({ key: keyPem, cert: certPem }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    headers.set(path, { ...req.headers });
    const route = routes.get(path) ?? { status: 404, body: { error: 'not found' } };
    const send = () => {
      const body = typeof route.body === 'string' ? route.body : JSON.stringify(route.body ?? {});
      res.writeHead(route.status ?? 200, { 'content-type': 'application/json', ...route.headers });
      if (route.hangAfterHeaders) res.write(body.slice(0, 1));
      else res.end(body);
    };
    if (route.delayMs) setTimeout(send, route.delayMs).unref();
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    url: (path, host = '127.0.0.1') => `https://${host}:${port}${path}`,
    serve: (path, route) => void routes.set(path, route),
    json: (path, body, cacheControl) =>
      void routes.set(path, { body, headers: cacheControl ? { 'cache-control': cacheControl } : {} }),
    hits: (path) => counts.get(path) ?? 0,
    lastHeaders: (path) => headers.get(path),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
