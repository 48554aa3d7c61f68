// Secrets the app makes on its first start and keeps in the database, so that tokens survive a restart and every
// instance on the same database signs and verifies alike. They are stored sealed (secret-key.ts), never in plain
// text; a value from before that is sealed in place on start. A key given in the environment wins.
import { randomBytes } from 'node:crypto';
import type { AppDb } from './database';
import type { SecretSealer } from './secret-key';
import { generateSigningKey } from 'express-mcp-oauth';

/** The value stored under `name`, made by `create` the first time; the first writer wins when two race. */
async function storedSecret(
  db: AppDb,
  sealer: SecretSealer,
  name: string,
  create: () => string,
): Promise<string> {
  await db.run('INSERT INTO app_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [
    name,
    sealer.seal(name, create()),
  ]);
  const stored = (await db.get<{ value: string }>('SELECT value FROM app_secrets WHERE name = ?', [name]))!
    .value;
  const value = sealer.open(name, stored);
  if (value !== undefined) return value;
  // Stored in plain text by an earlier version: seal it now, once (a concurrent start does the same, harmlessly).
  await db.run('UPDATE app_secrets SET value = ? WHERE name = ? AND value = ?', [
    sealer.seal(name, stored),
    name,
    stored,
  ]);
  return stored;
}

export async function signingKeyPem(
  db: AppDb,
  sealer: SecretSealer,
  fromEnvironment: string | undefined,
): Promise<string> {
  if (fromEnvironment) return fromEnvironment;
  return storedSecret(
    db,
    sealer,
    'signing_key',
    () => generateSigningKey('ES256').export({ type: 'pkcs8', format: 'pem' }) as string,
  );
}

export async function cookieSecret(db: AppDb, sealer: SecretSealer): Promise<string> {
  return storedSecret(db, sealer, 'cookie_secret', () => randomBytes(32).toString('base64url'));
}
