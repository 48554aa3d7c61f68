// The package as npm would publish it: `npm pack` of dist/ (which npm test's global setup keeps up to date; a publish
// builds first, through prepack), the tarball's contents, publint and "Are the Types Wrong?" on it, then the tarball
// unpacked into fresh host projects on Express 4 and on Express 5, where examples/minimal runs as written (importing
// the package by name) and an MCP client goes through the whole OAuth journey to call its tool.
import { execFileSync, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { connect, createServer as createNetServer } from 'node:net';
import { Pool } from 'pg';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runExample } from '../helpers/example-process';
import { freePort, reservePort } from '../helpers/ports';
import { mcpJourney } from '../helpers/mcp-journey';
import { httpBrowser } from '../helpers/http-browser';
import { startOidcUpstream, UPSTREAM_ACCOUNTS } from '../helpers/upstream-oidc';
import { consentThroughUpstream } from '../helpers/upstream-world';
import { DATABASE_URL, describeWith, REDIS_URL } from '../helpers/services';

const ROOT = join(__dirname, '../..');
const BIN = join(ROOT, 'node_modules/.bin');
const USER = { email: 'pack@example.com', password: 'a packed password' };

let work: string;
let tarball: string;
let files: string[];
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'mcp-oauth-pack-'));
  const packed = JSON.parse(
    // --ignore-scripts: not prepack's build, which would rewrite dist/ under the app processes of other test files.
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(work, packed[0]!.filename);
  files = packed[0]!.files.map((file) => file.path);
}, 180_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

test('a publish builds first (prepack), so that it never ships a stale or missing dist/', () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  expect(scripts.prepack).toBe('npm run build');
});

// README links its docs/ pages, so they ship with it; the changelog says how to move between versions.
test('the tarball holds the build, the pages, the README, its docs, the changelog and the licence, and nothing else', () => {
  for (const needed of [
    'package.json',
    'README.md',
    'CHANGELOG.md',
    'docs/stores.md',
    'bin/express-mcp-oauth.cjs',
    'LICENSE',
    'dist/lib/index.js',
    'dist/lib/index.d.ts',
    'dist/esm/index.mjs',
    'dist/esm/index.d.mts',
    'dist/esm/testing.mjs',
    'dist/lib/testing/index.js',
    'views/consent.ejs',
  ])
    expect(files).toContain(needed);
  const stray = files.filter(
    (path) =>
      !['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'bin/express-mcp-oauth.cjs'].includes(path) &&
      !/^dist\/lib\/.+\.(js|d\.ts)$/.test(path) &&
      !/^dist\/esm\/[a-z]+\.(mjs|d\.mts)$/.test(path) &&
      !/^views\/.+\.(ejs|css)$/.test(path) &&
      !/^docs\/[a-z-]+\.md$/.test(path),
  );
  expect(stray).toEqual([]);
});

// Every entry point of package.json, each with its ES module face and CommonJS build (and their types) in the tarball.
const MANIFEST = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { import: Record<string, string>; require: Record<string, string> }>;
};
const ENTRY_POINTS = Object.keys(MANIFEST.exports).filter((key) => key !== './package.json');

