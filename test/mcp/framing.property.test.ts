// The scope gate against every framing an attacker can send: fast-check writes raw HTTP requests (Content-Type
// variants with case, parameters, charsets, white space and non-ASCII bytes; bodies with a BOM, leading white space,
// duplicate members, escaped method names, batches, odd ids, tool names that are not strings, other encodings)
// and one invariant is held against the real MCP SDK: a tool outside the token's scopes never runs and never
// appears in a tools/list answer, and no request gets a 5xx. On Express 4 and 5, with no parser in front of the
// handler and with each kind of parser a host app may have mounted there, and on both of the handler's paths: the
// lean transport's JSON answers (`streaming: false`) and the SDK's transport for a request that may stream
// (`streaming: true`, a tool call answered as an event stream). And served ahead of Express by oauth.fastPath (its
// `routes`), where no host parser runs. And the same again for a server of MCP SDK 2.x, behind its own
// createMcpHandler (whose stateless 2025 leg answers with an event stream).
import fc from 'fast-check';
import express5 from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpServer as McpServerV2, createMcpHandler } from '@modelcontextprotocol/server';
import { createMcpEndpoint } from '../../lib/mcp';
import { fastPath } from '../../lib/experimental';
import { createTestServer, obtainTokens, type TestServer } from '../helpers/oauth-app';
import { exchange, listenOnLoopback } from '../helpers/raw-http';

const SEED = Number(process.env.FRAMING_SEED ?? 20261125);
const RUNS = Number(process.env.FRAMING_RUNS ?? 120);

type HostParser = 'none' | 'json' | 'json-any-type' | 'raw' | 'text';
// Express 4 is installed beside 5 under the name express4 (it has no types of its own there).
const express4 = require('express4') as typeof express5;
const EXPRESSES: Record<string, typeof express5> = {
  'Express 5': express5,
  'Express 4': express4,
  'fast path': express5,
};
/** How the endpoint serves: SDK 1.x's pool with JSON answers or streaming, or SDK 2.x's createMcpHandler. */
type Mode = '1.x JSON' | '1.x streaming' | '2.x handler';
const MODES: Mode[] = ['1.x JSON', '1.x streaming', '2.x handler'];
/**
 * Per mode, the fast path's cases: requests its route served (the route's first step counts them), and requests
 * Node delivered to a listener (answered with a Date header; Node refuses some framings itself, with a bare 400,
 * before any listener).
 */
const servedFast = new Map<Mode, number>(MODES.map((mode) => [mode, 0]));
const deliveredFast = new Map<Mode, number>(MODES.map((mode) => [mode, 2]));

// --- What a request is made of -------------------------------------------------------------------------------------

const mediaType = fc.constantFrom(
  'application/json',
  'APPLICATION/JSON',
  'Application/Json',
  'application/jsonx',
  'application/json-rpc',
  'application/vnd.api+json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'text/json',
  '*/*',
  '',
);
/** Bytes around the media type and its parameters: what one parser skips and another trims. */
const noise = fc.constantFrom(
  '',
  ' ',
  '\t',
  '\xa0',
  '\x85',
  '\xff',
  '\x0b',
  ';',
  ',',
  ' ,application/json',
  '\x00',
);
const parameter = fc.constantFrom(
  '',
  '; charset=utf-8',
  ';charset=UTF-8',
  '; charset="utf-8"',
  '; charset=latin1',
  '; charset=utf-16',
  '; charset=',
  '; a=b',
  '; a="x;y"',
  ';;',
  '; text/plain',
);
/** One Content-Type header line's value, as latin1 bytes; null sends no Content-Type at all. */
const contentType = fc.oneof(
  { weight: 3, arbitrary: fc.constant('application/json') },
  {
    weight: 10,
    arbitrary: fc.tuple(noise, mediaType, noise, parameter, noise).map((parts) => parts.join('')),
  },
  { weight: 1, arbitrary: fc.constant(null) },
);
/**
 * Sometimes (one request in six) a second Content-Type line: Node keeps the first, a Headers object joins both. Not
 * fc.option: its `freq` is the chance of null (one in freq), which sent a second line five times in six, and then
 * no request of a run reached the scope gate.
 */
