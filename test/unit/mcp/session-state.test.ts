// forgetSession: what one caller told a pooled server is gone before the next caller's request.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { forgetSession } from '../../../lib/mcp/session-state';

type Fields = Record<string, unknown> & { _loggingLevels: Map<unknown, unknown> };
const told = (low: Fields) => {
  low._clientVersion = { name: 'alice-client', version: '1' };
  low._clientCapabilities = { sampling: {} };
  low._loggingLevels.set(undefined, 'debug');
};

test.each([
  ['an McpServer', () => new McpServer({ name: 'n', version: '1' }), (s: McpServer) => s.server],
  ['a low-level Server', () => new Server({ name: 'n', version: '1' }), (s: Server) => s],
] as const)('%s forgets the client, its capabilities and the log level', (_name, make, lowOf) => {
  const server = make();
  const low = (lowOf as (s: unknown) => Server)(server);
  told(low as unknown as Fields);
  forgetSession(server);
  expect(low.getClientVersion()).toBeUndefined();
  expect(low.getClientCapabilities()).toBeUndefined();
  expect((low as unknown as Fields)._loggingLevels.size).toBe(0);
});

test('a server that was never told anything is left as it is (no fields added), and one without them is no error', () => {
  const low = new Server({ name: 'n', version: '1' });
  const before = Object.keys(low).sort();
  forgetSession(low);
  expect(Object.keys(low).sort()).toEqual(before);
  const bare = {};
  forgetSession(bare);
  expect(bare).toEqual({});
});
