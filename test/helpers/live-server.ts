// Real servers on loopback for browser and third-party-client tests: the OAuth app on a free port (its issuer is
// that port's URL), and a client callback endpoint that records what the browser was sent back with.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthRouterOptions } from '../../lib/options';
import { createTestServer, type TestServer } from './oauth-app';

export interface LiveServer extends TestServer {
  baseUrl: string;
  stop(): Promise<void>;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

export async function startLiveServer(options: Partial<OAuthRouterOptions> = {}): Promise<LiveServer> {
  let handler: TestServer['app'] | undefined;
  const http = createServer((req, res) => handler!(req, res));
  const port = await listen(http);
  const baseUrl = `http://127.0.0.1:${port}`;
  const test = createTestServer({ issuer: baseUrl, ...options });
  handler = test.app;
  return {
    ...test,
    baseUrl,
    stop: async () => {
      await closeServer(http);
      test.close();
    },
  };
}

export interface CallbackServer {
  redirectUri: string;
  /** Resolves with the query of the next request to the callback path; rejects if none comes in time. */
  nextCallback(timeoutMs?: number): Promise<URLSearchParams>;
  /** Serves an HTML page at /page, e.g. an attacker's page that frames the consent screen. */
  setPage(html: string): void;
  pageUrl: string;
  stop(): Promise<void>;
}

export async function startCallbackServer(): Promise<CallbackServer> {
  let waiting: ((query: URLSearchParams) => void) | undefined;
  let page = '';
  const http = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/page') {
      res.setHeader('Content-Type', 'text/html');
      return res.end(page);
    }
    res.setHeader('Content-Type', 'text/html');
    res.end('<p>You can close this window.</p>');
    // Clients redirect to /callback, or to the root of a loopback port (VS Code).
    if (url.pathname === '/callback' || url.pathname === '/') waiting?.(url.searchParams);
  });
  const port = await listen(http);
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    pageUrl: `http://127.0.0.1:${port}/page`,
    nextCallback: (timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                'The browser never came back to the client (a CSP form-action block, or a broken redirect).',
              ),
            ),
          timeoutMs,
        );
        waiting = (query) => {
          clearTimeout(timer);
          resolve(query);
        };
      }),
    setPage: (html) => {
      page = html;
    },
    stop: () => closeServer(http),
  };
}
