// createMcpEndpoint: pooled SDK servers behind requireBearer, tools gated by the token's scopes.
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createMcpEndpoint, type McpEndpointOptions } from '../../lib/mcp';
import type { BearerAuth } from '../../lib/middleware/bearer';
import { createDpopKey } from '../helpers/dpop';
import {
  authorizeInBrowser,
  createTestServer,
  ISSUER,
  obtainTokens,
  registerClient,
  RESOURCE,
  tokenRequest,
  USER,
  type TestServer,
} from '../helpers/oauth-app';
import { stall } from '../helpers/raw-http';

const METADATA = `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp"`;
const TOOL_SCOPES = { list_invoices: ['fakture:read'], delete_invoice: ['fakture:write', 'fakture:read'] };

/** A server with three tools; `gate` lets a test hold a tool call open until it says so, and tells when one waits. */
function notesServer(stats: { built: number }, gate?: { wait: Promise<void>; entered(): void }) {
  return () => {
    stats.built += 1;
    const server = new McpServer({ name: 'notes', version: '1.0.0' });
    server.registerTool(
      'whoami',
      { description: 'The caller.', inputSchema: { label: z.string() } },
      async ({ label }, extra) => {
        if (gate) {
          gate.entered();
          await gate.wait;
        }
        const auth = extra.authInfo as BearerAuth;
        return { content: [{ type: 'text', text: `${label}:${auth.userId}:${auth.scopes.join(' ')}` }] };
      },
    );
    server.registerTool('list_invoices', { description: 'Invoices.' }, async () => ({
      content: [{ type: 'text', text: '[]' }],
    }));
    server.registerTool('delete_invoice', { description: 'Deletes one.' }, async () => ({
      content: [{ type: 'text', text: 'deleted' }],
    }));
    return server;
  };
}

let server: TestServer;
let stats: { built: number };
function mount(options: Partial<McpEndpointOptions> = {}, { json = true } = {}) {
  stats = { built: 0 };
  const handler = createMcpEndpoint({
    createServer: notesServer(stats),
    toolScopes: TOOL_SCOPES,
    ...options,
  });
  const app = express();
  app.use(server.oauth);
  if (json) app.all('/mcp', server.oauth.requireBearer(), express.json(), handler);
  else app.all('/mcp', server.oauth.requireBearer(), handler);
  return app;
}
beforeEach(() => {
  server = createTestServer();
});
afterEach(() => server.close());

const rpc = (app: express.Express, token: string, body: unknown) =>
  request(app)
    .post('/mcp')
    .set('Authorization', `Bearer ${token}`)
    .set('Accept', 'application/json, text/event-stream')
    .set('MCP-Protocol-Version', '2025-06-18')
    .send(body as object);
