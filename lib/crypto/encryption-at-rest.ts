// Secrets at rest: AES-256-GCM under a key derived (HKDF-SHA256) from an encryption key, a purpose and the row's
// label (a signing key's kid; a user's upstream tokens' provider and user), so that a copy of the database alone
// opens nothing, and a sealed value moved to another row does not open.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const PREFIX = 'v1.';
/**
 * NIST SP 800-38D §5.2.1.2: the full 128-bit tag. Node's decipher accepts any tag of 4 to 16 bytes unless told its
 * length (authTagLength), and a 4-byte tag is forged in 2^32 tries: told, it refuses a tag of any other length.
 */
const TAG_BYTES = 16;

export interface KeySealer {
  seal(kid: string, pem: string): string;
  /** The PEM, or an Error saying the key cannot be opened (another encryption key, or a tampered row). */
  open(kid: string, sealed: string): string;
}

/** `purpose` separates the keys of different uses; the default is the key set's, whose rows predate the option. */
export function createKeySealer(
  encryptionKey: Buffer,
  purpose = 'signing key',
  keyName = "the key set's encryptionKey",
): KeySealer {
  const keyFor = (kid: string) =>
    Buffer.from(
      hkdfSync('sha256', encryptionKey, Buffer.alloc(0), `express-mcp-oauth ${purpose} ${kid}`, 32),
    );
  return {
    seal(kid, pem) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keyFor(kid), iv);
      cipher.setAAD(Buffer.from(kid));
      const data = Buffer.concat([cipher.update(pem, 'utf8'), cipher.final()]);
      return PREFIX + [iv, cipher.getAuthTag(), data].map((part) => part.toString('base64url')).join('.');
    },
    open(kid, sealed) {
      const parts = sealed.startsWith(PREFIX) ? sealed.slice(PREFIX.length).split('.') : [];
      if (parts.length !== 3) throw new Error(`${purpose} ${kid}: not a sealed value.`);
      const [iv, tag, data] = parts.map((part) => Buffer.from(part, 'base64url')) as [Buffer, Buffer, Buffer];
      try {
        const decipher = createDecipheriv('aes-256-gcm', keyFor(kid), iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(kid));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
      } catch {
        throw new Error(
          `${purpose} ${kid} cannot be opened: ${keyName} differs from the one that sealed it, or the row was altered.`,
        );
      }
    },
  };
}
