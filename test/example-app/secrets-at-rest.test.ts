// The app's own secrets (the signing key, the cookie secret) at rest: sealed with a key that is not in the database,
// so that a copy of the database alone can neither sign a token nor forge a cookie.
import { createHmac, createPrivateKey, generateKeyPairSync } from 'node:crypto';
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
import { startExampleApp } from '../helpers/example-app';

/** The cookie the account pages accept for `userId`, made with `secret` as the app makes it. */
function accountCookie(secret: string, userId: string): string {
  const expires = Math.floor(Date.now() / 1000) + 3600;
  const tag = createHmac('sha256', secret).update(`session:${userId}.${expires}`).digest('base64url');
  return `app_session=${userId}.${expires}.${tag}`;
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
    const signed = await request(app.baseUrl).get('/account/connected-apps');
    expect(signed.status).toBe(302); // signed out
    for (const { value } of rows) {
      // The stored value is no key: it cannot sign an access token ...
      expect(() => createPrivateKey(value)).toThrow();
      expect(() => jwt.sign({ sub: app.user.id }, value, { algorithm: 'ES256' })).toThrow();
      // ... and as a MAC key it makes a cookie the app refuses.
      const forged = await request(app.baseUrl)
        .get('/account/connected-apps')
        .set('Cookie', accountCookie(value, app.user.id));
      expect(forged.status).toBe(302);
    }
    // The control: whoever also has the key file opens the values, and the same forgery works. Only the key matters.
    const sealer = createSecretSealer(parseSecretKey(readFileSync(keyFileOf(app.databasePath), 'utf8')));
    const cookieSecret = sealer.open(
      'cookie_secret',
      rows.find((row) => row.name === 'cookie_secret')!.value,
    )!;
    const withKey = await request(app.baseUrl)
      .get('/account/connected-apps')
      .set('Cookie', accountCookie(cookieSecret, app.user.id));
    expect(withKey.status).toBe(200);
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
    old.close();
    const second = await createExampleApp(readConfig(env));
    const jwk = second.signer.jwks().keys[0]!;
    const expected = createPrivateKey(pem).export({ format: 'jwk' });
    expect([jwk.x, jwk.y]).toEqual([expected.x, expected.y]); // the same key, now sealed
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
