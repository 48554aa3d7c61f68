// The app's own secrets (the signing key, the cookie secret) at rest: sealed with a key that is not in the database,
// so that a copy of the database alone can neither sign a token nor forge a cookie.
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { readConfig } from '../../example-app/config';
import { createSecretSealer, keyFileOf } from '../../example-app/db/secret-key';
import { createExampleApp } from '../../example-app/app';
import { parseSecretKey } from '../../example-app/config';
import { createSealer } from '../../lib/crypto/signed-value';
import { startExampleApp } from '../helpers/example-app';

/** The OAuth sign-in cookie for `userId`, sealed with `secret` as the library seals it: with it, a browser is signed in. */
function signInCookie(secret: string, userId: string): string {
  const sealer = createSealer(Buffer.from(secret), Date.now);
  return `mcp_oauth_session=${sealer.seal('sign-in', { sub: userId }, Date.now() + 600_000)}`;
}

/** Whether the consent page (not the sign-in page) is shown to a browser with `cookie`: whether it is signed in. */
async function signedIn(baseUrl: string, clientId: string, cookie: string): Promise<boolean> {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: 'https://client.example/cb',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  });
  const page = await request(baseUrl).get(`/v1/oauth/authorize?${query}`).set('Cookie', cookie);
  return page.text.includes('>Allow<');
}

/** Every value of app_secrets in a copy of the database file (WAL folded in first). */
function secretsInCopy(databasePath: string): Array<{ name: string; value: string }> {
  const live = new Database(databasePath);
  live.pragma('wal_checkpoint(TRUNCATE)');
  live.close();
  const copy = join(mkdtempSync(join(tmpdir(), 'db-copy-')), 'copy.db');
  copyFileSync(databasePath, copy);
  const db = new Database(copy, { readonly: true });
  const rows = db.prepare('SELECT name, value FROM app_secrets').all() as Array<{
    name: string;
    value: string;
  }>;
  db.close();
  return rows;
}

test('with SQLite and no SECRET_KEY, a key file is made beside the database (0600), and the secrets are sealed', async () => {
  const app = await startExampleApp();
  try {
    const keyFile = keyFileOf(app.databasePath);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const rows = secretsInCopy(app.databasePath);
    expect(rows.map((row) => row.name).sort()).toEqual(['cookie_secret', 'signing_key']);
    for (const row of rows) expect(row.value).toMatch(/^enc:v1:/);
    expect(readFileSync(app.databasePath, 'latin1')).not.toContain('PRIVATE KEY');
  } finally {
    await app.stop();
  }
});

test('a copy of the database alone can neither sign a token nor forge a cookie (and with the key it could)', async () => {
  const app = await startExampleApp();
  try {
    const rows = secretsInCopy(app.databasePath);
    const client = (
      await request(app.baseUrl)
        .post('/v1/oauth/register')
        .send({ client_name: 'Victim app', redirect_uris: ['https://client.example/cb'] })
    ).body as { client_id: string };
    for (const { value } of rows) {
      // The stored value is no key: it cannot sign an access token ...
      expect(() => createPrivateKey(value)).toThrow();
      expect(() => jwt.sign({ sub: app.user.id }, value, { algorithm: 'ES256' })).toThrow();
      // ... and as the cookie secret it seals a sign-in the app refuses: no consent on the user's behalf.
      expect(await signedIn(app.baseUrl, client.client_id, signInCookie(value, app.user.id))).toBe(false);
    }
    // The control: whoever also has the key file opens the values, and the same forgery works. Only the key matters.
    const sealer = createSecretSealer(parseSecretKey(readFileSync(keyFileOf(app.databasePath), 'utf8')));
    const cookieSecret = sealer.open(
      'cookie_secret',
      rows.find((row) => row.name === 'cookie_secret')!.value,
    )!;
    expect(await signedIn(app.baseUrl, client.client_id, signInCookie(cookieSecret, app.user.id))).toBe(true);
    const signingKey = sealer.open('signing_key', rows.find((row) => row.name === 'signing_key')!.value)!;
    expect(() => createPrivateKey(signingKey)).not.toThrow();
  } finally {
    await app.stop();
  }
});

test('secrets stored in plain text by an earlier version are sealed in place on start, and keep working', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'app-migrate-'));
  const env = { BASE_URL: 'http://127.0.0.1:1', DATABASE_PATH: join(dir, 'app.db'), RATE_LIMITS: 'off' };
  try {
    const first = await createExampleApp(readConfig(env));
    await first.close();
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    const old = new Database(env.DATABASE_PATH);
    old.prepare("UPDATE app_secrets SET value = ? WHERE name = 'signing_key'").run(pem);
    old
      .prepare(
        "UPDATE app_secrets SET value = 'old-cookie-secret-in-plain-text-from-an-earlier-version' WHERE name = 'cookie_secret'",
      )
      .run();
    // That version had no key set either: its one key becomes the set's first current key.
    old.prepare('DELETE FROM oauth_signing_keys').run();
    old.close();
    const second = await createExampleApp(readConfig(env));
    const jwk = second.signer.jwks().keys[0]!;
    const expected = createPrivateKey(pem).export({ format: 'jwk' });
    expect([jwk.x, jwk.y]).toEqual([expected.x, expected.y]); // the same key, now sealed
    expect(second.signer.jwks().keys).toHaveLength(1);
    await second.close();
    const rows = secretsInCopy(env.DATABASE_PATH);
    for (const row of rows) expect(row.value).toMatch(/^enc:v1:/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.each([
  [
    'another SECRET_KEY',
    { SECRET_KEY: Buffer.alloc(32, 9).toString('base64') },
    /SECRET_KEY does not decrypt the/,
  ],
  ['a short SECRET_KEY', { SECRET_KEY: 'c2hvcnQ=' }, /at least 32 random bytes in base64/],
])('%s is refused at start with a clear message', async (_name, extra, message) => {
  const dir = mkdtempSync(join(tmpdir(), 'app-key-'));
  const env = { BASE_URL: 'http://127.0.0.1:1', DATABASE_PATH: join(dir, 'app.db'), RATE_LIMITS: 'off' };
  try {
    await (await createExampleApp(readConfig(env))).close();
    await expect(
      Promise.resolve().then(() => createExampleApp(readConfig({ ...env, ...extra }))),
    ).rejects.toThrow(message);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('DATABASE_URL without SECRET_KEY stops at the configuration, before connecting', () => {
  expect(() => readConfig({ DATABASE_URL: 'postgres://app@db.internal/business' })).toThrow(
    /SECRET_KEY is required with DATABASE_URL/,
  );
});