const secondContentType = fc.oneof(
  { weight: 5, arbitrary: fc.constant(null) },
  fc.constantFrom('application/json', 'text/plain', 'application/json\xa0'),
);

const id = fc.constantFrom(
  '1',
  '"x"',
  '1e400',
  '123456789012345678901234567890',
  '{"a":1}',
  '[1]',
  'null',
  '-0',
  '1.5',
);
const toolName = fc.constantFrom(
  '"spy"',
  '"\\u0073py"',
  '"sp\\u0079"',
  '123',
  '["spy"]',
  '{"toString":"spy"}',
  'null',
  '"Spy"',
  '" spy"',
  '"spy\\u0000"',
);
const method = fc.constantFrom('"tools/call"', '"tools\\/call"', '"\\u0074ools/call"', '"Tools/Call"');

/** JSON-RPC messages as text, written by hand so that duplicate members and escapes survive. */
const message = fc.oneof(
  fc
    .tuple(id, method, toolName, fc.boolean())
    .map(
      ([i, m, n, args]) =>
        `{"jsonrpc":"2.0","id":${i},"method":${m},"params":{"name":${n}${args ? ',"arguments":{}' : ''}}}`,
    ),
  // Duplicate members: JSON.parse keeps the last one; a reader that kept the first would see a harmless method.
  fc
    .tuple(id, toolName)
    .map(
      ([i, n]) =>
        `{"jsonrpc":"2.0","id":${i},"method":"tools/list","params":{"name":${n}},"method":"tools/call"}`,
    ),
  fc
    .tuple(id, toolName)
    .map(
      ([i, n]) =>
        `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo"},"params":{"name":${n}}}`,
    ),
  id.map((i) => `{"jsonrpc":"2.0","id":${i},"method":"tools/list"}`),
  // A notification (no id) that names tools/call.
  toolName.map((n) => `{"jsonrpc":"2.0","method":"tools/call","params":{"name":${n}}}`),
  fc.constant('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{}}}'),
);
const body = fc
  .tuple(
    fc.array(message, { minLength: 1, maxLength: 3 }),
    fc.constantFrom('single', 'batch', 'nested batch'),
    fc.constantFrom('', '\ufeff', ' \t\r\n'),
    fc.constantFrom('', ' ', 'x', '}'),
    fc.constantFrom<BufferEncoding>('utf8', 'utf8', 'utf8', 'utf16le', 'latin1'),
  )
  .map(([messages, shape, prefix, suffix, encoding]) => {
    const text = shape === 'single' ? messages[0]! : shape === 'batch' ? `[${messages}]` : `[[${messages}]]`;
    return Buffer.from(prefix + text + suffix, encoding);
  });
const framing = fc.record({
  contentType,
  secondContentType,
  body,
  chunked: fc.boolean(),
  // One request in five, as secondContentType.
  contentEncoding: fc.oneof(
    { weight: 4, arbitrary: fc.constant(null) },
    fc.constantFrom('gzip', 'identity', 'br'),
  ),
});
type Framing = typeof framing extends fc.Arbitrary<infer T> ? T : never;

function rawRequest(token: string, f: Framing): { head: Buffer; body: Buffer } {
  const lines = [
    'POST /mcp HTTP/1.1',
    'Host: 127.0.0.1',
    `Authorization: Bearer ${token}`,
    'Accept: application/json, text/event-stream',
    'MCP-Protocol-Version: 2025-06-18',
    'Connection: close',
  ];
  if (f.contentType !== null) lines.push(`Content-Type: ${f.contentType}`);
  if (f.secondContentType !== null) lines.push(`Content-Type: ${f.secondContentType}`);
  if (f.contentEncoding !== null) lines.push(`Content-Encoding: ${f.contentEncoding}`);
  let payload = f.body;
  if (f.chunked) {
    lines.push('Transfer-Encoding: chunked');
    payload = Buffer.concat([
      Buffer.from(`${f.body.length.toString(16)}\r\n`),
      f.body,
      Buffer.from('\r\n0\r\n\r\n'),
    ]);
  } else lines.push(`Content-Length: ${f.body.length}`);
  return { head: Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body: payload };
}