const call = (name: string, args: Record<string, unknown> = {}, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const token = async (scope: string) => (await obtainTokens(server, {}, { scope })).tokens.access_token;

const ALL_TOOLS = ['whoami', 'list_invoices', 'delete_invoice'];

test.each(['fakture:read', 'clients:read', 'fakture:write'])(
  'tools/list with %s shows every tool: one outside the scopes meets the step-up challenge when called',
  async (scope) => {
    const app = mount();
    const res = await rpc(app, await token(scope), { jsonrpc: '2.0', id: 7, method: 'tools/list' });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(7);
    expect(res.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual(ALL_TOOLS);
  },
);

test.each([
  ['fakture:read', ['whoami', 'list_invoices']],
  ['fakture:read fakture:write', ALL_TOOLS],
  ['clients:read', ['whoami']],
  // Both scopes are needed: fakture:write alone does not show a tool that also reads invoices.
  ['fakture:write', ['whoami']],
])('with hideToolsOutsideScope, tools/list with %s shows %j', async (scope, names) => {
  const app = mount({ hideToolsOutsideScope: true });
  const res = await rpc(app, await token(scope), { jsonrpc: '2.0', id: 7, method: 'tools/list' });
  expect(res.status).toBe(200);
  expect(res.body.id).toBe(7);
  expect(res.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual(names);
});

test('a call outside the scopes is 403 insufficient_scope; the challenge names the token’s scopes and the tool’s (RFC 6750 §3.1)', async () => {
  const app = mount();
  const res = await rpc(app, await token('fakture:read'), call('delete_invoice'));
  expect(res.status).toBe(403);
  expect(res.headers['www-authenticate']).toBe(
    `Bearer ${METADATA}, scope="fakture:read fakture:write", error="insufficient_scope", error_description="The tool delete_invoice needs the scopes fakture:write fakture:read."`,
  );
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toEqual({
    error: 'insufficient_scope',
    error_description: 'The tool delete_invoice needs the scopes fakture:write fakture:read.',
  });
});

test('with a DPoP-bound token a tool runs, and a call outside the scopes is refused in the DPoP scheme (RFC 9449 §7.1)', async () => {
  const app = mount();
  const key = createDpopKey();
  const client = await registerClient(server.app, { token_endpoint_auth_method: 'none' });
  const { code, pkce } = await authorizeInBrowser(server.app, client, { scope: 'fakture:read' });
  const issued = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: pkce.verifier,
  }).set('DPoP', key.proof(server.clock.now(), { htu: `${ISSUER}/v1/oauth/token` }));
  const accessToken = issued.body.access_token as string;
  const bound = (body: unknown) =>
    request(app)
      .post('/mcp')
      .set('Authorization', `DPoP ${accessToken}`)
      .set('DPoP', key.proof(server.clock.now(), { htu: RESOURCE, accessToken }))
      .set('Accept', 'application/json, text/event-stream')
      .set('MCP-Protocol-Version', '2025-06-18')
      .send(body as object);
  const allowed = await bound(call('list_invoices'));
  expect(allowed.status).toBe(200);
  expect(allowed.body.result.content[0].text).toBe('[]');
  const refused = await bound(call('delete_invoice'));
  expect(refused.status).toBe(403);
  expect(refused.headers['www-authenticate']).toBe(
    `DPoP ${METADATA}, scope="fakture:read fakture:write", error="insufficient_scope", error_description="The tool delete_invoice needs the scopes fakture:write fakture:read.", algs="ES256 RS256 PS256"`,
  );
});

test('a batch hiding an out-of-scope call among allowed ones is refused whole, before any tool runs', async () => {
  const ran: string[] = [];
  const app = mount({
    createServer: () => {
      const mcp = new McpServer({ name: 'n', version: '1' });
      for (const name of ['list_invoices', 'delete_invoice'])
        mcp.registerTool(name, {}, async () => (ran.push(name), { content: [] }));
      return mcp;
    },
  });
  const res = await rpc(app, await token('fakture:read'), [
    call('list_invoices'),
    call('delete_invoice', {}, 2),
  ]);
  expect(res.status).toBe(403);
  expect(ran).toEqual([]);
});

test('a tool gets the token through authInfo, and runs when the scopes are there', async () => {
  const app = mount();
  const res = await rpc(app, await token('fakture:read'), call('whoami', { label: 'x' }));
  expect(res.status).toBe(200);
  expect(res.body.result.content[0].text).toBe(`x:${USER.id}:fakture:read`);
});

test('servers are built once and reused, not per request', async () => {
  const app = mount();
  const bearer = await token('fakture:read');
  for (let i = 0; i < 20; i += 1) {
    const res = await rpc(app, bearer, call('whoami', { label: String(i) }, i));
    expect(res.body.result.content[0].text).toBe(`${i}:${USER.id}:fakture:read`);
  }
  expect(stats.built).toBe(1);
});

test('concurrent requests with the same JSON-RPC id each get their own answer; at most maxServers exist', async () => {
  const app = mount({ maxServers: 3 });
  const [a, b] = [await token('fakture:read'), await token('fakture:read clients:read')];
  const replies = await Promise.all(
    Array.from({ length: 24 }, (_, i) => rpc(app, i % 2 ? a : b, call('whoami', { label: `r${i}` }))),
  );
  replies.forEach((res, i) =>
    expect(res.body.result.content[0].text).toBe(
      `r${i}:${USER.id}:${i % 2 ? 'fakture:read' : 'fakture:read clients:read'}`,
    ),
  );
  expect(stats.built).toBeLessThanOrEqual(3);
});

test('a request cut off mid-tool drops its server; the late result reaches nobody and the next request works', async () => {
  let open!: () => void;
  let entered!: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  const gate = { wait: new Promise<void>((resolve) => (open = resolve)), entered };
  stats = { built: 0 };
  const app = express();
  app.use(server.oauth);
  // Resolves when the server has seen a response cut off before it finished: the event this test waits for.
  let seen!: () => void;
  const cutSeen = new Promise<void>((resolve) => (seen = resolve));
  app.post(
    '/mcp',
    (_req, res, next) => {
      res.once('close', () => (res.writableFinished ? undefined : seen()));
      next();
    },
    server.oauth.requireBearer(),
    createMcpEndpoint({ createServer: notesServer(stats, gate), maxServers: 1 }),
  );
  const listener: HttpServer = await new Promise((resolve) => {
    const started = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  try {
    const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp`;
    const bearer = await token('fakture:read');
    const headers = {
      authorization: `Bearer ${bearer}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': '2025-06-18',
    };
    // Cut off once the tool runs (not on a timer), by closing the socket itself: a fetch abort may leave it open.
    const port = (listener.address() as AddressInfo).port;
    const body = JSON.stringify(call('whoami', { label: 'cut' }));
    const head = Object.entries({ ...headers, host: '127.0.0.1', 'content-length': String(body.length) })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const cut = stall(port, `POST /mcp HTTP/1.1\r\n${head}\r\n`, body);
    await started;
    cut.socket.destroy();
    expect((await cut.answer).status).toBe(0);
    await cutSeen;
    // The held server was dropped when the server saw the cut, so with maxServers 1 a new one serves this (the gate is still closed: the new call waits for it too, and the late
    // answer of the first must not be this one's).
    const next = fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(call('whoami', { label: 'next' })),
    });
    open();
    const answer = (await (await next).json()) as { result: { content: Array<{ text: string }> } };
    expect(answer.result.content[0]!.text).toBe(`next:${USER.id}:fakture:read`);
    expect(stats.built).toBe(2);
  } finally {
    listener.close();
  }
});

