// What lib/mcp/sdk-v1.ts does inside SDK 1.x: a pooled server forgets one caller before the next, and a major it
// does not know is refused.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { checkMajor, forgetSession, installedVersion, KNOWN_MAJOR } from '../../../lib/mcp/sdk-v1';

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

describe('the major this file knows the inside of', () => {
  test('the installed @modelcontextprotocol/sdk is that major: on another, the fields above may not exist', () => {
    const version = installedVersion(
      require.resolve('@modelcontextprotocol/sdk/types.js'),
      '@modelcontextprotocol/sdk',
    );
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Number(version!.split('.')[0])).toBe(KNOWN_MAJOR);
    expect(() => checkMajor(version)).not.toThrow();
  });

  test.each([['2.0.0'], ['0.9.1'], [undefined], ['x']])(
    '%s is refused at load, saying what to install',
    (version) => {
      expect(() => checkMajor(version)).toThrow(
        /is not a version this package knows; it pools servers of @modelcontextprotocol\/sdk 1\.x and serves @modelcontextprotocol\/server 2\.x\. Install @modelcontextprotocol\/sdk@1 or move to @modelcontextprotocol\/server\.$/,
      );
    },
  );

  test('a package.json of another name on the way up is passed over; none at all gives no version', () => {
    expect(
      installedVersion(require.resolve('@modelcontextprotocol/sdk/types.js'), 'no-such-package'),
    ).toBeUndefined();
  });
});