test('every entry point of exports is in the tarball, for import and require, with its types', () => {
  expect(ENTRY_POINTS).toEqual(
    expect.arrayContaining([
      '.',
      './mcp',
      './postgres',
      './store',
      './pages',
      './check',
      './testing',
      './experimental',
    ]),
  );
  for (const entry of ENTRY_POINTS) {
    const conditions = MANIFEST.exports[entry] as {
      import: Record<string, string>;
      require: Record<string, string>;
    };
    for (const target of [...Object.values(conditions.import), ...Object.values(conditions.require)])
      expect([entry, files.includes(target.replace(/^\.\//, ''))]).toEqual([entry, true]);
  }
});

test('publint finds nothing, not even a suggestion', () => {
  const out = execFileSync(join(BIN, 'publint'), ['run', tarball, '--strict'], { encoding: 'utf8' });
  expect(out).toContain('All good!');
});

test('the types resolve for require and import, under node16 and bundler resolution (attw)', () => {
  const report = JSON.parse(
    execFileSync(join(BIN, 'attw'), [tarball, '--format', 'json', '--no-color'], { encoding: 'utf8' }),
  ) as {
    analysis: { problems: unknown[]; entrypoints: Record<string, { resolutions: Record<string, unknown> }> };
  };
  expect(report.analysis.problems).toEqual([]);
  expect(
    Object.keys(report.analysis.entrypoints)
      .filter((key) => key !== './package.json')
      .sort(),
  ).toEqual([...ENTRY_POINTS].sort());
  for (const entrypoint of ENTRY_POINTS)
    expect(Object.keys(report.analysis.entrypoints[entrypoint]!.resolutions).sort()).toEqual([
      'bundler',
      'node10',
      'node16-cjs',
      'node16-esm',
    ]);
});

/**
 * A fresh project: the tarball unpacked as npm would, and beside it only what a user's install would hold: the
 * package's declared dependencies, `express` (the given copy) and the MCP SDK of each major, the peers the examples
 * use. A module
 * the package needs but does not declare fails here.
 */
function hostProject(expressDir: string, extra: string[] = []): string {
  const dir = mkdtempSync(join(work, 'host-'));
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, 'express-mcp-oauth'), { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', join(modules, 'express-mcp-oauth'), '--strip-components=1']);
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const name of [
    ...Object.keys(manifest.dependencies),
    '@modelcontextprotocol/sdk',
    '@modelcontextprotocol/server',
    ...extra,
  ]) {
    mkdirSync(join(modules, name, '..'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
  }
  symlinkSync(join(ROOT, 'node_modules', expressDir), join(modules, 'express'));
  cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"name":"host","private":true}');
  return dir;
}

/** An example on a fresh SQLite file, on a free loopback port, with the test user. */
async function startOnSqlite(dir: string, script: string) {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const server = await runExample(dir, script, {
    PORT: String(port),
    HOST: '127.0.0.1',
    ISSUER: issuer,
    DATABASE_PATH: join(dir, 'oauth.db'),
    DEMO_EMAIL: USER.email,
    DEMO_PASSWORD: USER.password,
  });
  return { server, issuer };
}

test.each([
  ['4', 'express4', 'examples/minimal/server.mjs'],
  ['5', 'express', 'examples/minimal/server.mjs'],
  // The same server on the MCP SDK 1.x.
  ['5', 'express', 'examples/sdk-v1/server.mjs'],
])(
  'Express %s: %s runs from the tarball, and an MCP client calls its tool',
  async (major, copy, script) => {
    const dir = hostProject(copy);
    const version = execFileSync(process.execPath, ['-p', "require('express/package.json').version"], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(version.split('.')[0]).toBe(major);
    const { server, issuer } = await startOnSqlite(dir, script);
    try {
      const { accessToken: _token, ...journey } = await mcpJourney(new URL(`${issuer}/mcp`), USER, {
        name: 'list_notes',
      });
      expect(journey).toEqual({
        tools: ['list_notes'],
        text: 'Notes of user 1: none yet.',
        scope: 'notes:read',
      });
    } finally {
      server.kill();
    }
  },
  60_000,
);

test('examples/upstream-oidc runs from the tarball: a person of the OpenID provider only calls its tool', async () => {
  const dir = hostProject('express');
  const { port, release } = await reservePort();
  const issuer = `http://127.0.0.1:${port}`;
  const upstream = await startOidcUpstream({ redirectUris: [`${issuer}/v1/oauth/upstream/callback`] });
  try {
    await release();
    const server = await runExample(dir, 'examples/upstream-oidc/server.mjs', {
      PORT: String(port),
      HOST: '127.0.0.1',
      ISSUER: issuer,
      DATABASE_PATH: join(dir, 'oauth.db'),
      // SQLite here, whatever the test run's environment says (the host project has no pg).
      DATABASE_URL: '',
      UPSTREAM_OIDC_ISSUER: upstream.issuer,
      UPSTREAM_CLIENT_ID: upstream.clientId,
      UPSTREAM_CLIENT_SECRET: upstream.clientSecret,
      UPSTREAM_NAME: 'Upstream ID',
    });
    try {
      const ana = UPSTREAM_ACCOUNTS[0]!;
      // openid-client, an ES module the package loads on first use, is found among its declared dependencies.
      const { text, tools } = await mcpJourney(
        new URL(`${issuer}/mcp`),
        USER,
        { name: 'upstream_profile' },
        (url) => consentThroughUpstream(url, ana),
      );
      expect(tools).toEqual(['upstream_profile']);
      expect(JSON.parse(text)).toMatchObject({ sub: 'ana', email: ana.email });
    } finally {
      server.kill();
    }
  } finally {
    await upstream.close();
  }
}, 60_000);

test('the shipped store contract suite runs under node:test from the tarball, on the packaged SQLite store', () => {
  const dir = hostProject('express');
  const out = execFileSync(process.execPath, ['--test', 'examples/store-contract/sqlite.test.mjs'], {
    cwd: dir,
    encoding: 'utf8',
  });
  expect(out).toMatch(/# fail 0/);
  const passed = Number(/# pass (\d+)/.exec(out)?.[1]);
  // Every case of the suite ran (the jest run of the same suite counts the same).
  expect(passed).toBeGreaterThanOrEqual(35);
}, 120_000);

test('the bin runs from the tarball: the check answers with its finding and exit code', () => {
  const dir = hostProject('express');
  const installed = join(dir, 'node_modules', 'express-mcp-oauth');
  const { bin } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [join(installed, bin['express-mcp-oauth']!), ...args], {
      cwd: dir,
      encoding: 'utf8',
    });
  // Port 1 of loopback: nobody listens, so the check says so (and never leaves the machine).
  const down = run('check', 'http://127.0.0.1:1/mcp');
  expect([down.status, down.stdout]).toEqual([
    1,
    expect.stringMatching(/^FAIL http:\/\/127\.0\.0\.1:1\/mcp could not be reached/m),
  ]);
  expect(run('help').status).toBe(2);
});

test('examples/existing-session: the consent page uses the app’s own login, and an MCP client calls the tool', async () => {
  const dir = hostProject('express');
  const { server, issuer } = await startOnSqlite(dir, 'examples/existing-session/server.mjs');
  try {
    const signIn = async (authorizationUrl: URL) => {
      const browser = httpBrowser();
      const away = await browser.visit(authorizationUrl);
      // Signed out: sent to the app's own login page, which is not an open redirect.
      expect(away.status).toBe(302);
      const login = new URL(away.headers.get('location')!, issuer);
      expect(login.pathname).toBe('/login');
      const evil = await browser.visit(
        `${issuer}/login?return_to=${encodeURIComponent('https://evil.example/')}`,
      );
      expect(await evil.text()).toContain('return_to=%2F"');
      const back = await browser.visit(new URL(`/login${login.search}`, issuer), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: USER.email, password: USER.password }),
      });
      // Back to the same authorization request (its parameters, in the library's order).
      const returned = new URL(back.headers.get('location')!);
      returned.searchParams.sort();
      const asked = new URL(authorizationUrl);
      asked.searchParams.sort();
      expect(returned.href).toBe(asked.href);
      const consent = await (await browser.visit(authorizationUrl)).text();
      expect(consent).toContain('Read your notes');
      const decided = await browser.submit(issuer, consent, [['decision', 'allow']]);
      return new URL(decided.headers.get('location')!).searchParams.get('code')!;
    };
    const { accessToken: _token, ...journey } = await mcpJourney(
      new URL(`${issuer}/mcp`),
      USER,
      { name: 'list_notes' },
      signIn,
    );
    expect(journey).toEqual({ tools: ['list_notes'], text: 'Notes of 1: none yet.', scope: 'notes:read' });
  } finally {
    server.kill();
  }
}, 60_000);

describeWith('examples/postgres-redis', { postgres: true, redis: true }, () => {
  test('examples/postgres-redis: two instances behind one address share grants and rate limits', async () => {
    const dir = hostProject('express', ['pg', 'redis', 'rate-limit-redis']);
    const [a, b, lb] = [await freePort(), await freePort(), await freePort()];
    // A load balancer on loopback: each new connection to the next instance.
    let turn = 0;
    const balancer = createNetServer((client) => {
      const upstream = connect([a, b][turn++ % 2]!, '127.0.0.1');
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    }).listen(lb, '127.0.0.1');
    const issuer = `http://127.0.0.1:${lb}`;
    const run = randomBytes(6).toString('hex');
    const env = {
      HOST: '127.0.0.1',
      ISSUER: issuer,
      DATABASE_URL: DATABASE_URL!,
      DATABASE_SCHEMA: `example_${run}`,
      REDIS_URL: REDIS_URL!,
      RATE_LIMIT_PREFIX: `example-${run}:`,
      SIGNING_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
        type: 'pkcs8',
        format: 'pem',
      }) as string,
      COOKIE_SECRET: randomBytes(32).toString('base64'),
      DEMO_EMAIL: USER.email,
      DEMO_PASSWORD: USER.password,
    };
    const instances = [
      await runExample(dir, 'examples/postgres-redis/server.mjs', { ...env, PORT: String(a) }),
      await runExample(dir, 'examples/postgres-redis/server.mjs', { ...env, PORT: String(b) }),
    ];
    const pool = new Pool({ connectionString: DATABASE_URL });
    try {
      const journey = await mcpJourney(new URL(`${issuer}/mcp`), USER, { name: 'list_notes' });
      expect(journey.scope).toBe('notes:read');
      // The token works on each instance, each answering for itself.
      for (const port of [a, b]) {
        const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${journey.accessToken}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'list_notes' },
          }),
        });
        expect(
          ((await res.json()) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text,
        ).toBe(`Notes of 1 from instance ${port}.`);
      }
      // One registration limit (20 per address) counted across both: alone, each would take 12 of these 24.
      const statuses: number[] = [];
      for (let i = 0; i < 24; i += 1) {
        const res = await fetch(`http://127.0.0.1:${[a, b][i % 2]}/v1/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            redirect_uris: ['https://client.example/cb'],
            token_endpoint_auth_method: 'none',
          }),
        });
        statuses.push(res.status);
      }
      expect(statuses.filter((status) => status === 201)).toHaveLength(19); // the journey registered once
      expect(statuses.slice(19)).toEqual([429, 429, 429, 429, 429]);
    } finally {
      for (const instance of instances) instance.kill();
      balancer.close();
      await pool.query(`DROP SCHEMA IF EXISTS example_${run} CASCADE`).catch(() => undefined);
      await pool.end();
    }
  }, 90_000);
});
