// The reference app serves its tool calls (POST /mcp) through the OAuth fast path, ahead of Express, and everything
// else at /mcp through Express. Which requests each takes, and (a property) the same answer for the same bytes: the
// Express app alone and the fast path in front of it, one app and database behind both, compared on status, headers
// and body over what an MCP client or an attacker sends (tokens of every kind, Origin, Host, Accept, Content-Type,
// protocol versions, single messages, batches, notifications, malformed JSON).
import fc from 'fast-check';
import { createUser } from '../../example-app/users';
import { ALL_SCOPES, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { comparable, exchange, listenOnLoopback } from '../helpers/raw-http';

let app: RunningExampleApp;
let wide: string;
let narrow: string;
let revoked: string;
let ghostly: string;

beforeAll(async () => {
  app = await startExampleApp();
  wide = await app.mintToken(ALL_SCOPES);
  // Without clients:read: list_clients is refused with 403 insufficient_scope, and not listed.
  narrow = await app.mintToken(ALL_SCOPES.filter((scope) => scope !== 'clients:read'));
  // A token whose grant the user revoked, and one whose user was deleted (requireUser's refusal).
  revoked = await app.mintToken(ALL_SCOPES);
  const { grant_id } = JSON.parse(Buffer.from(revoked.split('.')[1]!, 'base64url').toString()) as {
    grant_id: string;
  };
  await app.oauth.revokeGrant(grant_id, { by: 'user' });
  const ghost = await createUser(app.db, { email: 'ghost@example.com', password: 'a ghostly password' });
  ghostly = await app.mintToken(ALL_SCOPES, ghost);
  await app.db.run('DELETE FROM users WHERE id = ?', [Number(ghost.id)]);
});
afterAll(() => app.stop());

/** A request's head (latin1, as header bytes go) and its body (UTF-8). */
function raw(method: string, path: string, headers: Record<string, string>, body = ''): [string, Buffer] {
  const payload = Buffer.from(body);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  const length = method === 'POST' ? `Content-Length: ${payload.length}\r\n` : '';
  return [
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${lines.join('')}${length}\r\n`,
    payload,
  ];
}

const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

test('POST /mcp is served without Express; GET, OPTIONS, a trailing slash and a query string go through it', async () => {
  const express = jest.spyOn(app.app as unknown as { handle: () => void }, 'handle');
  try {
    const headers = {
      Authorization: `Bearer ${wide}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    };
    const port = Number(new URL(app.baseUrl).port);
    const ping = await exchange(port, ...raw('POST', '/mcp', headers, PING));
    expect(ping.status).toBe(200);
    expect(JSON.parse(ping.body)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(express).not.toHaveBeenCalled();
    const others = [
      raw('GET', '/mcp', headers),
      raw('OPTIONS', '/mcp', { Origin: 'http://localhost:3000' }),
      raw('POST', '/mcp/', headers, PING),
      raw('POST', '/mcp?x=1', headers, PING),
    ];
    const statuses = [];
    for (const request of others) statuses.push((await exchange(port, ...request)).status);
    expect(statuses).toEqual([405, 204, 200, 200]);
    expect(express).toHaveBeenCalledTimes(others.length);
  } finally {
    express.mockRestore();
  }
});

