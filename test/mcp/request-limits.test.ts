// createMcpEndpoint under attack by framing and by time: the exact framings an outside review used, bodies that never
// finish, a full pool, and one caller's session leaking into the next caller's.
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { createMcpEndpoint, type McpEndpointOptions } from '../../lib/mcp';
import { forgetSession } from '../../lib/mcp/sdk-v1';
import { createServerPool, PoolBusyError } from '../../lib/mcp/server-pool';
import { createTestServer, obtainTokens, type TestServer } from '../helpers/oauth-app';
import { exchange, listenOnLoopback, stall } from '../helpers/raw-http';
import { gate, type Gate } from '../helpers/gate';
import { stallTest } from '../helpers/edit-loop';

let oauth: TestServer;
let reader: string;
let writer: string;
beforeAll(async () => {
  oauth = createTestServer();
  reader = (await obtainTokens(oauth, {}, { scope: 'user:read' })).tokens.access_token;
  writer = (await obtainTokens(oauth, {}, { scope: 'user:read company:write' })).tokens.access_token;
});
afterAll(() => oauth.close());

const ran: string[] = [];
function businessServer(hold?: Gate) {
  const server = new McpServer({ name: 'business', version: '1.0.0' });
  server.registerTool('update_company', {}, async () => {
    ran.push('update_company');
    return { content: [{ type: 'text', text: 'renamed' }] };
  });
  server.registerTool('get_profile', {}, async () => {
    if (hold) {
      hold.enter();
      await hold.wait;
    }
    ran.push('get_profile');
    // What this server knows of its caller's client: nothing, unless this very request said it.
    const client = {
      info: server.server.getClientVersion() ?? null,
      caps: server.server.getClientCapabilities() ?? null,
    };
    return { content: [{ type: 'text', text: JSON.stringify(client) }] };
  });
  return server;
}

async function listen(options: Partial<McpEndpointOptions> = {}, hold?: Gate) {
  const app = express();
  const handler = createMcpEndpoint({
    createServer: () => businessServer(hold),
    toolScopes: { update_company: ['company:write'], get_profile: ['user:read'] },
    ...options,
  });
  app.post('/mcp', oauth.oauth.requireBearer(), handler);
  return listenOnLoopback(app);
}

