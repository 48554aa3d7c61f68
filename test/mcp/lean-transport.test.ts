// The lean transport (lib/mcp/lean-transport.ts) against the SDK's own. createMcpEndpoint answers a stateless request
// by writing the pooled server's JSON-RPC answer straight to the Node response, where it used to hand each request
// to a new StreamableHTTPServerTransport in JSON mode. A fast-check property sends the same bytes to both and holds
// the lean path to the SDK's answer, byte for byte, except where the handler refuses on purpose (each such refusal
// asserted as written). Examples then cover what one request to each cannot show, on both of the handler's paths
// (`streaming` false and true): the SDK client, progress, requests to the client, notifications and responses alone,
// a batch cancelling itself, a client that goes away, concurrent requests and one caller's state on a reused server.
import { request as httpRequest, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import express, { type Express, type RequestHandler } from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createMcpEndpoint, type McpEndpointOptions } from '../../lib/mcp';
import { NO_REQUESTS_TO_CLIENT } from '../../lib/mcp/lean-transport';
import type { AuthenticatedRequest, BearerAuth } from '../../lib/middleware/bearer';
import { stall } from '../helpers/raw-http';
import { gate, type Gate } from '../helpers/gate';

const SEED = Number(process.env.LEAN_SEED ?? 20261126);
const RUNS = Number(process.env.LEAN_RUNS ?? 150);

// --- One server factory for every app here ------------------------------------------------------------------------

