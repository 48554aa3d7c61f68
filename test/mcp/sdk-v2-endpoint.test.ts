// createMcpEndpoint with a server of MCP SDK 2.x (@modelcontextprotocol/server), behind its own createMcpHandler:
// the real 2.x client in both eras (2026-07-28 through server/discover, and the 2025 handshake), tools gated by the
// token's scopes in tools/list and tools/call, the body read once and handed over as parsed, and what the endpoint
// does with an answer it cannot read.
import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { McpServer, createMcpHandler, type McpServerFactory } from '@modelcontextprotocol/server';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpEndpoint, type McpEndpointOptions } from '../../lib/mcp';
import type { BearerAuth } from '../../lib/middleware/bearer';
import { CONSENT_USER_AGENT } from '../../lib/mcp/describe-tools';
import { createTestServer, ISSUER, obtainTokens, type TestServer } from '../helpers/oauth-app';
import { listenOnLoopback, stall, exchange } from '../helpers/raw-http';
import { stallTest } from '../helpers/edit-loop';

const TOOL_SCOPES = { list_invoices: ['fakture:read'], delete_invoice: ['fakture:write', 'fakture:read'] };
const METADATA = `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp"`;
/** A raw `POST /mcp` head with the bearer token, a JSON body of `length` bytes, and the other header lines given. */
const mcpHead = (accessToken: string, length: number, ...lines: string[]) =>
  [
    'POST /mcp HTTP/1.1',
    'Host: 127.0.0.1',
    `Authorization: Bearer ${accessToken}`,
    ...lines,
    'Content-Type: application/json',
    `Content-Length: ${length}`,
    '',
    '',
  ].join('\r\n');

let oauth: TestServer;
let ran: string[];
let built: number;

/** A 2.x server with three tools, built per request by createMcpHandler; each run is recorded with its caller. */
const factory: McpServerFactory = () => {
  built += 1;
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: 'The caller.', inputSchema: z.object({ label: z.string() }) },
    async ({ label }, ctx) => {
      const auth = ctx.http?.authInfo as unknown as BearerAuth;
      ran.push('whoami');
      return { content: [{ type: 'text', text: `${label}:${auth.userId}:${auth.scopes.join(' ')}` }] };
    },
  );
  server.registerTool('list_invoices', { description: 'Invoices.' }, async () => {
    ran.push('list_invoices');
    return { content: [{ type: 'text', text: '[]' }] };
  });
  server.registerTool('delete_invoice', { description: 'Deletes one.' }, async () => {
    ran.push('delete_invoice');
    return { content: [{ type: 'text', text: 'deleted' }] };
  });
  return server;
};

function mount(options: Partial<McpEndpointOptions> = {}) {
  const app = express();
  app.use(oauth.oauth);
  app.all(
    '/mcp',
    oauth.oauth.requireBearer(),
    createMcpEndpoint({ handler: createMcpHandler(factory), toolScopes: TOOL_SCOPES, ...options }),
  );
  return app;
}

beforeEach(() => {
  oauth = createTestServer();
  ran = [];
  built = 0;
});
afterEach(() => oauth.close());

const token = async (scope: string) => (await obtainTokens(oauth, {}, { scope })).tokens.access_token;

