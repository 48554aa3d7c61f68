// The key that encrypts the secrets the app keeps in its database (the signing key, the cookie secret): a copy of
// the database (a backup, a replica, a pg_dump) must not be enough to sign a token or forge a cookie. The key comes
// from SECRET_KEY; with SQLite and none given, it is generated once into a file beside the database (mode 0600),
// never inside it. Values are sealed with AES-256-GCM under a key derived from it, each bound to its name.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { ConfigError, parseSecretKey, SECRET_KEY_REQUIRED } from '../config';

const PREFIX = 'enc:v1:';

/** The key file used with SQLite when SECRET_KEY is not set: beside the database, never inside it. */
export const keyFileOf = (databasePath: string) => `${databasePath}.secret-key`;

/** SECRET_KEY, or with SQLite the key file beside the database, created on first start (mode 0600). */
export function loadSecretKey(target: {
  secretKey: string | undefined;
  databaseUrl: string | undefined;
  databasePath: string;
}): Buffer {
  if (target.secretKey) return parseSecretKey(target.secretKey);
  // readConfig already refused DATABASE_URL without SECRET_KEY; this is for callers that built the config by hand.
  if (target.databaseUrl) throw new ConfigError(SECRET_KEY_REQUIRED);
  const file = keyFileOf(target.databasePath);
  try {
    // 'wx': only the first start creates it; a second process starting at once reads the winner's key below.
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return parseSecretKey(readFileSync(file, 'utf8'), `the key file ${file}`);
}

/** The AES-256-GCM key for app secrets, derived from the secret key (HKDF-SHA256). */
function sealingKey(secretKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, 'express-mcp-oauth', 'app secrets v1', 32));
}

const TAG_BYTES = 16;

export interface SecretSealer {
  seal(name: string, value: string): string;
  /** The plain value, or undefined for a value stored before encryption (to be sealed now). */
  open(name: string, stored: string): string | undefined;
}

export function createSecretSealer(secretKey: Buffer): SecretSealer {
  const key = sealingKey(secretKey);
  return {
    seal(name, value) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      // The name is authenticated too: a sealed value moved to another row does not open.
      cipher.setAAD(Buffer.from(name));
      const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
      return `${PREFIX}${[iv, cipher.getAuthTag(), data].map((part) => part.toString('base64url')).join(':')}`;
    },
    open(name, stored) {
      if (!stored.startsWith(PREFIX)) return undefined;
      const [iv, tag, data] = stored
        .slice(PREFIX.length)
        .split(':')
        .map((part) => Buffer.from(part, 'base64url'));
      try {
        // NIST SP 800-38D §5.2.1.2: the full 128-bit tag; Node's decipher takes 4 to 16 bytes unless told the length,
        // and a 4-byte tag is forged in 2^32 tries.
        const decipher = createDecipheriv('aes-256-gcm', key, iv!, { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(name));
        decipher.setAuthTag(tag!);
        return Buffer.concat([decipher.update(data!), decipher.final()]).toString('utf8');
      } catch {
        throw new ConfigError(
          `SECRET_KEY does not decrypt the ${name} kept in the database: give the key this database was set up with.`,
        );
      }
    },
  };
}