/** The caller every request carries: requireBearer's req.auth, set by a stand-in (no token to verify). */
const AUTH: BearerAuth = {
  token: 'not-a-real-token',
  clientId: 'client-1',
  actor: 'user',
  userId: 'user-1',
  scopes: [],
  grantId: 'grant-1',
  expiresAt: 4_102_444_800,
  resource: new URL('http://127.0.0.1/mcp'),
  extra: { userId: 'user-1', grantId: 'grant-1' },
};
const withAuth: RequestHandler = (req, _res, next) => {
  (req as AuthenticatedRequest).auth = AUTH;
  next();
};

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
/** Event-loop turns: a call that answers after its batch's later requests, without a timer. */
const turns = async (count: number) => {
  for (let i = 0; i < count; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

interface Stats {
  /** Servers the factory made. */
  built: number;
  /** Messages without an answer that reached a server: notifications/initialized, and responses to no request. */
  delivered?: string[];
  /** The servers made, to look inside them. */
  servers?: McpServer[];
}

/** Tools, a resource and a prompt. */
function demoServer(stats: Stats, hold?: Gate) {
  return () => {
    const number = (stats.built += 1);
    const server = new McpServer({ name: 'demo', version: '1.0.0' }, { capabilities: { logging: {} } });
    stats.servers?.push(server);
    server.server.oninitialized = () => stats.delivered?.push('initialized');
    server.server.onerror = (error) => {
      if (error.message.startsWith('Received a response for an unknown message ID'))
        stats.delivered?.push('response');
    };
    server.registerTool('echo', { inputSchema: { text: z.string() } }, async (args) => text(args.text));
    server.registerTool(
      'later',
      { inputSchema: { text: z.string(), turns: z.number().int().min(0).max(20) } },
      async (args) => (await turns(args.turns), text(args.text)),
    );
    server.registerTool('fail', {}, async () => {
      throw new Error('the tool failed');
    });
    // What the transport tells a tool of its request. Header names sorted: the SDK's transport shows a Web Headers
    // object's entries (sorted by name), the lean one Node's headers (in the order they came).
    server.registerTool('context', {}, async (extra) =>
      text(
        JSON.stringify({
          auth: extra.authInfo,
          sessionId: extra.sessionId ?? null,
          requestId: extra.requestId,
          meta: extra._meta ?? null,
          url: extra.requestInfo?.url?.href ?? null,
          headers: Object.fromEntries(Object.entries(extra.requestInfo?.headers ?? {}).sort()),
        }),
      ),
    );
    // What the server remembers of a caller: initialize's client and capabilities, logging/setLevel's level (kept
    // by the SDK per session id; a stateless request has none).
    server.registerTool('session', {}, async () => {
      const { _loggingLevels: levels } = server.server as unknown as { _loggingLevels: Map<unknown, string> };
      return text(
        JSON.stringify({
          client: server.server.getClientVersion() ?? null,
          caps: server.server.getClientCapabilities() ?? null,
          level: levels.get(undefined) ?? null,
        }),
      );
    });
    // Notifications during a call: progress to a caller that sent a token, and a log message.
    server.registerTool('progress', {}, async (extra) => {
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined)
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: 1, total: 2 },
        });
      await server.sendLoggingMessage({ level: 'info', data: 'halfway' });
      return text('done');
    });
    // A request to the client. Its own timeout is short, so that a transport that let it wait would fail a test in
    // two seconds rather than the SDK's sixty.
    server.registerTool('sample', {}, async () => {
      try {
        await server.server.createMessage(
          { messages: [{ role: 'user', content: { type: 'text', text: 'Say hi.' } }], maxTokens: 5 },
          { timeout: 2000 },
        );
        return text('the client answered');
      } catch (error) {
        return text((error as Error).message);
      }
    });
    server.registerTool('hold', {}, async () => {
      hold?.enter();
      await hold?.wait;
      return text(`held by server ${number}`);
    });
    server.registerResource('readme', 'memo://readme', { mimeType: 'text/plain' }, async (uri) => ({
      contents: [{ uri: uri.href, text: 'read me' }],
    }));
    server.registerPrompt('greet', { argsSchema: { name: z.string() } }, ({ name }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Hello ${name}` } }],
    }));
    return server;
  };
}

/** createMcpEndpoint behind a fixed req.auth. */
function handlerApp(
  createServer: () => McpServer,
  options: Partial<McpEndpointOptions> = {},
  before?: RequestHandler,
) {
  const app = express();
  app.post('/mcp', ...(before ? [before] : []), withAuth, createMcpEndpoint({ createServer, ...options }));
  return app;
}

/** What createMcpEndpoint did before the lean transport: a fresh server and SDK transport (JSON mode) per request. */
function referenceApp(createServer: () => McpServer) {
  const app = express();
  app.post('/mcp', withAuth, express.json(), async (req, res) => {
    const server = createServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
    await server.close();
  });
  return app;
}

interface Listening {
  port: number;
  url: URL;
  close(): void;
}
async function listen(app: Express): Promise<Listening> {
  const listener: HttpServer = await new Promise((resolve) => {
    const started = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  const port = (listener.address() as AddressInfo).port;
  return {
    port,
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    close: () => {
      listener.closeAllConnections();
      listener.close();
    },
  };
}

// --- HTTP ---------------------------------------------------------------------------------------------------------

interface Answer {
  status: number;
  type: string;
  text: string;
}
const ACCEPT_BOTH = 'application/json, text/event-stream';

/**
 * POSTs `body` with exactly these headers and no client's defaults, under one Host whatever the port: tools see the
 * request's headers and URL, which must not differ between two apps by their port. A request left unanswered fails
 * after five seconds rather than at the test's timeout.
 */
function post(port: number, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: {
          host: 'mcp.test',
          'content-type': 'application/json',
          accept: ACCEPT_BOTH,
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            type: res.headers['content-type'] ?? '',
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error(`no answer within 5 s to ${body}`)));
    req.on('error', reject);
    req.end(body);
  });
}

type Id = string | number;
interface Message {
  jsonrpc: '2.0';
  id?: Id;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
}
/** The JSON-RPC responses of an answer: its JSON document, or the `data:` events of its event stream. */
function responsesOf(answer: Answer): Message[] {
  const values: unknown[] = answer.type.startsWith('text/event-stream')
    ? answer.text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)))
    : [JSON.parse(answer.text)].flat();
  return (values as Message[]).filter((message) => message.method === undefined);
}
const resultText = (message: Message | undefined) =>
  (message?.result as { content: Array<{ text: string }> } | undefined)?.content[0]?.text;
const toolCall = (name: string, args: Record<string, unknown> = {}, id: Id = 1): Message => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

// --- The differential property ------------------------------------------------------------------------------------

type Spec =
  | { kind: 'request'; method: string; params?: Record<string, unknown> }
  | { kind: 'notification'; method: string; params?: Record<string, unknown> }
  | { kind: 'cancel'; own: boolean }
  | { kind: 'response'; id: Id; error: boolean };

const SUPPORTED = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];
const callSpec = (name: string, args?: Record<string, unknown>, meta?: Record<string, unknown>): Spec => ({
  kind: 'request',
  method: 'tools/call',
  params: { name, ...(args && { arguments: args }), ...(meta && { _meta: meta }) },
});
const request: fc.Arbitrary<Spec> = fc.oneof(
  fc.constantFrom<Spec>({ kind: 'request', method: 'ping' }, { kind: 'request', method: 'tools/list' }),
  fc.string({ unit: 'grapheme', maxLength: 6 }).map((value) => callSpec('echo', { text: value })),
  // Invalid arguments: the zod schema makes them an error result.
  fc.constantFrom({ text: 5 }, {}, undefined).map((args) => callSpec('echo', args)),
  // Calls that answer after the batch's later requests: answers in request order, not in the order they come.
  fc.nat({ max: 6 }).map((count) => callSpec('later', { text: `after ${count}`, turns: count })),
  {
    weight: 3,
    arbitrary: fc
      .constantFrom('fail', 'context', 'session', 'no-such-tool')
      .map((name) => callSpec(name, {})),
  },
  fc
    .option(fc.constantFrom<Id>('token-1', 7))
    .map((token) => callSpec('progress', {}, token === null ? undefined : { progressToken: token })),
  fc.constantFrom('memo://readme', 'memo://missing').map<Spec>((uri) => ({
    kind: 'request',
    method: 'resources/read',
    params: { uri },
  })),
  fc
    .constantFrom<[string, Record<string, unknown>]>(['greet', { name: 'Ana' }], ['greet', {}], ['nope', {}])
    .map<Spec>(([name, args]) => ({
      kind: 'request',
      method: 'prompts/get',
      params: { name, arguments: args },
    })),
  fc
    .constantFrom('debug', 'loud')
    .map<Spec>((level) => ({ kind: 'request', method: 'logging/setLevel', params: { level } })),
  fc.constant<Spec>({ kind: 'request', method: 'vendor/unknown', params: { a: 1 } }),
  fc
    .tuple(fc.constantFrom(...SUPPORTED, '1999-01-01', '2099-12-31'), fc.boolean())
    .map<Spec>(([protocolVersion, sampling]) => ({
      kind: 'request',
      method: 'initialize',
      params: {
        protocolVersion,
        capabilities: sampling ? { sampling: {} } : {},
        clientInfo: { name: 'prop-client', version: '1.0' },
      },
    })),
);
const notification: fc.Arbitrary<Spec> = fc.oneof(
  fc.constantFrom<Spec>(
    { kind: 'notification', method: 'notifications/initialized' },
    { kind: 'notification', method: 'notifications/vendor', params: { b: 2 } },
  ),
  // A cancellation of one of the batch's own requests, or of a request no one made.
  { weight: 2, arbitrary: fc.boolean().map<Spec>((own) => ({ kind: 'cancel', own })) },
);
const ID = fc.constantFrom<Id>(0, 1, 2, 7, '1', 'a', 'req-2');
const response: fc.Arbitrary<Spec> = fc
  .tuple(ID, fc.boolean())
  .map(([id, error]) => ({ kind: 'response', id, error }));

const testCase = fc.record({
  specs: fc.array(
    fc.oneof({ weight: 4, arbitrary: request }, { weight: 2, arbitrary: notification }, response),
    { minLength: 1, maxLength: 4 },
  ),
  /** The requests' ids, distinct as JSON values (1 and "1" are two ids, and both come up). */
  ids: fc.uniqueArray(ID, { minLength: 4, maxLength: 4, selector: (id) => `${typeof id}:${id}` }),
  /** The second request takes the first one's id. */
  shareId: fc.oneof(
    { weight: 1, arbitrary: fc.constant(true) },
    { weight: 5, arbitrary: fc.constant(false) },
  ),
  /** A batch of the specs, or the first alone. */
  batch: fc.boolean(),
  version: fc.constantFrom(undefined, '2025-03-26', '2025-06-18', '2025-11-25', 'bogus'),
  accept: fc.oneof(
    { weight: 12, arbitrary: fc.constant(ACCEPT_BOTH) },
    fc.constantFrom('application/json', 'text/event-stream'),
  ),
});
type Case = typeof testCase extends fc.Arbitrary<infer T> ? T : never;

const isRequest = (message: Message) => message.method !== undefined && message.id !== undefined;

/** The case's JSON-RPC messages: requests take the case's ids in turn; a cancellation names one of them, or none. */
function messagesOf(c: Case): Message[] {
  const specs = c.batch ? c.specs : c.specs.slice(0, 1);
  const ids = [...c.ids];
  if (c.shareId) ids[1] = ids[0]!;
  let next = 0;
  const messages = specs.map((spec): Message => {
    switch (spec.kind) {
      case 'request':
        return {
          jsonrpc: '2.0',
          id: ids[next++]!,
          method: spec.method,
          ...(spec.params && { params: spec.params }),
        };
      case 'notification':
        return { jsonrpc: '2.0', method: spec.method, ...(spec.params && { params: spec.params }) };
      case 'cancel':
        return {
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: spec.own ? 'own' : 'gone' },
        };
      case 'response':
        return spec.error
          ? { jsonrpc: '2.0', id: spec.id, error: { code: -32001, message: 'refused' } }
          : { jsonrpc: '2.0', id: spec.id, result: {} };
    }
  });
  const own = messages.find(isRequest)?.id ?? 'gone';
  for (const message of messages)
    if (message.params?.requestId === 'own') message.params = { requestId: own, reason: 'changed my mind' };
  return messages;
}

/** What the request asks the server, for the record of what the property covered: a method, a tool by name. */
const asks = (message: Message) =>
  message.method === 'tools/call' ? `tools/call ${String(message.params!.name)}` : message.method!;

/**
 * Where the lean path refuses on purpose what the SDK's transport would serve, with the refusal it sends, checked
 * in the handler's order (the scope gate, then the protocol version); undefined where both must answer alike.
 */
function deliberateRefusal(c: Case, messages: Message[]): { why: string; message: string } | undefined {
  // Accept is checked first on both paths, in the same words.
  if (c.accept !== ACCEPT_BOTH) return undefined;
  const ids = messages.filter(isRequest).map((message) => message.id);
  // JSON-RPC 2.0 §4: an id names one request. The SDK answers the first of two that share one and drops the other.
  if (new Set(ids).size < ids.length)
    return { why: 'shared id', message: 'Invalid Request: two requests of a batch share an id.' };
  // The SDK drops the answer of a request cancelled after it started, and waits for it: the HTTP request never
  // ends (shown below). The gate refuses any such batch, whichever comes first.
  if (messages.some((m) => m.method === 'notifications/cancelled' && ids.includes(m.params!.requestId as Id)))
    return { why: 'own cancel', message: 'Invalid Request: a batch may not cancel a request of its own.' };
  const initialize = messages.find((message) => message.method === 'initialize');
  // Both refuse an initialize that does not come alone, and an unsupported MCP-Protocol-Version, alike.
  if (initialize && messages.length > 1) return undefined;
  if (!initialize && c.version !== undefined && !SUPPORTED.includes(c.version)) return undefined;
  // An initialize speaks the version the server answers with: the one asked for when supported, else the latest.
  const asked = initialize?.params!.protocolVersion as string;
  const negotiated = SUPPORTED.includes(asked) ? asked : SUPPORTED[0]!;
  const spoken = initialize ? negotiated : (c.version ?? '2025-03-26');
  // MCP 2025-06-18 removed JSON-RPC batching; the SDK 1.x transport takes a batch whatever the version.
  if (c.batch && spoken >= '2025-06-18')
    return {
      why: 'batch refused by version',
      message: `Invalid Request: protocol version ${spoken} has no JSON-RPC batches (removed in 2025-06-18); send one message per request.`,
    };
  return undefined;
}

describe(`the lean path answers as the SDK's transport in JSON mode (seed ${SEED})`, () => {
  let lean: Listening;
  let reference: Listening;
  beforeAll(async () => {
    // One server for every request: from the second on, each meets a server that an earlier request used.
    lean = await listen(handlerApp(demoServer({ built: 0 }), { maxServers: 1 }));
    reference = await listen(referenceApp(demoServer({ built: 0 })));
  });
  afterAll(() => {
    lean.close();
    reference.close();
  });

  test('the same status and the same bytes, but for the refusals the handler makes on purpose', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(testCase, async (c) => {
        const messages = messagesOf(c);
        const body = JSON.stringify(c.batch ? messages : messages[0]);
        const headers: Record<string, string> = { accept: c.accept };
        if (c.version !== undefined) headers['mcp-protocol-version'] = c.version;
        const ours = await post(lean.port, body, headers);
        const deliberate = deliberateRefusal(c, messages);
        if (deliberate) {
          seen.add(deliberate.why);
          expect({ status: ours.status, body: JSON.parse(ours.text) }).toEqual({
            status: 400,
            body: { jsonrpc: '2.0', error: { code: -32600, message: deliberate.message }, id: null },
          });
          // Not sent to the SDK: it would never answer.
          if (deliberate.why === 'own cancel') return;
          const sdk = await post(reference.port, body, headers);
          if (deliberate.why === 'batch refused by version') expect([200, 202]).toContain(sdk.status);
          // What the refusal spares the client: one of the requests is never answered.
          if (deliberate.why === 'shared id' && sdk.status === 200)
            expect(responsesOf(sdk).length).toBeLessThan(messages.filter(isRequest).length);
          return;
        }
        const sdk = await post(reference.port, body, headers);
        expect({ status: ours.status, text: ours.text }).toEqual({ status: sdk.status, text: sdk.text });
        seen.add(`${sdk.status}${c.batch ? ' batch' : ''}`);
        if (sdk.status === 200) for (const message of messages.filter(isRequest)) seen.add(asks(message));
        if (sdk.status === 202) expect(ours.text).toBe('');
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The cases the property is for all came up: a generator that stopped making one would pass without testing it.
    const expected = [
      ...['200', '200 batch', '202', '202 batch', '400', '406'],
      ...['shared id', 'own cancel', 'batch refused by version'],
      ...[
        'ping',
        'tools/list',
        'initialize',
        'logging/setLevel',
        'resources/read',
        'prompts/get',
        'vendor/unknown',
      ],
      ...['echo', 'later', 'fail', 'context', 'session', 'progress', 'no-such-tool'].map(
        (n) => `tools/call ${n}`,
      ),
    ];
    expect(expected.filter((label) => !seen.has(label))).toEqual([]);
  });
});

// --- Both paths ---------------------------------------------------------------------------------------------------

/**
 * What a test leaves open (listeners, gates), closed after it even when it fails or times out: a request left
 * hanging by a broken rule must fail its test, not keep Jest from exiting.
 */
const leftOpen: Array<() => void> = [];
afterEach(() => {
  for (const close of leftOpen.splice(0)) close();
});
async function serve(app: Express): Promise<Listening> {
  const host = await listen(app);
  leftOpen.push(host.close);
  return host;
}
function shutGate(): Gate {
  const hold = gate();
  leftOpen.push(hold.open);
  return hold;
}

describe.each([
  ['lean JSON', false],
  ['streaming', true],
] as const)('on the %s path', (_name, streaming) => {
  test('the SDK client connects, lists and calls tools; progress reaches it only when the call streams', async () => {
    const stats = { built: 0 };
    const host = await serve(handlerApp(demoServer(stats), { streaming }));
    const client = new Client({ name: 'test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(host.url));
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
        'echo',
        'later',
        'fail',
        'context',
        'session',
        'progress',
        'sample',
        'hold',
      ]);
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'hi' }]);
      const progress: unknown[] = [];
      const done = await client.callTool({ name: 'progress', arguments: {} }, undefined, {
        onprogress: (update) => progress.push(update),
      });
      expect(done.content).toEqual([{ type: 'text', text: 'done' }]);
      // A JSON answer holds responses only (the SDK's JSON mode drops notifications the same way).
      expect(progress).toEqual(streaming ? [{ progress: 1, total: 2 }] : []);
      expect(stats.built).toBe(1);
    } finally {
      await client.close();
    }
  });

  test('a request to the client fails at once, not at its timeout, and the server serves the next requests', async () => {
    const stats: Stats = { built: 0, servers: [] };
    const host = await serve(handlerApp(demoServer(stats), { streaming, maxServers: 1 }));
    for (let round = 0; round < 3; round += 1) {
      const started = Date.now();
      const sampled = await post(host.port, JSON.stringify(toolCall('sample')));
      expect(Date.now() - started).toBeLessThan(1000);
      expect(sampled.status).toBe(200);
      expect(resultText(responsesOf(sampled)[0])).toContain(NO_REQUESTS_TO_CLIENT);
    }
    for (const value of ['a', 'b', 'c']) {
      const res = await post(host.port, JSON.stringify(toolCall('echo', { text: value })));
      expect(resultText(responsesOf(res)[0])).toBe(value);
    }
    expect(stats.built).toBe(1);
    // The refused requests left nothing behind on the server, which stays connected on the lean path: no response
    // handler waits for an answer that will never come.
    const protocol = stats.servers![0]!.server as unknown as { _responseHandlers: Map<unknown, unknown> };
    expect(protocol._responseHandlers.size).toBe(0);
  });

  test.each([
    ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }, ['initialized']],
    ['a response', { jsonrpc: '2.0', id: 5, result: {} }, ['response']],
    ['an error response', { jsonrpc: '2.0', id: 'x', error: { code: -32000, message: 'no' } }, ['response']],
    [
      'a batch of notifications and responses',
      [
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 5, result: {} },
      ],
      ['initialized', 'response'],
    ],
  ])(
    '%s alone is accepted with 202 and no body (Streamable HTTP, sending messages), and reaches the server',
    async (_name, body, delivered) => {
      const stats: Stats = { built: 0, delivered: [] };
      const host = await serve(handlerApp(demoServer(stats), { streaming }));
      const res = await post(host.port, JSON.stringify(body), { 'mcp-protocol-version': '2025-03-26' });
      expect({ status: res.status, text: res.text }).toEqual({ status: 202, text: '' });
      // Sorted: a notification's handler runs a turn later than a response is matched.
      expect(stats.delivered!.sort()).toEqual(delivered);
    },
  );

  test('a batch cancelling its own request is refused before any tool runs', async () => {
    const hold = shutGate();
    const host = await serve(handlerApp(demoServer({ built: 0 }, hold), { streaming }));
    const batch = [
      toolCall('hold', {}, 'call-1'),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'call-1' } },
    ];
    // Served, the call would start and its answer never come (see the SDK's transport below): fail at once then.
    const res = await Promise.race([
      post(host.port, JSON.stringify(batch), { 'mcp-protocol-version': '2025-03-26' }),
      hold.entered.then(() => 'the call started'),
    ]);
    expect(res).not.toBe('the call started');
    const { status, text: body } = res as Answer;
    expect({ status, body: JSON.parse(body) }).toEqual({
      status: 400,
      body: {
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request: a batch may not cancel a request of its own.' },
        id: null,
      },
    });
  });

  test('a client gone mid-call drops its server; the next request is served by a fresh one', async () => {
    const hold = shutGate();
    const stats = { built: 0 };
    // Resolves once the app has seen the response cut off before it finished (as the handler sees it).
    let seen!: () => void;
    const cutSeen = new Promise<void>((resolve) => (seen = resolve));
    const watch: RequestHandler = (_req, res, next) => {
      res.once('close', () => (res.writableFinished ? undefined : seen()));
      next();
    };
    const host = await serve(handlerApp(demoServer(stats, hold), { streaming, maxServers: 1 }, watch));
    // Cut off once the tool runs (not on a timer), by closing the socket itself.
    const body = JSON.stringify(toolCall('hold'));
    const head = [
      'POST /mcp HTTP/1.1',
      'Host: mcp.test',
      'Content-Type: application/json',
      `Accept: ${ACCEPT_BOTH}`,
      `Content-Length: ${body.length}`,
      '',
      '',
    ].join('\r\n');
    const cut = stall(host.port, head, body);
    await hold.entered;
    cut.socket.destroy();
    await cutSeen;
    // With maxServers 1, only a dropped server makes room for a new one. The gate is still shut: this call waits on
    // it too, and the first call's late answer, once it opens, must not be this one's.
    const next = post(host.port, JSON.stringify(toolCall('hold', {}, 2)));
    hold.open();
    expect(responsesOf(await next)).toEqual([
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'held by server 2' }] } },
    ]);
    expect(stats.built).toBe(2);
  });

  test("state one request leaves on a reused server (initialize's client, setLevel's level) never reaches the next", async () => {
    const stats = { built: 0 };
    const host = await serve(handlerApp(demoServer(stats), { streaming, maxServers: 1 }));
    const send = (body: unknown) =>
      post(host.port, JSON.stringify(body), { 'mcp-protocol-version': '2025-03-26' });
    const session = async (res: Promise<Answer>, id: Id = 1) =>
      JSON.parse(resultText(responsesOf(await res).find((message) => message.id === id))!);
    const initialize = await send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-03-26',
        capabilities: { sampling: {} },
        clientInfo: { name: 'alice-private-client', version: '9.9' },
      },
    });
    expect(initialize.status).toBe(200);
    expect(await session(send(toolCall('session')))).toEqual({ client: null, caps: null, level: null });
    const level = { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'debug' } };
    expect((await send(level)).status).toBe(200);
    expect(await session(send(toolCall('session')))).toEqual({ client: null, caps: null, level: null });
    // The tool does see what its own request set: the level of a setLevel earlier in its batch.
    expect(await session(send([level, toolCall('session', {}, 2)]), 2)).toEqual({
      client: null,
      caps: null,
      level: 'debug',
    });
    expect(await session(send(toolCall('session')))).toEqual({ client: null, caps: null, level: null });
    // One server throughout: the state was cleared, not left behind on a server that was replaced.
    expect(stats.built).toBe(1);
  });
});

