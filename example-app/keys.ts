// The app's signing keys: a key set in the database shared by every instance (createKeySetSigner), sealed with
// SECRET_KEY, rotated by `npm run keys:rotate`. SIGNING_KEY in the environment replaces it with that one fixed key.
import {
  createJwtSigner,
  createKeySetSigner,
  type JwtSigner,
  type KeySetSigner,
  type OAuthStore,
  type SigningKeyStore,
} from 'express-mcp-oauth';
import type { AppConfig } from './config';
import type { AppDb } from './db/database';
import type { SecretSealer } from './db/secret-key';
import { signingKeyPem } from './db/secrets';

export async function openSigner(
  config: AppConfig,
  db: AppDb,
  store: OAuthStore,
  secrets: { key: Buffer; sealer: SecretSealer },
  onRefreshError?: (error: unknown) => void,
  /** The clock (tests move it); default Date.now. */
  now?: () => number,
): Promise<JwtSigner & Partial<KeySetSigner>> {
  const clock = now ? { now } : {};
  if (config.signingKey) return createJwtSigner({ keys: [{ privateKey: config.signingKey }], ...clock });
  return createKeySetSigner({
    // Both stores of the library keep the key set (the SQLite and PostgreSQL tables of SigningKeyStore).
    store: store as OAuthStore & SigningKeyStore,
    encryptionKey: secrets.key,
    maxTokenLifetimeSeconds: config.accessTokenTtl ?? 3600,
    refreshIntervalMs: config.keysRefreshMs,
    // A database from before the key set: its key becomes the set's first, so the tokens it signed stay valid.
    initialKey: await signingKeyPem(db, secrets.sealer, undefined),
    ...(onRefreshError ? { onRefreshError } : {}),
    ...clock,
  });
}
