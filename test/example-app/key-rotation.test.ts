// `npm run keys:rotate` under load, across two instances of the app on one PostgreSQL (real processes, as
// deployed): no request fails, the new key is published at once and signs on both instances within
// KEYS_REFRESH_SECONDS, and tokens signed with the old key keep working.
import { execFile, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startExampleApp, TEST_SECRET_KEY } from '../helpers/example-app';
import { rotateSigningKey } from '../../example-app/cli/keys-rotate';
import { generateSigningKey } from '../../lib';
import { authorizeOn } from '../helpers/http-browser';
import { createTestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';
import { reservePort } from '../helpers/ports';
import { ROOT, startInstance } from '../helpers/app-process';
import { waitUntil } from '../helpers/wait';

const USER = { email: 'rotate@example.com', password: 'a long rotation password' };
type Json = any; // response bodies, read as loosely as a client would
const kidOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid as string;

describeWith('signing-key rotation across instances', { postgres: true }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const instances: ChildProcess[] = [];
  let env: Record<string, string>;
  let a: string;
  let b: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Both held at once, so the two instances cannot be handed the same port (two freePort() calls in a row can).
    const held = [await reservePort(), await reservePort()];
    const [portA, portB] = held.map(({ port }) => port) as [number, number];
    await Promise.all(held.map((port) => port.release()));
    a = `http://127.0.0.1:${portA}`;
    b = `http://127.0.0.1:${portB}`;
    env = {
      BASE_URL: a,
      DATABASE_URL: database.url,
      SECRET_KEY: TEST_SECRET_KEY,
      RATE_LIMITS: 'off',
      LOG_LEVEL: 'silent',
      KEYS_REFRESH_SECONDS: '1',
    };
    await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'dist/example-app/cli/user-create.js'), '--email', USER.email, '--password', USER.password],
      { env: { ...process.env, ...env } },
    );
    instances.push(...(await Promise.all([startInstance(portA, env), startInstance(portB, env)])));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(
      instances.map(
        (child) => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM'))),
      ),
    );
    await database?.drop();
  });

  test('no request fails while the key rotates; then both instances sign with the new key', async () => {
    const client: Json = await (
      await fetch(`${a}/v1/oauth/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ client_name: 'Rotation', redirect_uris: ['https://client.example/cb'] }),
      })
    ).json();
    const { code, verifier, redirectUri } = await authorizeOn(a, client, USER, `${a}/mcp`);
    const token = async (base: string, params: Record<string, string>) => {
      const res = await fetch(`${base}/v1/oauth/token`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        },
        body: new URLSearchParams(params),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const ping = async (base: string, accessToken: string) =>
      (
        await fetch(`${base}/mcp`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${accessToken}`,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        })
      ).status;
    const first = await token(a, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
    });
    expect(first.status).toBe(200);
    const oldToken: string = first.body.access_token;
    const oldKid = kidOf(oldToken);
    let refreshToken: string = first.body.refresh_token;

    const failures: string[] = [];
    let requests = 0;
    let stopped = false;
    let turn = 0;
    /** Every access token's kid, per instance that signed it, in order. */
    const signed: Record<string, string[]> = { [a]: [], [b]: [] };
    // Load: refresh on one instance, call a tool on the other with the new token and with the oldest token.
    const load = (async () => {
      while (!stopped) {
        const [issuer, caller] = turn++ % 2 ? [a, b] : [b, a];
        const next = await token(issuer, { grant_type: 'refresh_token', refresh_token: refreshToken });
        requests += 1;
        if (next.status !== 200) {
          failures.push(`refresh on ${issuer}: ${next.status} ${JSON.stringify(next.body)}`);
          continue;
        }
        refreshToken = next.body.refresh_token;
        signed[issuer]!.push(kidOf(next.body.access_token));
        for (const [accessToken, what] of [
          [next.body.access_token, 'new'],
          [oldToken, 'old'],
        ] as const) {
          const status = await ping(caller, accessToken);
          requests += 1;
          if (status !== 200) failures.push(`${what} token on ${caller}: ${status}`);
        }
      }
    })();

    // The rotation lands with the load under way: a few rounds on both instances first.
    await waitUntil(() => requests >= 12, 10_000, 'the load to get going');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'dist/example-app/cli/keys-rotate.js')],
      {
        env: { ...process.env, ...env },
      },
    );
    const rotatedAt = Date.now();
    const newKid = /Signing key (\S+) is current/.exec(stdout)![1]!;
    expect(stdout).toContain(`${oldKid} is retired and verifies until`);
    // Both instances sign with it once they have re-read the set (KEYS_REFRESH_SECONDS, 1 s), and from then on only
    // with it. (Checked before any JWKS request, which would make an instance re-read the set itself.)
    await waitUntil(
      () => signed[a]!.includes(newKid) && signed[b]!.includes(newKid),
      rotatedAt + 1000 + 1000 - Date.now(),
      'both instances signing with the new key',
    );
    // The JWKS of each publishes it beside the old one.
    for (const base of [a, b]) {
      const kids = ((await (await fetch(`${base}/v1/oauth/jwks`)).json()) as Json).keys.map(
        (key: Json) => key.kid,
      );
      expect(kids).toEqual(expect.arrayContaining([oldKid, newKid]));
    }
    const from = { [a]: signed[a]!.indexOf(newKid), [b]: signed[b]!.indexOf(newKid) };
    await waitUntil(
      () => signed[a]!.length >= from[a]! + 5 && signed[b]!.length >= from[b]! + 5,
      10_000,
      'five more tokens from each instance',
    );
    stopped = true;
    await load;

    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(30);
    for (const base of [a, b]) {
      expect(signed[base]!.slice(0, from[base])).toContain(oldKid);
      expect(new Set(signed[base]!.slice(from[base]))).toEqual(new Set([newKid]));
    }
    expect(await ping(a, oldToken)).toBe(200);
    expect(await ping(b, oldToken)).toBe(200);
  }, 60_000);
});

describe('keys:rotate on SQLite', () => {
  test('rotates the key set of the database beside a running app, which verifies both keys', async () => {
    const app = await startExampleApp();
    try {
      const before = app.signer.jwks().keys.map((key) => key.kid);
      const line = await rotateSigningKey({ BASE_URL: app.baseUrl, DATABASE_PATH: app.databasePath });
      const newKid = /Signing key (\S+) is current/.exec(line)![1]!;
      expect(line).toContain(`${before[0]} is retired and verifies until`);
      await app.signer.reloadKeys!();
      expect(app.signer.jwks().keys.map((key) => key.kid)).toEqual([newKid, ...before]);
    } finally {
      await app.stop();
    }
  });

  test('refuses with SIGNING_KEY set: the app then signs with that one key', async () => {
    const pem = generateSigningKey().export({ type: 'pkcs8', format: 'pem' }) as string;
    await expect(
      rotateSigningKey({ SIGNING_KEY: pem, DATABASE_PATH: '/nonexistent/app.db' }),
    ).rejects.toThrow(/SIGNING_KEY is set/);
  });
});
