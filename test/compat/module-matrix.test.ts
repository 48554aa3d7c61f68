// The package as users install it (the build, with its package.json exports), in host apps on Express 4 and 5,
// written as CommonJS and as ES modules: each one runs the openid-client journey against its own server and calls a
// tool of the MCP layer (express-mcp-oauth/mcp) on a server of MCP SDK 1.x or 2.x, the fast path
// (express-mcp-oauth/experimental) on or off.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { runOpenidClientJourney } from '../helpers/openid-client';

const ROOT = join(__dirname, '../..');
const USER = { email: 'matrix@example.com', password: 'matrix password 1' };

/** A host project whose node_modules has the built package and the given Express as `express`. */
function hostProject(expressDir: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-host-'));
  const modules = join(dir, 'node_modules');
  mkdirSync(modules);
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry === 'express' || entry === 'express-mcp-oauth' || entry.startsWith('.')) continue;
    symlinkSync(join(ROOT, 'node_modules', entry), join(modules, entry));
  }
  symlinkSync(join(ROOT, 'node_modules', expressDir), join(modules, 'express'));
  // A real copy, not a link: the package must resolve express from the host's node_modules, as when installed.
  const pkg = join(modules, 'express-mcp-oauth');
  for (const part of ['package.json', 'dist/lib', 'dist/esm', 'views'])
    cpSync(join(ROOT, part), join(pkg, part), { recursive: true });
  cpSync(join(__dirname, 'consumer-app.cjs'), join(dir, 'app.cjs'));
  cpSync(join(__dirname, 'consumer-app.mjs'), join(dir, 'app.mjs'));
  writeFileSync(join(dir, 'package.json'), '{"name":"host","private":true}');
  return dir;
}

async function startHost(
  dir: string,
  script: string,
  fastPath: boolean,
  sdk: '1' | '2',
): Promise<{ child: ChildProcess; url: string; express: string }> {
  const child = spawn(process.execPath, [join(dir, script)], {
    env: {
      ...process.env,
      USER_EMAIL: USER.email,
      USER_PASSWORD: USER.password,
      FAST_PATH: fastPath ? '1' : '0',
      MCP_SDK: sdk,
    },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${stderr}`)));
  });
  return { child, ...JSON.parse(firstLine) };
}

describe('Express 4 and 5, CommonJS and ES modules', () => {
  const projects: Record<string, string> = {};
  beforeAll(() => {
    projects['4'] = hostProject('express4');
    projects['5'] = hostProject('express');
  }, 120_000);
  afterAll(() => Object.values(projects).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  // Each Express and each module system once with the router alone, once with oauth.fastPath in front of the app,
  // and each with each MCP SDK major.
  test.each([
    ['4', 'app.cjs', 'the router', '1'],
    ['4', 'app.mjs', 'fastPath', '1'],
    ['5', 'app.cjs', 'fastPath', '1'],
    ['5', 'app.mjs', 'the router', '1'],
    ['4', 'app.cjs', 'fastPath', '2'],
    ['4', 'app.mjs', 'the router', '2'],
    ['5', 'app.cjs', 'the router', '2'],
    ['5', 'app.mjs', 'fastPath', '2'],
  ] as const)(
    'Express %s, %s, %s, MCP SDK %s.x: the whole journey works',
    async (major, script, served, sdk) => {
      const host = await startHost(projects[major]!, script, served === 'fastPath', sdk);
      try {
        expect(host.express.split('.')[0]).toBe(major);
        const result = await runOpenidClientJourney(host.url, USER.email, USER.password, 'call-tool');
        expect(result).toMatchObject({
          issuerInCallback: host.url,
          rotated: true,
          refreshAfterRevocation: 'invalid_grant',
          // The MCP layer (express-mcp-oauth/mcp), loaded by this module system: the tool ran for the token's user.
          toolCall: sdk === '2' ? 'user u1 (2.x)' : 'user u1',
        });
        const count = async () =>
          ((await (await fetch(`${host.url}/fast-count`)).json()) as { fast: number }).fast;
        // The token requests (code, refresh, the refresh after revocation), the tool call and the revocation went the
        // way named.
        const before = await count();
        if (served === 'fastPath') expect(before).toBeGreaterThanOrEqual(5);
        else expect(before).toBe(0);
        const refused = await fetch(`${host.url}/mcp`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${result.accessToken}` },
        });
        expect(refused.status).toBe(401);
        // And so did the tool call (POST /mcp, one of the fast path's routes): exactly one more.
        expect(await count()).toBe(served === 'fastPath' ? before + 1 : 0);
      } finally {
        host.child.kill();
      }
    },
  );
});