test.each(['get', 'delete'] as const)(
  '%s is 405: a stateless server has no stream and no session',
  async (method) => {
    const app = mount();
    const res = await request(app)
      [method]('/mcp')
      .set('Authorization', `Bearer ${await token('fakture:read')}`);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body.error.code).toBe(-32000);
  },
);

test('without a JSON parser in front it parses the body itself; bad JSON is a JSON-RPC parse error', async () => {
  const app = mount({}, { json: false });
  const bearer = await token('fakture:read');
  const ok = await rpc(app, bearer, call('whoami', { label: 'p' }));
  expect(ok.body.result.content[0].text).toBe(`p:${USER.id}:fakture:read`);
  const denied = await rpc(app, bearer, call('delete_invoice'));
  expect(denied.status).toBe(403);
  const bad = await rpc(app, bearer, '{"jsonrpc":').set('Content-Type', 'application/json');
  expect(bad.status).toBe(400);
  expect(bad.body.error.code).toBe(-32700);
});

test('mounted without requireBearer it fails loudly instead of serving tools to anyone', async () => {
  const app = express();
  app.use(express.json());
  app.post('/mcp', createMcpEndpoint({ createServer: notesServer({ built: 0 }) }));
  const res = await request(app)
    .post('/mcp')
    .send(call('whoami', { label: 'x' }));
  expect(res.status).toBe(500);
  expect(res.text).toContain('mount it after requireBearer');
});

test.each([
  ['no options', undefined, /pass an options object \(\{ handler \} or \{ createServer \}\)/],
  [
    'createServer not a function',
    { createServer: 'x' },
    /pass handler, what createMcpHandler of @modelcontextprotocol\/server 2\.x returns, or createServer, a function that returns a new McpServer of @modelcontextprotocol\/sdk 1\.x\./,
  ],
  ['a factory that returns no server', { createServer: () => ({}) }, /must return an McpServer/],
  ['maxServers 0', { createServer: notesServer({ built: 0 }), maxServers: 0 }, /maxServers/],
  [
    'hideToolsOutsideScope not a boolean',
    { createServer: notesServer({ built: 0 }), hideToolsOutsideScope: 1 },
    /hideToolsOutsideScope must be true or false/,
  ],
  [
    'rememberToolList not a boolean',
    { createServer: notesServer({ built: 0 }), rememberToolList: 'no' },
    /rememberToolList must be true or false/,
  ],
  [
    'toolScopes not a list',
    { createServer: notesServer({ built: 0 }), toolScopes: { a: 'x' } },
    /toolScopes\.a/,
  ],
  [
    'a scope with a space',
    { createServer: notesServer({ built: 0 }), toolScopes: { a: ['a b'] } },
    /toolScopes\.a/,
  ],
])('fails at start on %s', (_name, options, message) => {
  expect(() => createMcpEndpoint(options as unknown as McpEndpointOptions)).toThrow(message);
});