/** A 2.x client connected to the app on loopback, in `era`: modern (server/discover) or legacy (initialize). */
async function connect(app: express.Express, accessToken: string, era: 'modern' | 'legacy') {
  const listener = await listenOnLoopback(app);
  const client = new Client(
    { name: 'test', version: '1' },
    { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${listener.port}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${accessToken}` } },
  });
  await client.connect(transport);
  return {
    client,
    async close() {
      await client.close();
      listener.close();
    },
  };
}

describe.each(['modern', 'legacy'] as const)('the SDK 2.x client, %s era', (era) => {
  test.each([
    ['fakture:read', ['whoami', 'list_invoices']],
    ['fakture:read fakture:write', ['whoami', 'list_invoices', 'delete_invoice']],
    ['fakture:write', ['whoami']],
  ])('with %s and hideToolsOutsideScope, tools/list shows %j', async (scope, names) => {
    const session = await connect(mount({ hideToolsOutsideScope: true }), await token(scope), era);
    try {
      const { tools } = await session.client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(names);
    } finally {
      await session.close();
    }
  });

  test('by default tools/list shows every tool, those outside the scopes too', async () => {
    const session = await connect(mount(), await token('fakture:write'), era);
    try {
      const { tools } = await session.client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['whoami', 'list_invoices', 'delete_invoice']);
    } finally {
      await session.close();
    }
  });

  test('a tool runs with the token as authInfo; one outside the scopes is refused and never runs', async () => {
    const session = await connect(mount(), await token('fakture:read'), era);
    try {
      const result = await session.client.callTool({ name: 'whoami', arguments: { label: 'hi' } });
      expect(result.content).toEqual([{ type: 'text', text: 'hi:user-1:fakture:read' }]);
      await expect(session.client.callTool({ name: 'delete_invoice', arguments: {} })).rejects.toThrow(
        // The challenge names the token's scope with the tool's: the client asks for all of them.
        'Insufficient scope: required "fakture:read fakture:write"',
      );
      expect(ran).toEqual(['whoami']);
    } finally {
      await session.close();
    }
  });
});

test('the modern era was negotiated through server/discover, and the client speaks 2026-07-28', async () => {
  const session = await connect(mount(), await token('fakture:read'), 'modern');
  try {
    expect(session.client.getDiscoverResult()?.supportedVersions).toContain('2026-07-28');
  } finally {
    await session.close();
  }
});

/** The consent page's own tools/list (lib/mcp/describe-tools.ts), which the recording handlers below leave out. */
const consentListing = (req: Request) => req.headers.get('user-agent') === CONSENT_USER_AGENT;
const noTools = () => Response.json({ jsonrpc: '2.0', id: 1, result: { tools: [] } });

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const modern = (app: express.Express, accessToken: string, method: string, params: object, name?: string) => {
  const req = request(app)
    .post('/mcp')
    .set('Authorization', `Bearer ${accessToken}`)
    .set('Accept', 'application/json, text/event-stream')
    .set('MCP-Protocol-Version', '2026-07-28')
    .set('Mcp-Method', method);
  if (name !== undefined) req.set('Mcp-Name', name);
  return req.send({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MODERN_META } });
};

test('server/discover is answered with the 2026-07-28 revision', async () => {
  const res = await modern(mount(), await token('fakture:read'), 'server/discover', {});
  expect(res.status).toBe(200);
  expect(res.body.result.supportedVersions).toEqual(['2026-07-28']);
  expect(res.body.result.capabilities.tools).toBeDefined();
});

test('a tools/call whose Mcp-Name header names another tool is judged by its body: the body is what runs', async () => {
  // The token first: its consent page lists the mounted endpoint's tools, which builds a server of its own.
  const accessToken = await token('fakture:read');
  const res = await modern(
    mount(),
    accessToken,
    'tools/call',
    { name: 'delete_invoice', arguments: {} },
    'whoami',
  );
  expect(res.status).toBe(403);
  expect(res.headers['www-authenticate']).toBe(
    `Bearer ${METADATA}, scope="fakture:read fakture:write", error="insufficient_scope", error_description="The tool delete_invoice needs the scopes fakture:write fakture:read."`,
  );
  expect(ran).toEqual([]);
  expect(built).toBe(0);
});

test('the 2025 leg answers tools/list as an event stream, filtered to the token', async () => {
  const res = await request(mount({ hideToolsOutsideScope: true }))
    .post('/mcp')
    .set('Authorization', `Bearer ${await token('fakture:write')}`)
    .set('Accept', 'application/json, text/event-stream')
    .set('MCP-Protocol-Version', '2025-11-25')
    .send({ jsonrpc: '2.0', id: 4, method: 'tools/list' });
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
  const data = res.text.split('\n').filter((line) => line.startsWith('data: '));
  expect(data).toHaveLength(1);
  const answer = JSON.parse(data[0]!.slice(6));
  expect(answer.id).toBe(4);
  expect(answer.result.tools.map((tool: { name: string }) => tool.name)).toEqual(['whoami']);
  expect(res.text).not.toMatch(/delete_invoice|list_invoices/);
});

test('the handler gets the very value the gate read, never the body to parse again', async () => {
  const seen: Array<{ parsedBody: unknown; authInfo: unknown; bodyUsed: boolean; hasBody: boolean }> = [];
  const handler = {
    async fetch(req: Request, options?: { authInfo?: unknown; parsedBody?: unknown }) {
      if (consentListing(req)) return noTools();
      seen.push({ ...options, bodyUsed: req.bodyUsed, hasBody: req.body !== null } as never);
      return Response.json({ jsonrpc: '2.0', id: 1, result: {} });
    },
  };
  const app = mount({ handler });
  const accessToken = await token('fakture:read');
  const res = await request(app)
    .post('/mcp')
    .set('Authorization', `Bearer ${accessToken}`)
    .set('Content-Type', 'application/json')
    .send('\ufeff{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}');
  expect(res.status).toBe(200);
  expect(seen).toHaveLength(1);
  expect(seen[0]!.parsedBody).toEqual({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  expect(seen[0]!.hasBody).toBe(false);
  expect((seen[0]!.authInfo as BearerAuth).token).toBe(accessToken);
});

describe('an answer the endpoint cannot read where it must filter tools/list is not passed on', () => {
  const listing = (app: express.Express, accessToken: string) =>
    request(app)
      .post('/mcp')
      .set('Authorization', `Bearer ${accessToken}`)
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

  test('JSON that does not parse: 502, a JSON-RPC internal error', async () => {
    const handler = {
      fetch: async () =>
        new Response('{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"delete_invoice"}]', {
          headers: { 'Content-Type': 'application/json' },
        }),
    };
    const res = await listing(mount({ handler, hideToolsOutsideScope: true }), await token('fakture:read'));
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe(-32603);
    expect(res.text).not.toMatch(/delete_invoice/);
  });

  test('an event whose data is not JSON: the stream is cut before it', async () => {
    const handler = {
      fetch: async () =>
        new Response('event: message\ndata: {"tools":[{"name":"delete_invoice"}\n\n', {
          headers: { 'Content-Type': 'text/event-stream' },
        }),
    };
    const app = mount({ handler, hideToolsOutsideScope: true });
    const listener = await listenOnLoopback(app);
    try {
      const accessToken = await token('fakture:read');
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const head = mcpHead(
        accessToken,
        body.length,
        'Accept: application/json, text/event-stream',
        'Connection: close',
      );
      const res = await exchange(listener.port, head, body);
      expect(res.headers + res.body).not.toMatch(/delete_invoice/);
    } finally {
      listener.close();
    }
  });
});

test('a client that goes away aborts the request the SDK was handed', async () => {
  let signal: AbortSignal | undefined;
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const handler = {
    fetch: (req: Request) => {
      if (consentListing(req)) return Promise.resolve(noTools());
      signal = req.signal;
      entered();
      return new Promise<Response>(() => undefined);
    },
  };
  const listener = await listenOnLoopback(mount({ handler }));
  try {
    const accessToken = await token('fakture:read');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami' } });
    const { socket } = stall(listener.port, mcpHead(accessToken, body.length), body);
    await inside;
    expect(signal!.aborted).toBe(false);
    socket.destroy();
    await new Promise((resolve) => signal!.addEventListener('abort', resolve, { once: true }));
    expect(signal!.aborted).toBe(true);
  } finally {
    listener.close();
  }
});

stallTest(
  '32 requests whose bodies never finish build no server; a tool call is answered at once, they get 408',
  async () => {
    // The token first: its consent page lists the endpoint's tools, which builds a server of its own.
    const accessToken = await token('fakture:read');
    const app = express();
    app.post(
      '/mcp',
      oauth.oauth.requireBearer(),
      createMcpEndpoint({ handler: createMcpHandler(factory), toolScopes: TOOL_SCOPES, bodyTimeoutMs: 1500 }),
    );
    const host = await listenOnLoopback(app);
    try {
      const head = (length: number) =>
        mcpHead(
          accessToken,
          length,
          'Accept: application/json, text/event-stream',
          'MCP-Protocol-Version: 2025-11-25',
          'Connection: close',
        );
      const stalled = Array.from({ length: 32 }, () => stall(host.port, head(500), '{"jsonrpc":"2.0",'));
      const started = Date.now();
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_invoices', arguments: {} },
      });
      const call = await exchange(host.port, head(body.length), body);
      expect(call.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(built).toBe(1);
      for (const { answer } of stalled) {
        const res = await answer;
        expect(res.status).toBe(408);
        expect(res.headers).toMatch(/^connection: close$/im);
      }
      expect(built).toBe(1);
      expect(ran).toEqual(['list_invoices']);
    } finally {
      host.close();
    }
  },
);

test.each([
  [{ handler: {} }, 'handler must be what createMcpHandler(factory) of @modelcontextprotocol/server returns'],
  [
    { handler: createMcpHandler(factory), createServer: 'x' },
    'createMcpEndpoint: createServer must be a function that returns a new McpServer of @modelcontextprotocol/sdk 1.x.',
  ],
  [
    { handler: createMcpHandler(factory), maxServers: 4, streaming: true },
    'createMcpEndpoint: maxServers, streaming are options of the @modelcontextprotocol/sdk 1.x pool; with handler alone (2.x) the SDK builds a server per request. Remove them, or add createServer to serve 2025-era requests from the pool.',
  ],
  [
    { handler: createMcpHandler(factory), queueTimeoutMs: 5 },
    'createMcpEndpoint: queueTimeoutMs is an option of the @modelcontextprotocol/sdk 1.x pool; with handler alone (2.x) the SDK builds a server per request. Remove it, or add createServer',
  ],
  [
    {},
    'createMcpEndpoint: pass handler, what createMcpHandler of @modelcontextprotocol/server 2.x returns, or createServer',
  ],
])('options %#: refused at start with how to fix them', (options, message) => {
  expect(() => createMcpEndpoint(options as unknown as McpEndpointOptions)).toThrow(message);
});

describe('both majors: 2025-era requests to the pool of 1.x servers, 2026-07-28 ones to the 2.x handler', () => {
  /** The same two tools on a 1.x server, whose answers say which major ran them. */
  const v1Server = () => {
    const server = new McpServerV1({ name: 'notes', version: '1.0.0' });
    server.registerTool('whoami', { description: 'The caller.' }, async () => {
      ran.push('whoami 1.x');
      return { content: [{ type: 'text', text: '1.x' }] };
    });
    server.registerTool('delete_invoice', { description: 'Deletes one.' }, async () => {
      ran.push('delete_invoice 1.x');
      return { content: [{ type: 'text', text: 'deleted' }] };
    });
    return server;
  };
  const both = () =>
    mount({
      handler: createMcpHandler(factory, { legacy: 'reject' }),
      createServer: v1Server,
      maxServers: 2,
      hideToolsOutsideScope: true,
    });

  test('the 2.x client in the modern era reaches the 2.x server, its tools filtered and gated', async () => {
    const session = await connect(both(), await token('fakture:read'), 'modern');
    try {
      expect((await session.client.listTools()).tools.map((tool) => tool.name)).toEqual([
        'whoami',
        'list_invoices',
      ]);
      const result = await session.client.callTool({ name: 'whoami', arguments: { label: 'm' } });
      expect(result.content).toEqual([{ type: 'text', text: 'm:user-1:fakture:read' }]);
      await expect(session.client.callTool({ name: 'delete_invoice', arguments: {} })).rejects.toThrow(
        'Insufficient scope',
      );
      expect(ran).toEqual(['whoami']);
    } finally {
      await session.close();
    }
  });

  test.each([
    ['the 2.x client in the 2025 era', 'legacy 2.x'],
    ['the 1.x client', '1.x'],
  ])('%s reaches the pool of 1.x servers, its tools filtered and gated', async (_name, client) => {
    const app = both();
    const accessToken = await token('fakture:read');
    let close: () => Promise<void>;
    let list: () => Promise<string[]>;
    let call: (name: string) => Promise<unknown>;
    if (client === '1.x') {
      const listener = await listenOnLoopback(app);
      const v1 = new ClientV1({ name: 'test', version: '1' });
      await v1.connect(
        new TransportV1(new URL(`http://127.0.0.1:${listener.port}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${accessToken}` } },
        }),
      );
      close = async () => {
        await v1.close();
        listener.close();
      };
      list = async () => (await v1.listTools()).tools.map((tool) => tool.name);
      call = (name) => v1.callTool({ name, arguments: {} });
    } else {
      const session = await connect(app, accessToken, 'legacy');
      close = session.close;
      list = async () => (await session.client.listTools()).tools.map((tool) => tool.name);
      call = (name) => session.client.callTool({ name, arguments: {} });
    }
    try {
      expect(await list()).toEqual(['whoami']);
      expect(await call('whoami')).toMatchObject({ content: [{ type: 'text', text: '1.x' }] });
      await expect(call('delete_invoice')).rejects.toThrow();
      expect(ran).toEqual(['whoami 1.x']);
      expect(built).toBe(0);
    } finally {
      await close();
    }
  });
});