describe('property: the fast path answers /mcp as Express does', () => {
  /** Mostly what a client sends (so that many requests reach the tools), sometimes one of the others. */
  const usually = <T>(common: T, ...others: T[]) =>
    fc.oneof({ weight: 3, arbitrary: fc.constant(common) }, fc.constantFrom(...others));
  const authorization = usually<() => string | undefined>(
    () => `Bearer ${wide}`,
    () => `Bearer ${narrow}`,
    () => `Bearer ${revoked}`,
    () => `Bearer ${ghostly}`,
    () => `bearer  ${wide}`,
    () => `Bearer ${wide}x`,
    () => 'Bearer not-a-token',
    () => `DPoP ${wide}`,
    () => 'Basic YTpi',
    () => undefined,
  );
  const id = fc.oneof(fc.integer({ min: -5, max: 1e6 }).map(String), fc.constantFrom('"a"', 'null', '1.5'));
  const message = fc.oneof(
    id.map((i) => `{"jsonrpc":"2.0","id":${i},"method":"ping"}`),
    id.map((i) => `{"jsonrpc":"2.0","id":${i},"method":"tools/list"}`),
    fc
      .tuple(
        id,
        fc.constantFrom('list_clients', 'get_company', 'list_invoices', 'no_such_tool', 'List_Clients'),
      )
      .map(
        ([i, name]) =>
          `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"${name}","arguments":{"limit":2}}}`,
      ),
    id.map(
      (i) =>
        `{"jsonrpc":"2.0","id":${i},"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
        `"capabilities":{},"clientInfo":{"name":"p","version":"1"}}}`,
    ),
    fc.constant('{"jsonrpc":"2.0","method":"notifications/initialized"}'),
    fc.constant('{"jsonrpc":"2.0","id":2,"method":"tools/call"}'),
  );
  const body = fc.oneof(
    { weight: 5, arbitrary: message },
    { weight: 2, arbitrary: fc.array(message, { minLength: 0, maxLength: 3 }).map((m) => `[${m}]`) },
    { weight: 1, arbitrary: fc.constantFrom('', '{', 'null', '"ping"', '{"jsonrpc":"2.0"}', '\ufeff{}') },
  );
  const request = fc.record({
    authorization,
    contentType: usually<string | undefined>(
      'application/json',
      undefined,
      'application/json; charset=utf-8',
      'application/json\xa0',
      'text/plain',
      'application/json; charset=latin1',
    ),
    accept: usually<string | undefined>(
      'application/json, text/event-stream',
      undefined,
      'application/json',
      'text/event-stream',
      '*/*',
    ),
    version: usually<string | undefined>('2025-06-18', undefined, '2025-03-26', '2024-11-05', '1999-01-01'),
    origin: usually<string | undefined>(
      undefined,
      'http://localhost:5173',
      'https://attacker.example',
      'null',
    ),
    host: usually<string | undefined>(undefined, 'localhost', 'rebound.attacker.example'),
    contentEncoding: usually<string | undefined>(undefined, 'gzip', 'identity'),
    body,
  });

  // The date moves between the two requests and each gets a request id of its own; everything else must match.
  const ignored = ['date', 'x-request-id'];

  test('status, headers and body', async () => {
    const fast = await listenOnLoopback(app.listener);
    const plain = await listenOnLoopback(app.app);
    const statuses = new Set<number>();
    // Express dispatches the plain side's requests and none of the fast side's: as many calls as runs.
    const express = jest.spyOn(app.app as unknown as { handle: () => void }, 'handle');
    let runs = 0;
    try {
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headers: Record<string, string> = {};
          const auth = r.authorization();
          if (auth !== undefined) headers.Authorization = auth;
          if (r.contentType !== undefined) headers['Content-Type'] = r.contentType;
          if (r.accept !== undefined) headers.Accept = r.accept;
          if (r.version !== undefined) headers['MCP-Protocol-Version'] = r.version;
          if (r.origin !== undefined) headers.Origin = r.origin;
          if (r.contentEncoding !== undefined) headers['Content-Encoding'] = r.contentEncoding;
          const [head, payload] = raw('POST', '/mcp', headers, r.body);
          const sent = r.host === undefined ? head : head.replace('Host: 127.0.0.1', `Host: ${r.host}`);
          const [a, b] = await Promise.all([
            exchange(fast.port, Buffer.from(sent, 'latin1'), payload),
            exchange(plain.port, Buffer.from(sent, 'latin1'), payload),
          ]);
          runs += 1;
          expect(comparable(a, ignored)).toEqual(comparable(b, ignored));
          expect(a.status).toBeGreaterThanOrEqual(200);
          expect(a.status).toBeLessThan(500);
          statuses.add(a.status);
        }),
        { numRuns: 200 },
      );
      expect(express).toHaveBeenCalledTimes(runs);
    } finally {
      express.mockRestore();
      fast.close();
      plain.close();
    }
    // The property saw answers of every kind, not only refusals in front of the tools.
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 202, 400, 401, 403, 406, 415]));
  });
});
