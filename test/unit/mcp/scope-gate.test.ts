// The scope gate alone, on the SDK's own JSON-RPC schema: what it admits, what it refuses and why, table by table.
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { createScopeGate } from '../../../lib/mcp/scope-gate';
import { McpRequestError } from '../../../lib/mcp/read-body';

const gate = createScopeGate(
  new Map([
    ['update_company', ['company:write', 'company:read']],
    ['get_company', ['company:read']],
  ]),
  JSONRPCMessageSchema,
);
const call = (name: unknown, id: unknown = 1, extra: object = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, ...extra },
});
const list = (id: unknown = 1, params?: object) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/list',
  ...(params ? { params } : {}),
});
const ping = (id: unknown = 2) => ({ jsonrpc: '2.0', id, method: 'ping' });

const refusal = (body: unknown, granted: string[] = ['company:read']) => {
  try {
    gate.check(body, granted);
  } catch (error) {
    expect(error).toBeInstanceOf(McpRequestError);
    const { status, code, message } = error as McpRequestError;
    return { status, code, message };
  }
  throw new Error('admitted');
};

describe('allowed: every scope a tool names, and any token for a tool not named', () => {
  test.each([
    ['update_company', ['company:write', 'company:read'], true],
    ['update_company', ['company:read', 'company:write', 'user:read'], true],
    ['update_company', ['company:write'], false],
    ['update_company', ['company:read'], false],
    ['update_company', [], false],
    ['get_company', ['company:read'], true],
    ['get_company', ['company:write'], false],
    ['not_named', [], true],
  ])('%s with %j: %s', (name, granted, expected) => {
    expect(gate.allowed(name, granted)).toBe(expected);
  });
});

describe('check: a call outside the scopes is refused, naming what it needs', () => {
  test.each([
    ['alone', call('update_company')],
    ['in a batch behind allowed messages', [ping(5), call('get_company', 6), call('update_company', 7)]],
  ])('%s', (_name, body) => {
    expect(gate.check(body, ['company:read'])).toEqual({
      refused: { tool: 'update_company', needed: ['company:write', 'company:read'] },
    });
  });

  test('calls within the scopes are admitted, with no list ids', () => {
    const admitted = gate.check([call('get_company', 1), call('not_named', 2)], ['company:read']);
    expect(admitted).toEqual({ listIds: new Set(), firstPageIds: new Set() });
    expect(admitted.refused).toBeUndefined();
  });
});

describe('check: tools/list ids, and which may be remembered as the whole list', () => {
  test('a first-page request is both; a request with a cursor is only a list', () => {
    const admitted = gate.check([list(1), list('b', { cursor: 'next' }), ping(3)], []);
    expect(admitted).toEqual({ listIds: new Set([1, 'b']), firstPageIds: new Set([1]) });
  });
  test('a tools/list with params but no cursor is a first page', () => {
    expect(gate.check(list(4, { _meta: {} }), [])).toEqual({
      listIds: new Set([4]),
      firstPageIds: new Set([4]),
    });
  });
});

describe('check: what cannot be classified is refused (fail closed)', () => {
  test.each([
    ['an empty batch', [], 'Invalid Request: an empty batch.'],
    [
      'a batch of 101',
      Array.from({ length: 101 }, (_, i) => ping(i)),
      'Invalid Request: a batch may hold at most 100 messages.',
    ],
    ['a number', 5, 'Invalid Request: not a JSON-RPC 2.0 message.'],
    ['null', null, 'Invalid Request: not a JSON-RPC 2.0 message.'],
    ['a batch holding a string', [ping(1), 'x'], 'Invalid Request: not a JSON-RPC 2.0 message.'],
    ['jsonrpc 1.0', { ...ping(), jsonrpc: '1.0' }, 'Invalid Request: not a JSON-RPC 2.0 message.'],
    ['an unknown member', { ...ping(), extra: 1 }, 'Invalid Request: not a JSON-RPC 2.0 message.'],
    [
      'tools/call without an id',
      { jsonrpc: '2.0', method: 'tools/call', params: { name: 'get_company' } },
      'Invalid Request: tools/call must be a request, with an id.',
    ],
    ['a tool name that is a number', call(5), 'Invalid Request: tools/call needs params.name, a string.'],
    [
      'a tool name in an array',
      call(['update_company']),
      'Invalid Request: tools/call needs params.name, a string.',
    ],
    [
      'no params',
      { jsonrpc: '2.0', id: 1, method: 'tools/call' },
      'Invalid Request: tools/call needs params.name, a string.',
    ],
    [
      'two requests with one id',
      [call('get_company', 1), ping(1)],
      'Invalid Request: two requests of a batch share an id.',
    ],
    [
      'tasks/list',
      { jsonrpc: '2.0', id: 1, method: 'tasks/list' },
      'Invalid Request: tasks are not supported by this stateless server.',
    ],
    [
      'a notification of tasks/',
      { jsonrpc: '2.0', method: 'tasks/status' },
      'Invalid Request: tasks are not supported by this stateless server.',
    ],
    [
      'a call as a task',
      call('get_company', 1, { task: {} }),
      'Invalid Request: tasks are not supported by this stateless server.',
    ],
    [
      'a message tied to a task',
      call('get_company', 1, { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } }),
      'Invalid Request: tasks are not supported by this stateless server.',
    ],
  ])('%s', (_name, body, message) => {
    expect(refusal(body)).toEqual({ status: 400, code: -32600, message });
  });

  test.each([
    ['a batch of 100', Array.from({ length: 100 }, (_, i) => ping(i))],
    [
      'a notification and a request with no id clash',
      [{ jsonrpc: '2.0', method: 'notifications/initialized' }, ping(1)],
    ],
    ["a response from the client with a request's id", [{ jsonrpc: '2.0', id: 1, result: {} }, ping(1)]],
    ['ids 1 and "1" are two ids', [ping(1), ping('1')]],
    [
      'two notifications (no id to share)',
      [
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      ],
    ],
    ['_meta without a task', call('get_company', 1, { _meta: { progressToken: 1 } })],
    ['a method merely containing tasks', { jsonrpc: '2.0', id: 1, method: 'x/tasks/list' }],
  ])('admitted: %s', (_name, body) => {
    expect(gate.check(body, ['company:read']).refused).toBeUndefined();
  });
});

describe('a batch that cancels a request of its own is refused: that request would never be answered', () => {
  const cancel = (requestId: unknown, id?: unknown) => ({
    jsonrpc: '2.0',
    ...(id === undefined ? {} : { id }),
    method: 'notifications/cancelled',
    params: { requestId },
  });
  test.each([
    ['the cancellation after the request', [ping(1), cancel(1)]],
    ['the cancellation first', [cancel(7), call('get_company', 7)]],
    ['a string id', [ping('a'), cancel('a')]],
  ])('refused: %s', (_name, body) => {
    expect(refusal(body)).toEqual({
      status: 400,
      code: -32600,
      message: 'Invalid Request: a batch may not cancel a request of its own.',
    });
  });

  test.each([
    ['a request that is not in the batch', [ping(1), cancel(2)]],
    ['an id of another type', [ping(1), cancel('1')]],
    // A request (with an id) named notifications/cancelled cancels nothing: only the notification does.
    ['a request, not a notification, naming the id', [ping(1), cancel(1, 9)]],
    [
      'another notification naming the id',
      [ping(1), { jsonrpc: '2.0', method: 'notifications/progress', params: { requestId: 1 } }],
    ],
    ['a cancellation alone', cancel(1)],
  ])('admitted: %s', (_name, body) => {
    expect(gate.check(body, ['company:read']).refused).toBeUndefined();
  });
});