const head = (token: string, contentType: string, length: number | 'chunked', extra = '') =>
  [
    'POST /mcp HTTP/1.1',
    'Host: 127.0.0.1',
    `Authorization: Bearer ${token}`,
    'Accept: application/json, text/event-stream',
    'MCP-Protocol-Version: 2025-03-26',
    'Connection: close',
    `Content-Type: ${contentType}`,
    length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`,
    ...(extra ? [extra] : []),
    '',
    '',
  ].join('\r\n');
const rpc = (method: string, params?: object, id = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });
const send = (port: number, token: string, body: string, contentType = 'application/json') =>
  exchange(port, head(token, contentType, Buffer.byteLength(body)), Buffer.from(body));

beforeEach(() => {
  ran.length = 0;
});

describe('the framings of the review: the scope gate and the SDK read one message', () => {
  let host: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => (host = await listen({ hideToolsOutsideScope: true })));
  afterAll(() => host.close());

  test.each([
    ['application/json followed by a non-breaking space', 'application/json\xa0', 415],
    ['a next-line byte after it', 'application/json\x85', 415],
    ['a charset that is not UTF-8', 'application/json; charset=latin1', 415],
    ['text/plain carrying JSON', 'text/plain', 415],
    ['a media type with a parameter that hides another', 'text/plain; a=application/json', 415],
    ['a malformed parameter', 'application/json; charset', 415],
    ['the plain framing', 'application/json', 403],
    ['upper case and a UTF-8 charset', 'APPLICATION/JSON; charset="UTF-8"', 403],
  ])(
    'update_company with user:read alone, %s (%j): %d, and it never runs',
    async (_name, contentType, status) => {
      const res = await send(host.port, reader, rpc('tools/call', { name: 'update_company' }), contentType);
      expect(res.status).toBe(status);
      expect(ran).toEqual([]);
    },
  );

  test.each([
    ['application/json followed by a non-breaking space', 'application/json\xa0', 415],
    ['the plain framing', 'application/json', 200],
  ])(
    'tools/list with user:read alone, %s (%j): %d, never listing update_company',
    async (_name, contentType, status) => {
      const res = await send(host.port, reader, rpc('tools/list'), contentType);
      expect(res.status).toBe(status);
      expect(res.body).not.toContain('update_company');
    },
  );

  test('two Content-Type headers are refused: Node would keep the first, a Headers object joins both', async () => {
    const body = rpc('tools/call', { name: 'get_profile' });
    const twice = head(reader, 'application/json', body.length, 'Content-Type: application/json');
    const res = await exchange(host.port, twice, body);
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Unsupported Media Type: Content-Type must be sent once.' },
      id: null,
    });
  });

  test.each([
    ['a tool name that is not a string', rpc('tools/call', { name: ['update_company'] }), -32600],
    [
      'tools/call as a notification',
      JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'x' } }),
      -32600,
    ],
    ['an id that is an object', JSON.stringify({ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }), -32600],
    ['an empty batch', '[]', -32600],
    ['a batch of 101', `[${Array.from({ length: 101 }, (_, i) => rpc('ping', undefined, i))}]`, -32600],
    [
      'a member the schema does not know',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', x: 1 }),
      -32600,
    ],
    ['invalid UTF-8', '{"jsonrpc":"2.0","id":1,"method":"\xff"}', -32700],
    ['not JSON', '{"jsonrpc":', -32700],
  ])('%s is refused with 400 and a JSON-RPC error', async (_name, body, code) => {
    const res = await exchange(
      host.port,
      head(reader, 'application/json', Buffer.byteLength(body, 'latin1')),
      body,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error.code).toBe(code);
  });

  test('a UTF-8 BOM before the body is read as the SDK reads it (dropped), and the gate still decides', async () => {
    const res = await send(host.port, reader, `\ufeff${rpc('tools/call', { name: 'update_company' })}`);
    expect(res.status).toBe(403);
    expect(ran).toEqual([]);
  });

  test('a compressed body is refused: the bytes the gate would read are not the message', async () => {
    const body = rpc('tools/call', { name: 'get_profile' });
    const res = await exchange(
      host.port,
      head(reader, 'application/json', body.length, 'Content-Encoding: gzip'),
      body,
    );
    expect(res.status).toBe(415);
  });
});

describe('what one request could do to the next: ids and tasks', () => {
  test('a batch whose ping shares the id of a tool call is refused: it would end the request while the tool runs', async () => {
    const hold = gate();
    const host = await listen({ maxServers: 1 }, hold);
    try {
      const batch = `[${rpc('tools/call', { name: 'get_profile' })},${rpc('ping')}]`;
      const res = await send(host.port, reader, batch);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error).toEqual({
        code: -32600,
        message: 'Invalid Request: two requests of a batch share an id.',
      });
      hold.open();
      expect(ran).toEqual([]);
      // Different ids in one batch are fine.
      const fine = await send(
        host.port,
        reader,
        `[${rpc('tools/call', { name: 'get_profile' }, 1)},${rpc('ping', undefined, 2)}]`,
      );
      expect(fine.status).toBe(200);
    } finally {
      host.close();
    }
  });

  test.each([
    ['tasks/list', rpc('tasks/list')],
    ['tasks/result', rpc('tasks/result', { taskId: 'someone-elses-task' })],
    ['tasks/get', rpc('tasks/get', { taskId: 'someone-elses-task' })],
    ['tasks/cancel', rpc('tasks/cancel', { taskId: 'someone-elses-task' })],
    ['tools/call as a task', rpc('tools/call', { name: 'get_profile', task: { ttl: 60000 } })],
    [
      'a message tied to a task',
      rpc('tools/call', {
        name: 'get_profile',
        _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } },
      }),
    ],
  ])(
    "%s is refused: a stateless server has no session to keep one user's tasks from another",
    async (_name, body) => {
      const taskStore = new InMemoryTaskStore();
      const touched: string[] = [];
      for (const method of [
        'createTask',
        'getTask',
        'getTaskResult',
        'listTasks',
        'updateTaskStatus',
      ] as const) {
        const original = taskStore[method].bind(taskStore) as (...args: unknown[]) => unknown;
        (taskStore as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
          touched.push(method);
          return original(...args);
        };
      }
      const app = express();
      app.post(
        '/mcp',
        oauth.oauth.requireBearer(),
        createMcpEndpoint({
          createServer: () => {
            const server = new McpServer(
              { name: 'tasks', version: '1' },
              {
                capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
                taskStore,
              },
            );
            server.registerTool('get_profile', {}, async () => ({ content: [{ type: 'text', text: 'me' }] }));
            return server;
          },
        }),
      );
      const listener = await listenOnLoopback(app);
      try {
        const res = await send(listener.port, reader, body);
        expect(res.status).toBe(400);
        expect(JSON.parse(res.body).error.message).toBe(
          'Invalid Request: tasks are not supported by this stateless server.',
        );
        expect(touched).toEqual([]);
      } finally {
        listener.close();
      }
    },
  );
});

describe('bodies that never finish and a full pool', () => {
  stallTest(
    '32 requests whose bodies never finish hold no server: a tool call is answered at once, they get 408',
    async () => {
      const host = await listen({ maxServers: 2, bodyTimeoutMs: 1500 });
      try {
        const stalled = Array.from({ length: 32 }, () =>
          stall(host.port, head(writer, 'application/json', 500), '{"jsonrpc":"2.0",'),
        );
        const started = Date.now();
        const ping = await send(host.port, reader, rpc('tools/call', { name: 'get_profile' }));
        expect(ping.status).toBe(200);
        // Far below the body timeout: nothing waited for the stalled bodies.
        expect(Date.now() - started).toBeLessThan(1000);
        for (const { answer } of stalled) {
          const res = await answer;
          expect(res.status).toBe(408);
          expect(res.headers).toMatch(/^connection: close$/im);
          expect(JSON.parse(res.body).error.code).toBe(-32000);
        }
      } finally {
        host.close();
      }
    },
  );

  test.each([
    ['declared', 2048],
    ['chunked, undeclared', 'chunked' as const],
  ])('a body over bodyLimit (%s) is 413 and the connection closes', async (_name, length) => {
    const host = await listen({ bodyLimit: '1kb' });
    try {
      const big = rpc('tools/call', { name: 'get_profile', arguments: { pad: 'x'.repeat(2000) } });
      const body = length === 'chunked' ? `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n` : big;
      const res = await exchange(
        host.port,
        head(reader, 'application/json', length === 'chunked' ? length : big.length),
        body,
      );
      expect(res.status).toBe(413);
      expect(res.headers).toMatch(/^connection: close$/im);
      expect(ran).toEqual([]);
    } finally {
      host.close();
    }
  });

  test('with every server busy past queueTimeoutMs a request is 503 with Retry-After, and the busy call completes', async () => {
    const hold = gate();
    const host = await listen({ maxServers: 1, queueTimeoutMs: 200 }, hold);
    try {
      const busy = send(host.port, reader, rpc('tools/call', { name: 'get_profile' }));
      // The first call holds the only server (it waits on the gate); the second waits its turn, then gives up.
      await hold.entered;
      const second = await send(host.port, reader, rpc('tools/call', { name: 'get_profile' }));
      expect(second.status).toBe(503);
      expect(second.headers).toMatch(/^retry-after: 1$/im);
      expect(JSON.parse(second.body).error.code).toBe(-32000);
      hold.open();
      expect((await busy).status).toBe(200);
      expect(ran).toEqual(['get_profile']);
    } finally {
      host.close();
    }
  });
});

describe('the pool queue, on a fake clock', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('a waiter gives up at its deadline and takes nothing given back later', async () => {
    let made = 0;
    const pool = createServerPool(() => ({ n: (made += 1) }), 1);
    const first = await pool.acquire(100);
    const waiter = pool.acquire(100);
    jest.advanceTimersByTime(99);
    pool.release(first, true);
    // Released before the deadline: the waiter has it.
    await expect(waiter).resolves.toBe(first);
    const late = pool.acquire(100);
    jest.advanceTimersByTime(100);
    await expect(late).rejects.toBeInstanceOf(PoolBusyError);
    pool.release(first, true);
    // The server went back to the idle list, not to the waiter that had left.
    await expect(pool.acquire(100)).resolves.toBe(first);
    expect(made).toBe(1);
  });

  test('past maxWaiting a request is refused at once, not queued (each waiter holds its body)', async () => {
    const pool = createServerPool(() => ({}), 1, undefined, 2);
    await pool.acquire(1000);
    const waiters = [pool.acquire(1000), pool.acquire(1000)];
    await expect(pool.acquire(1000)).rejects.toThrow('2 requests already wait for an MCP server.');
    jest.advanceTimersByTime(1000);
    for (const waiter of waiters) await expect(waiter).rejects.toBeInstanceOf(PoolBusyError);
  });

  test('a waiter whose caller went away leaves the queue at once', async () => {
    const pool = createServerPool(() => ({}), 1);
    const only = await pool.acquire(1000);
    const gone = new AbortController();
    const waiter = pool.acquire(1000, gone.signal);
    gone.abort(new Error('client went away'));
    await expect(waiter).rejects.toThrow('client went away');
    await expect(pool.acquire(1000, gone.signal)).rejects.toThrow('client went away');
    pool.release(only, true);
    await expect(pool.acquire(1000)).resolves.toBe(only);
  });
});

describe("one caller's session never reaches the next", () => {
  test("with one pooled server, user B does not see user A's client info and capabilities", async () => {
    const host = await listen({ maxServers: 1 });
    try {
      const init = rpc('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: { sampling: {}, roots: { listChanged: true } },
        clientInfo: { name: 'alice-private-client', version: '9.9' },
      });
      expect((await send(host.port, writer, init)).status).toBe(200);
      const res = await send(host.port, reader, rpc('tools/call', { name: 'get_profile' }));
      expect(res.status).toBe(200);
      const text = JSON.parse(JSON.parse(res.body).result.content[0].text);
      expect(text).toEqual({ info: null, caps: null });
    } finally {
      host.close();
    }
  });

  test('forgetSession clears what initialize and logging/setLevel left on a server', () => {
    const server = new McpServer({ name: 'n', version: '1' });
    const low = server.server as unknown as Record<string, unknown> & {
      _loggingLevels: Map<unknown, unknown>;
    };
    low._clientVersion = { name: 'a', version: '1' };
    low._clientCapabilities = { sampling: {} };
    low._loggingLevels.set(undefined, 'debug');
    forgetSession(server);
    expect(server.server.getClientVersion()).toBeUndefined();
    expect(server.server.getClientCapabilities()).toBeUndefined();
    expect(low._loggingLevels.size).toBe(0);
  });
});

test.each([
  ['bodyLimit', { bodyLimit: 'lots' }, /bodyLimit/],
  ['bodyLimit 0', { bodyLimit: 0 }, /bodyLimit/],
  ['bodyTimeoutMs', { bodyTimeoutMs: 0 }, /bodyTimeoutMs/],
  ['queueTimeoutMs', { queueTimeoutMs: 1.5 }, /queueTimeoutMs/],
])('fails at start on a bad %s', (_name, options, message) => {
  expect(() =>
    createMcpEndpoint({ createServer: () => businessServer(), ...options } as McpEndpointOptions),
  ).toThrow(message);
});
