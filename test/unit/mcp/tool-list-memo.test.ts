// The remembered tools/list answers of pooled servers (lib/mcp/sdk-v1.ts), below the HTTP handler.
import { createToolListMemo } from '../../../lib/mcp/sdk-v1';

const SCHEMA = { method: 'tools/list' };
function fakeServer() {
  const handlers: Array<() => unknown> = [];
  const announced: string[] = [];
  return {
    handlers,
    announced,
    server: { setRequestHandler: (_schema: unknown, handler: () => unknown) => handlers.push(handler) },
    sendToolListChanged() {
      announced.push('changed');
    },
  };
}
const list = (name: string) => ({ tools: [{ name, inputSchema: { type: 'object' } }] });

test('servers with the same list share one copy of it; a different list gets its own', () => {
  const memo = createToolListMemo(SCHEMA);
  const [a, b, c] = [fakeServer(), fakeServer(), fakeServer()];
  memo.remember(a, list('notes'));
  memo.remember(b, list('notes'));
  memo.remember(c, list('other'));
  expect(a.handlers[0]!()).toBe(b.handlers[0]!());
  expect(c.handlers[0]!()).toEqual(list('other'));
});

test('a server is remembered once; its later announcements mark it changed and still reach the SDK', () => {
  const memo = createToolListMemo(SCHEMA);
  const server = fakeServer();
  memo.remember(server, list('notes'));
  memo.remember(server, list('again'));
  expect(server.handlers).toHaveLength(1);
  expect(memo.changed(server)).toBe(false);
  server.sendToolListChanged();
  expect(memo.changed(server)).toBe(true);
  expect(server.announced).toEqual(['changed']);
});

test('a low-level Server (no .server to set a handler on) is left alone', () => {
  const memo = createToolListMemo(SCHEMA);
  const lowLevel = { connect: async () => undefined, close: async () => undefined };
  expect(() => memo.remember(lowLevel, list('notes'))).not.toThrow();
  expect(memo.changed(lowLevel)).toBe(false);
});
