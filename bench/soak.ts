// npm run soak: the reference app, as a process on a fresh SQLite database, under a steady flow of what its clients
// do (sign in and consent, code exchange, refreshes, a tool call, sometimes a revocation) for SOAK_MINUTES (default
// 5) with SOAK_WORKERS clients (default 4). Every 30 s it prints the app's memory and the sizes of the OAuth tables;
// it exits non-zero if the app ever answered 5xx. Traffic stays on 127.0.0.1; the run stops by itself.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { residentMb } from './load';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 5);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 4);
const ROOT = join(__dirname, '../..');
const USER = { email: 'soak@example.com', password: 'a long soak password' };

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A browser reduced to what the consent flow needs: a cookie jar and the forms' hidden fields. */
function browser(base: string) {
  const jar = new Map<string, string>();
  const visit = async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set('Cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '));
    const res = await fetch(new URL(url, base), { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      jar.set(pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1));
    }
    return res;
  };
  const submit = async (html: string, extra: Record<string, string>) => {
    const action = new URL(/<form[^>]*action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&')).pathname;
    const fields = [
      ...html.matchAll(/<input type="(?:hidden|checkbox)"[^>]* name="([^"]+)" value="([^"]*)"/g),
    ].map((match): [string, string] => [match[1]!, match[2]!]);
    return visit(action, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([...fields, ...Object.entries(extra)]),
    });
  };
  return { visit, submit };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'soak-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const databasePath = join(dir, 'app.db');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    BASE_URL: base,
    DATABASE_PATH: databasePath,
    RATE_LIMITS: 'off',
    PURGE_INTERVAL_SECONDS: '30',
  };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  execFileSync(
    process.execPath,
    [join(ROOT, 'dist/example-app/cli/user-create.js'), '--email', USER.email, '--password', USER.password],
    { env },
  );
  const app: ChildProcess = spawn(process.execPath, [join(ROOT, 'dist/example-app/server.js')], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) =>
    app.stdout!.on('data', (chunk) => String(chunk).includes('MCP server on') && resolve()),
  );
  const counts = { flows: 0, refreshes: 0, toolCalls: 0, revocations: 0, serverErrors: 0, failures: 0 };
  const check = (res: Response, expected: number) => {
    if (res.status >= 500) counts.serverErrors += 1;
    if (res.status !== expected) throw new Error(`${res.url} answered ${res.status}, expected ${expected}`);
    return res;
  };
  const client = (await check(
    await fetch(`${base}/v1/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Soak',
        redirect_uris: ['https://client.example/cb'],
        token_endpoint_auth_method: 'none',
      }),
    }),
    201,
  ).json()) as { client_id: string };
  const token = async (params: Record<string, string>) =>
    (await check(
      await fetch(`${base}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...params, client_id: client.client_id }),
      }),
      200,
    ).json()) as { access_token: string; refresh_token: string };

  async function oneClientLife(): Promise<void> {
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: 'https://client.example/cb',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      scope: 'clients:read fakture:read',
      state: 'soak',
    });
    const b = browser(base);
    const signIn = await b.submit(await (await b.visit(`/v1/oauth/authorize?${query}`)).text(), USER);
    const consent = await (await b.visit(signIn.headers.get('location')!)).text();
    const decided = await b.submit(consent, { decision: 'allow' });
    const code = new URL(decided.headers.get('location')!).searchParams.get('code')!;
    let tokens = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: 'https://client.example/cb',
    });
    counts.flows += 1;
    for (let i = 0; i < 3; i += 1) {
      tokens = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
      counts.refreshes += 1;
    }
    check(
      await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${tokens.access_token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'list_clients', arguments: {} },
        }),
      }),
      200,
    );
    counts.toolCalls += 1;
    if (Math.random() < 0.5) {
      check(
        await fetch(`${base}/v1/oauth/revoke`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ token: tokens.refresh_token }),
        }),
        200,
      );
      counts.revocations += 1;
    }
  }

  const started = Date.now();
  const deadline = started + MINUTES * 60_000;
  const tables = () => {
    const db = new Database(databasePath, { readonly: true });
    const size = (table: string) =>
      (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const sizes = ['oauth_grants', 'oauth_refresh_tokens', 'oauth_authorization_codes'].map(
      (t) => `${t.replace('oauth_', '')} ${size(t)}`,
    );
    db.close();
    return sizes.join(', ');
  };
  const report = () =>
    console.log(
      `${Math.round((Date.now() - started) / 1000)} s: RSS ${residentMb(app.pid!).toFixed(0)} MB; ${counts.flows} consents, ` +
        `${counts.refreshes} refreshes, ${counts.toolCalls} tool calls, ${counts.revocations} revocations, ` +
        `${counts.failures} failures, ${counts.serverErrors} 5xx; rows: ${tables()}`,
    );
  const timer = setInterval(report, 30_000);
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (Date.now() < deadline) {
        await oneClientLife().catch((error: Error) => {
          counts.failures += 1;
          if (counts.failures <= 5) console.error(`soak: ${error.message}`);
        });
      }
    }),
  );
  clearInterval(timer);
  report();
  app.kill('SIGTERM');
  await new Promise((resolve) => app.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  if (counts.serverErrors > 0 || counts.failures > 0) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