test('the SDK client lists and calls tools through it, with the tools of its scopes only', async () => {
  const app = mount({ hideToolsOutsideScope: true });
  const listener: HttpServer = await new Promise((resolve) => {
    const started = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  const client = new Client({ name: 'test', version: '1.0.0' });
  try {
    const url = new URL(`http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp`);
    const bearer = await token('fakture:read');
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
      }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['whoami', 'list_invoices']);
    const result = await client.callTool({ name: 'whoami', arguments: { label: 'sdk' } });
    expect((result.content as Array<{ text: string }>)[0]!.text).toBe(`sdk:${USER.id}:fakture:read`);
  } finally {
    await client.close();
    listener.close();
  }
});

describe('tools/list answers, remembered per server', () => {
  const list = (id = 7, params?: object) => ({ jsonrpc: '2.0', id, method: 'tools/list', params });
  const names = (res: request.Response) => res.body.result.tools.map((tool: { name: string }) => tool.name);

  /** One server at a time, whose tools a test can change; `notes` is the tool list it was built with. */
  function changingServer() {
    const built: Array<{ archive: ReturnType<McpServer['registerTool']> }> = [];
    const createServer = () => {
      const mcp = new McpServer({ name: 'n', version: '1' });
      mcp.registerTool('notes', {}, async () => ({ content: [] }));
      const archive = mcp.registerTool('archive', {}, async () => ({ content: [] }));
      // A tool that changes its own server's list, announcing it as the SDK does.
      mcp.registerTool('hide_archive', {}, async () => (archive.disable(), { content: [] }));
      built.push({ archive });
      return mcp;
    };
    return { built, createServer };
  }

  test('a server builds its list once: later answers are the first one', async () => {
    const { built, createServer } = changingServer();
    const app = mount({ createServer, maxServers: 1 });
    const bearer = await token('fakture:read');
    expect(names(await rpc(app, bearer, list()))).toEqual(['notes', 'archive', 'hide_archive']);
    // The SDK reads `enabled` each time it builds the list: changed quietly (no announcement), a rebuilt list
    // would drop the tool, a remembered one still shows it.
    built[0]!.archive.enabled = false;
    expect(names(await rpc(app, bearer, list(8)))).toEqual(['notes', 'archive', 'hide_archive']);
    expect(built).toHaveLength(1);
  });

  test('with rememberToolList: false every tools/list is built anew', async () => {
    const { built, createServer } = changingServer();
    const app = mount({ createServer, maxServers: 1, rememberToolList: false });
    const bearer = await token('fakture:read');
    await rpc(app, bearer, list());
    built[0]!.archive.enabled = false;
    expect(names(await rpc(app, bearer, list(8)))).toEqual(['notes', 'hide_archive']);
  });

  test('a server whose tools change after its list was remembered is replaced by a fresh one', async () => {
    const { built, createServer } = changingServer();
    const app = mount({ createServer, maxServers: 1 });
    const bearer = await token('fakture:read');
    await rpc(app, bearer, list());
    expect((await rpc(app, bearer, call('hide_archive'))).status).toBe(200);
    // The changed server is dropped; the next one comes from the factory, with the factory's tools.
    expect(names(await rpc(app, bearer, list(8)))).toEqual(['notes', 'archive', 'hide_archive']);
    expect(built).toHaveLength(2);
  });

  test('a paginated list is never remembered, nor an answer to a request for a later page', async () => {
    let built = 0;
    const createServer = () => {
      const mcp = new McpServer({ name: 'n', version: '1' });
      mcp.registerTool('notes', {}, async () => ({ content: [] }));
      mcp.server.setRequestHandler(ListToolsRequestSchema, (request) => {
        built += 1;
        return request.params?.cursor
          ? { tools: [{ name: 'page2', inputSchema: { type: 'object' as const } }] }
          : { tools: [{ name: 'page1', inputSchema: { type: 'object' as const } }], nextCursor: 'p2' };
      });
      return mcp;
    };
    const app = mount({ createServer, maxServers: 1 });
    const bearer = await token('fakture:read');
    for (let i = 0; i < 2; i += 1) {
      expect(names(await rpc(app, bearer, list(1)))).toEqual(['page1']);
      expect(names(await rpc(app, bearer, list(2, { cursor: 'p2' })))).toEqual(['page2']);
    }
    expect(built).toBe(4);
  });
});