// --- The host app ----------------------------------------------------------------------------------------------------

let oauth: TestServer;
let narrowToken: string;
let wideToken: string;
const spyCalls: string[] = [];

beforeAll(async () => {
  oauth = createTestServer();
  narrowToken = (await obtainTokens(oauth, {}, { scope: 'fakture:read' })).tokens.access_token;
  wideToken = (await obtainTokens(oauth, {}, { scope: 'fakture:read fakture:write' })).tokens.access_token;
});
afterAll(() => oauth.close());

function createServer() {
  const server = new McpServer({ name: 'framing', version: '1.0.0' });
  server.registerTool('spy', { description: 'Needs fakture:write.' }, async (extra) => {
    spyCalls.push((extra.authInfo as { scopes: string[] }).scopes.join(' '));
    return { content: [{ type: 'text', text: 'spied' }] };
  });
  server.registerTool('echo', { description: 'Needs fakture:read.' }, async () => ({
    content: [{ type: 'text', text: 'echo' }],
  }));
  return server;
}

/** The same two tools on an SDK 2.x server, built per request by its createMcpHandler. */
function createServerV2() {
  const server = new McpServerV2({ name: 'framing', version: '1.0.0' });
  server.registerTool('spy', { description: 'Needs fakture:write.' }, async (ctx) => {
    spyCalls.push((ctx.http?.authInfo as { scopes: string[] } | undefined)?.scopes.join(' ') ?? '?');
    return { content: [{ type: 'text', text: 'spied' }] };
  });
  server.registerTool('echo', { description: 'Needs fakture:read.' }, async () => ({
    content: [{ type: 'text', text: 'echo' }],
  }));
  return server;
}

const TOOL_SCOPES = { spy: ['fakture:write'], echo: ['fakture:read'] };

async function listen(
  expressName: string,
  parser: HostParser,
  mode: Mode,
): Promise<{ port: number; close(): void }> {
  const express = EXPRESSES[expressName]!;
  const app = express();
  const parsers = {
    none: [],
    json: [express.json()],
    'json-any-type': [express.json({ type: () => true })],
    raw: [express.raw({ type: () => true })],
    text: [express.text({ type: () => true })],
  }[parser];
  const handler =
    mode === '2.x handler'
      ? createMcpEndpoint({
          handler: createMcpHandler(createServerV2),
          toolScopes: TOOL_SCOPES,
          hideToolsOutsideScope: true,
        })
      : createMcpEndpoint({
          createServer,
          toolScopes: TOOL_SCOPES,
          hideToolsOutsideScope: true,
          maxServers: 2,
          streaming: mode === '1.x streaming',
        });
  // The SDK's transport answers with an event stream under `Connection: keep-alive` whatever the request asked, so
  // Node keeps the socket open (for its 5 s keep-alive timeout) where RFC 9112 §9.6 has the server close after
  // answering `Connection: close`. The raw client here reads until the server closes: the host closes it at once.
  const closeWhenAsked: express5.RequestHandler = (req, res, next) => {
    if (req.headers.connection === 'close') res.once('finish', () => req.socket.end());
    next();
  };
  app.post('/mcp', closeWhenAsked, oauth.oauth.requireBearer(), ...parsers, handler);
  if (expressName !== 'fast path') return listenOnLoopback(app);
  const count: express5.RequestHandler = (_req, _res, next) => {
    servedFast.set(mode, servedFast.get(mode)! + 1);
    next();
  };
  const chain = [count, closeWhenAsked, oauth.oauth.requireBearer(), handler];
  return listenOnLoopback(fastPath(oauth.oauth, app, { routes: { '/mcp': chain } }));
}

