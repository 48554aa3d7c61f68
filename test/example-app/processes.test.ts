// The contract's commands as a user runs them: `npm run user:create` and `npm start` (the built app, from
// Jest's global setup), with the environment variables the contract names.
import { spawn, type ChildProcess } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeCodeDocument } from '../helpers/client-documents';
import { startDocumentServer } from '../helpers/document-server';
import { testCa } from '../helpers/test-ca';
import { freePort } from '../helpers/ports';
import { runCommand } from '../helpers/app-process';

const ROOT = join(__dirname, '../..');
const CLI = join(ROOT, 'dist/example-app/cli/user-create.js');
const SERVER = join(ROOT, 'dist/example-app/server.js');

// These runs are of the default, SQLite app: the PostgreSQL and Redis that CI exports are not theirs.
const { DATABASE_URL: _postgres, REDIS_URL: _redis, ...baseEnv } = process.env;

let dir: string;
let databasePath: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'example-processes-'));
  databasePath = join(dir, 'nested', 'app.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const userCreate = (...args: string[]) => runCommand(CLI, args, { ...baseEnv, DATABASE_PATH: databasePath });

describe('npm run user:create', () => {
  test('creates the database with its schema and a user with a demo company', async () => {
    const created = await userCreate(
      '--email',
      'ana@example.com',
      '--password',
      'a long password',
      '--name',
      'Ana',
    );
    expect(created).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('Created user ana@example.com'),
    });
    expect(statSync(databasePath).size).toBeGreaterThan(0);
    // It holds the signing key and password hashes: this user only.
    expect(statSync(databasePath).mode & 0o777).toBe(0o600);
  });

  test('--admin makes the user an administrator, and only that user', async () => {
    const made = await userCreate('--email', 'root@example.com', '--password', 'a long password', '--admin');
    expect(made).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('Created administrator root@example.com'),
    });
    await userCreate('--email', 'ana@example.com', '--password', 'a long password');
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const db = new Database(databasePath, { readonly: true });
    try {
      expect(db.prepare('SELECT email, is_admin FROM users ORDER BY id').all()).toEqual([
        { email: 'root@example.com', is_admin: 1 },
        { email: 'ana@example.com', is_admin: 0 },
      ]);
    } finally {
      db.close();
    }
  });

  test.each([
    [
      'a taken email (any case)',
      ['--email', 'ANA@example.com', '--password', 'a long password'],
      1,
      /already exists/,
    ],
    [
      'a malformed email',
      ['--email', 'ana-at-example', '--password', 'a long password'],
      1,
      /not a valid email address/,
    ],
    ['no password', ['--email', 'bob@example.com'], 1, /password is required/],
    [
      'a short password',
      ['--email', 'bob@example.com', '--password', 'short'],
      1,
      /too short: use at least 10 characters/,
    ],
    ['no email', ['--password', 'a long password'], 2, /An email is required/],
    [
      'an unknown option',
      ['--email', 'bob@example.com', '--password', 'a long password', '--superuser'],
      2,
      /Unknown option '--superuser'/,
    ],
  ])('exits non-zero with a clear message for %s', async (_name, args, code, message) => {
    await userCreate('--email', 'ana@example.com', '--password', 'a long password');
    const result = await userCreate(...args);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
  });
});

async function start(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; base: string; stderr: () => string; stdout: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER], {
    env: { ...baseEnv, PORT: String(port), DATABASE_PATH: databasePath, ...env },
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => stdout.includes('MCP server on') && resolve());
    child.once('exit', (code) => reject(new Error(`the app exited with ${code}: ${stderr}`)));
  });
  return { child, base: `http://localhost:${port}`, stderr: () => stderr, stdout: () => stdout };
}

const stop = (child: ChildProcess) =>
  new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')));