test('the SDK transport never answers a batch that cancels its own request: why the handler refuses one', async () => {
  // Protocol._onrequest drops the answer of a request aborted while it ran (`if (abortController.signal.aborted)
  // return`), and the transport ends the HTTP response only once every request of the batch has its answer.
  const hold = shutGate();
  const host = await serve(referenceApp(demoServer({ built: 0 }, hold)));
  const within = (answer: Promise<Answer>, ms: number) =>
    Promise.race([
      answer.then(() => 'answered'),
      new Promise((resolve) => setTimeout(resolve, ms, 'no answer')),
    ]);
  const cancelled = post(
    host.port,
    JSON.stringify([
      toolCall('hold', {}, 'call-1'),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'call-1' } },
    ]),
  );
  await hold.entered;
  hold.open();
  // The call has returned: its answer would take a few milliseconds, as the same call's without the cancellation.
  expect(await within(cancelled, 300)).toBe('no answer');
  expect(await within(post(host.port, JSON.stringify([toolCall('hold', {}, 'call-1')])), 300)).toBe(
    'answered',
  );
});

test('concurrent requests with the same JSON-RPC id each get their own answer, on two servers', async () => {
  const stats = { built: 0 };
  const host = await serve(handlerApp(demoServer(stats), { maxServers: 2 }));
  // Every request has id 1; each names a text of its own, and finishes after a different number of turns, so
  // that answers come back in another order than the requests went out.
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      post(host.port, JSON.stringify(toolCall('later', { text: `request ${i}`, turns: (i * 7) % 5 }))),
    ),
  );
  answers.forEach((answer, i) =>
    expect(JSON.parse(answer.text)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: `request ${i}` }] },
    }),
  );
  expect(stats.built).toBe(2);
});