/** What the property's requests were answered, per mode: a status, and whether the answer was an event stream. */
const answered = new Map<Mode, Set<string>>(MODES.map((mode) => [mode, new Set()]));

const CASES: Array<[string, HostParser, Mode]> = [
  ...['Express 5', 'Express 4'].flatMap((name) =>
    (['none', 'json', 'json-any-type', 'raw', 'text'] as const).flatMap((parser) =>
      MODES.map((mode): [string, HostParser, Mode] => [name, parser, mode]),
    ),
  ),
  ...MODES.map((mode): [string, HostParser, Mode] => ['fast path', 'none', mode]),
];

// Each case its own seed (SEED plus its place in CASES): a mode's eleven cases try eleven different sets of framings
// rather than the same set eleven times, so a smaller run count (test:fast's) still reaches the served framings. A
// failing case names its base seed and its place: FRAMING_SEED=<base> replays it.
const SEEDED = CASES.map(([name, parser, mode], index): [string, HostParser, Mode, number] => [
  name,
  parser,
  mode,
  SEED + index,
]);

describe.each(SEEDED)(`%s, host parser %s, %s (seed ${SEED} + %#)`, (expressName, parser, mode, seed) => {
  let host: { port: number; close(): void };
  beforeAll(async () => {
    host = await listen(expressName, parser, mode);
  });
  afterAll(() => host.close());
  beforeEach(() => {
    spyCalls.length = 0;
  });

  test('the spy tool is wired: with its scope, the plain framing runs it (so the invariant below can fail)', async () => {
    const plain: Framing = {
      contentType: 'application/json',
      secondContentType: null,
      body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spy"}}'),
      chunked: false,
      contentEncoding: null,
    };
    const wide = rawRequest(wideToken, plain);
    expect((await exchange(host.port, wide.head, wide.body)).status).toBe(200);
    expect(spyCalls).toEqual(['fakture:read fakture:write']);
    const narrow = rawRequest(narrowToken, plain);
    expect((await exchange(host.port, narrow.head, narrow.body)).status).toBe(403);
    expect(spyCalls).toHaveLength(1);
  });

  test("a tool outside the token's scopes never runs and is never listed, whatever the framing", async () => {
    await fc.assert(
      fc.asyncProperty(framing, async (f) => {
        const { head, body: payload } = rawRequest(narrowToken, f);
        const res = await exchange(host.port, head, payload);
        const stream = /^content-type: text\/event-stream/im.test(res.headers);
        answered.get(mode)!.add(`${res.status}${stream ? ' event stream' : ''}`);
        if (expressName === 'fast path' && /^date:/im.test(res.headers))
          deliveredFast.set(mode, deliveredFast.get(mode)! + 1);
        expect(spyCalls).toEqual([]);
        // A host's own parser may leave a request it failed to inflate unanswered (body-parser on a Content-Encoding
        // that is not what it says): that is the host's answer, not this handler's. Ours always answers, below 500.
        if (parser === 'none' || res.status !== 0) expect(res.status).toBeGreaterThanOrEqual(200);
        expect(res.status).toBeLessThan(500);
        // The answer names spy only when it refuses it (403) or quotes the request back in an error.
        if (res.status === 200) expect(res.body).not.toMatch(/"name":"spy"/);
      }),
      { seed, numRuns: RUNS },
    );
  });
});

// Last (a file's tests run in order): on each path some framings got past the gate to a server, so the invariant was
// put to the test there, and not only held by the refusals in front of it.
test.each([
  ['1.x JSON', '200'],
  ['1.x streaming', '200 event stream'],
  ['2.x handler', '200 event stream'],
] as const)('with %s, some framings were served (%s)', (mode, status) => {
  expect([...answered.get(mode)!]).toContain(status);
  // And every request of the fast path's cases that Node delivered went through the fast path (the wiring test's two
  // among them).
  expect(deliveredFast.get(mode)).toBeGreaterThan(RUNS / 2);
  expect(servedFast.get(mode)).toBe(deliveredFast.get(mode));
});
