// `npx express-mcp-oauth check <mcp url>` as a user runs it: the package's bin, in its own process, against the
// reference app (an MCP client can connect: exit 0) and against a URL no client could use (exit 1, each problem named).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app';

const BIN = join(__dirname, '../../bin/express-mcp-oauth.cjs');

function runBin(...args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 20_000 }, (error, stdout) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout }),
    );
  });
}

let app: RunningExampleApp;
beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(() => app?.stop());

test('the reference app passes: exit 0', async () => {
  const { code, stdout } = await runBin('check', `${app.baseUrl}/mcp`);
  expect({ code, last: stdout.trim().split('\n').at(-1) }).toEqual({
    code: 0,
    last: 'An MCP client can connect.',
  });
  expect(stdout).not.toContain('FAIL');
});

test('a URL that is not the MCP endpoint: exit 1, with the problem and its fix', async () => {
  const { code, stdout } = await runBin('check', `${app.baseUrl}/account/mcp`);
  expect(code).toBe(1);
  expect(stdout).toMatch(/^FAIL POST .*\/account\/mcp without a token answered \d+, not 401\.$/m);
  expect(stdout).toMatch(/^ {5}fix: /m);
});

test('a wrong command line: exit 2 and the usage', async () => {
  const { code, stdout } = await runBin('chek');
  expect(code).toBe(2);
  expect(stdout).toMatch(/^Usage: express-mcp-oauth check <mcp url>/);
});
