// Secrets the app makes on its first start and keeps in the database, so that tokens survive a restart and every
// instance on the same database signs and verifies alike. A key given in the environment wins.
import { randomBytes } from 'node:crypto';
import type { AppDb } from './database';
import { generateSigningKey } from '../../lib';

/** The value stored under `name`, made by `create` the first time; the first writer wins when two race. */
async function storedSecret(db: AppDb, name: string, create: () => string): Promise<string> {
  await db.run('INSERT INTO app_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [
    name,
    create(),
  ]);
  return (await db.get<{ value: string }>('SELECT value FROM app_secrets WHERE name = ?', [name]))!.value;
}

export async function signingKeyPem(db: AppDb, fromEnvironment: string | undefined): Promise<string> {
  if (fromEnvironment) return fromEnvironment;
  return storedSecret(
    db,
    'signing_key',
    () => generateSigningKey('ES256').export({ type: 'pkcs8', format: 'pem' }) as string,
  );
}

export async function cookieSecret(db: AppDb): Promise<string> {
  return storedSecret(db, 'cookie_secret', () => randomBytes(32).toString('base64url'));
}
