// mayBeModern, the endpoint's shortcut past the SDK 2.x's own era decision: whatever it calls 2025-era traffic, the SDK
// (isLegacyRequest) calls so too, over requests written to sit on the line between the eras.
import type { IncomingMessage } from 'node:http';
import fc from 'fast-check';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { mayBeModern } from '../../../lib/mcp/negotiation';

const CLAIM = 'io.modelcontextprotocol/protocolVersion';
const nodeRequest = (headers: Record<string, string | string[]>) =>
  ({ headers }) as unknown as IncomingMessage;

test.each([
  ['no header, no claim', {}, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], false],
  [
    'a 2025 header',
    { 'mcp-protocol-version': '2025-06-18' },
    [{ jsonrpc: '2.0', id: 1, method: 'ping' }],
    false,
  ],
  [
    'the 2026 header',
    { 'mcp-protocol-version': '2026-07-28' },
    [{ jsonrpc: '2.0', id: 1, method: 'ping' }],
    true,
  ],
  ['an unknown header', { 'mcp-protocol-version': 'x' }, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], true],
  ['a repeated header', { 'mcp-protocol-version': ['2025-06-18', '2025-06-18'] }, [{}], true],
  [
    'the claim in a later message',
    {},
    [
      { jsonrpc: '2.0', method: 'n' },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { [CLAIM]: 'x' } } },
    ],
    true,
  ],
  ['a null message', {}, [null], false],
  [
    '_meta null (no claim; the gate refuses it)',
    {},
    [{ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: null } }],
    false,
  ],
  ['_meta a string', {}, [{ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: 'x' } }], false],
  ['_meta without the claim', {}, [{ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: {} } }], false],
])('%s: %s', (_name, headers, messages, expected) => {
  expect(mayBeModern(nodeRequest(headers), messages, SUPPORTED_PROTOCOL_VERSIONS)).toBe(expected);
});

const header = fc.option(
  fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS, '2026-07-28', '2099-01-01', '', 'latest', ' 2025-06-18'),
);
const meta = fc.option(
  fc.oneof(
    fc.constant({}),
    fc.constant(null),
    fc.constantFrom('2026-07-28', 0, [] as unknown[]),
    fc.record({ [CLAIM]: fc.constantFrom('2026-07-28', '2025-06-18', 7) }, { requiredKeys: [] }),
    fc.record({
      [CLAIM]: fc.constant('2026-07-28'),
      'io.modelcontextprotocol/clientInfo': fc.constant({ name: 'c', version: '1' }),
      'io.modelcontextprotocol/clientCapabilities': fc.constant({}),
    }),
  ),
  { nil: undefined },
);
const message = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('ping', 'tools/list', 'tools/call', 'initialize', 'server/discover'),
      meta,
      fc.boolean(),
    )
    .map(([method, m, request]) => ({
      jsonrpc: '2.0',
      ...(request ? { id: 1 } : {}),
      method,
      ...(m === undefined ? {} : { params: { _meta: m } }),
    })),
  fc.constant({ jsonrpc: '2.0', id: 1, result: {} }),
  fc.constantFrom(
    null,
    'x',
    { jsonrpc: '2.0', id: 1, method: 'ping', params: null },
    { jsonrpc: '2.0', id: 1, method: 'ping', params: 'x' },
  ),
);
const body = fc.oneof(message, fc.array(message, { minLength: 1, maxLength: 3 }));

// Over every body the scope gate admits: one with a message that is not JSON-RPC is refused (400) before either era.
test('what it calls 2025-era traffic, the SDK 2.x routes to its 2025-era serving too', async () => {
  let shortcuts = 0;
  await fc.assert(
    fc.asyncProperty(header, body, async (version, value) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (version !== null) headers['mcp-protocol-version'] = version;
      const messages = Array.isArray(value) ? value : [value];
      if (!messages.every((m) => JSONRPCMessageSchema.safeParse(m).success)) return;
      if (mayBeModern(nodeRequest(headers), messages, SUPPORTED_PROTOCOL_VERSIONS)) return;
      shortcuts += 1;
      const request = new Request('http://127.0.0.1/mcp', { method: 'POST', headers });
      expect(await isLegacyRequest(request, value)).toBe(true);
    }),
    { seed: 20261128, numRuns: 400 },
  );
  // The property was put to the test, not only held by requests the shortcut sent to the SDK.
  expect(shortcuts).toBeGreaterThan(50);
});