test.each([
  ['a Host that makes no URL', 'Host: [::1', '/mcp'],
  ['no Host at all', '', '/mcp'],
  ['an absolute-form target of another host', 'Host: 127.0.0.1', 'http://elsewhere.invalid/mcp'],
])('%s: the SDK is still told a URL, and the request is served', async (_name, hostLine, target) => {
  const urls: string[] = [];
  const handler = {
    async fetch(req: Request) {
      if (consentListing(req)) return noTools();
      urls.push(req.url);
      return Response.json({ jsonrpc: '2.0', id: 1, result: {} });
    },
  };
  const listener = await listenOnLoopback(mount({ handler }));
  try {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const head = [
      `POST ${target} HTTP/1.1`,
      ...(hostLine ? [hostLine] : []),
      `Authorization: Bearer ${await token('fakture:read')}`,
      'Content-Type: application/json',
      `Content-Length: ${body.length}`,
      'Connection: close',
      '',
      '',
    ].join('\r\n');
    const res = await exchange(listener.port, head, body);
    // Node itself refuses a request without Host (HTTP/1.1 requires one) before any handler: nothing to tell then.
    if (res.status === 400 && urls.length === 0) return;
    expect(res.status).toBe(200);
    expect(urls).toHaveLength(1);
    expect(URL.canParse(urls[0]!)).toBe(true);
  } finally {
    listener.close();
  }
});