describe('npm start', () => {
  test('logs each request as a JSON line on stdout with its request id, every line out before it exits', async () => {
    const app = await start({ LOG_LEVEL: 'info' });
    const ids = Array.from({ length: 200 }, (_, i) => `log-check-${i}`);
    // Concurrent, so that lines pile up while a write is under way (stdout is written asynchronously).
    await Promise.all(
      ids.map((id) =>
        fetch(`${app.base}/.well-known/oauth-authorization-server`, { headers: { 'X-Request-Id': id } }),
      ),
    );
    await stop(app.child);
    const logged = app
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map(
        (line) => JSON.parse(line) as { req?: { id?: string; path?: string }; res?: { statusCode?: number } },
      );
    const requests = logged.filter((line) => line.req?.id?.startsWith('log-check-'));
    expect(requests.map((line) => line.req!.id).sort()).toEqual([...ids].sort());
    expect(requests[0]).toMatchObject({
      req: { path: '/.well-known/oauth-authorization-server' },
      res: { statusCode: 200 },
    });
  });

  test('serves on PORT with BASE_URL defaulting to http://localhost:$PORT, and keeps its signing key across restarts', async () => {
    const first = await start({});
    const metadata = (await (await fetch(`${first.base}/.well-known/oauth-authorization-server`)).json()) as {
      issuer: string;
      jwks_uri: string;
    };
    expect(metadata.issuer).toBe(first.base);
    const keys = await (await fetch(metadata.jwks_uri)).json();
    await stop(first.child);

    const second = await start({});
    expect(await (await fetch(`${second.base}/v1/oauth/jwks`)).json()).toEqual(keys);
    await stop(second.child);
  });

  test('a SIGNING_KEY in the environment wins over the stored one', async () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    const stored = await start({});
    const storedKeys = (await (await fetch(`${stored.base}/v1/oauth/jwks`)).json()) as {
      keys: Array<{ x: string }>;
    };
    await stop(stored.child);
    const given = await start({ SIGNING_KEY: pem });
    const givenKeys = (await (await fetch(`${given.base}/v1/oauth/jwks`)).json()) as {
      keys: Array<{ x: string }>;
    };
    await stop(given.child);
    expect(givenKeys.keys[0]!.x).toBe((createPublicKey(pem).export({ format: 'jwk' }) as { x: string }).x);
    expect(givenKeys.keys[0]!.x).not.toBe(storedKeys.keys[0]!.x);
  });

  test('BASE_URL sets the issuer and the resource', async () => {
    const app = await start({ BASE_URL: 'https://mcp.example.com/' });
    const metadata = (await (await fetch(`${app.base}/.well-known/oauth-authorization-server`)).json()) as {
      issuer: string;
    };
    expect(metadata.issuer).toBe('https://mcp.example.com');
    const resource = (await (await fetch(`${app.base}/.well-known/oauth-protected-resource/mcp`)).json()) as {
      resource: string;
    };
    expect(resource.resource).toBe('https://mcp.example.com/mcp');
    await stop(app.child);
  });

  test('RATE_LIMITS=off turns the limits off and warns at start', async () => {
    const app = await start({ RATE_LIMITS: 'off' });
    expect(app.stderr()).toMatch(/WARNING: RATE_LIMITS=off/);
    const res = await fetch(`${app.base}/v1/oauth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"token":"x"}',
    });
    expect(res.headers.get('ratelimit')).toBeNull();
    await stop(app.child);
  });

  test('CIMD_ALLOW_LOOPBACK=1 warns at start; without it a loopback document is refused (the default)', async () => {
    const documents = await startDocumentServer();
    try {
      const claude = claudeCodeDocument(documents, { path: '/oauth/claude', host: '127.0.0.1' });
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: claude.clientId,
        redirect_uri: 'http://127.0.0.1:5123/callback',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      });
      const loopback = await start({ CIMD_ALLOW_LOOPBACK: '1', NODE_EXTRA_CA_CERTS: testCa().caFile });
      expect(loopback.stderr()).toMatch(/WARNING: CIMD_ALLOW_LOOPBACK=1/);
      const allowed = await fetch(`${loopback.base}/v1/oauth/authorize?${query}`);
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toContain('Claude Code');
      await stop(loopback.child);

      const strict = await start({ NODE_EXTRA_CA_CERTS: testCa().caFile });
      expect(strict.stderr()).not.toMatch(/CIMD_ALLOW_LOOPBACK/);
      const refused = await fetch(`${strict.base}/v1/oauth/authorize?${query}`);
      expect(refused.status).toBe(401);
      // Refused, and the page says only that the document could not be fetched: never why, in network terms.
      const page = await refused.text();
      expect(page).toContain('could not be fetched');
      expect(page).not.toMatch(/loopback|resolves to|ECONNREFUSED/);
      expect(documents.hits('/oauth/claude')).toBe(1);
      await stop(strict.child);
    } finally {
      await documents.stop();
    }
  });

  test('with limits on, the OAuth endpoints answer with RateLimit headers', async () => {
    const app = await start({});
    const res = await fetch(`${app.base}/v1/oauth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"token":"x"}',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toMatch(/"revoke"; r=\d+; t=\d+/);
    await stop(app.child);
  });

  test('a bad setting stops the app at once with a message that says what to fix', async () => {
    await expect(start({ RATE_LIMITS: 'maybe' })).rejects.toThrow(/RATE_LIMITS must be "on" or "off"/);
  });

  test.each([
    [
      'a SIGNING_KEY that is no key',
      { SIGNING_KEY: 'not a pem' },
      /^Cannot start: signer key #1: privateKey is not a readable PEM/,
    ],
    // Node's recursive mkdir spins forever here (procfs answers ENOENT for any child): the app must say so and exit.
    [
      'a DATABASE_PATH under /proc',
      { DATABASE_PATH: '/proc/no-such-dir/data/app.db' },
      /^Cannot start: ENOENT: .*mkdir '\/proc\/no-such-dir'/,
    ],
    [
      'a DATABASE_PATH under a dangling symlink',
      { DATABASE_PATH: 'DANGLING/data/app.db' },
      /^Cannot start: ENOENT/,
    ],
    // Reproduced: it used to log ECONNREFUSED again and again and never serve.
    [
      'a REDIS_URL nobody listens on',
      { REDIS_URL: 'redis://127.0.0.1:1' },
      /^Cannot start: Redis at redis:\/\/127\.0\.0\.1:1 cannot be reached \(.*\): start it, or unset REDIS_URL/,
    ],
    ['a PORT another server holds', { PORT: 'HELD' }, /^Cannot start: listen EADDRINUSE: .*:\d+$/],
    [
      'a PostgreSQL nobody listens on',
      {
        DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
        SECRET_KEY: Buffer.alloc(32, 1).toString('base64'),
      },
      /^Cannot start: .*ECONNREFUSED/,
    ],
  ])('%s: exits at once with one clear line, no stack trace', async (_name, env, line) => {
    const dir = mkdtempSync(join(tmpdir(), 'start-failure-'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    const given: Record<string, string> = { ...env };
    if (given.DATABASE_PATH?.startsWith('DANGLING'))
      given.DATABASE_PATH = given.DATABASE_PATH.replace('DANGLING', join(dir, 'dangling'));
    // A port this test holds on every address, as another server would.
    const holder = given.PORT === 'HELD' ? createNetServer() : undefined;
    if (holder) {
      await new Promise<void>((resolve) => holder.listen(0, resolve));
      given.PORT = String((holder.address() as AddressInfo).port);
    }
    const child = spawn(process.execPath, [SERVER], {
      env: { ...baseEnv, PORT: String(await freePort()), DATABASE_PATH: databasePath, ...given },
    });
    child.once('exit', () => holder?.close());
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    // A regression would hang with a core at 100 %: never leave such a process behind.
    const guard = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await new Promise((resolve) => child.once('exit', resolve));
    clearTimeout(guard);
    rmSync(dir, { recursive: true, force: true });
    expect({ code, lines: stderr.trim().split('\n').length }).toEqual({ code: 1, lines: 1 });
    expect(stderr.trim()).toMatch(line);
  });
});
