// User codes (RFC 8628 §6.1): what a person reads on the device and types in a browser. Eight letters from twenty
// consonants (no vowels, so no words; no 0/O or 1/I to confuse), about 34.6 bits, shown as XXXX-XXXX and read back
// without regard to case, dashes or spaces. Stored as a MAC under the router's secret: so few bits would be found
// again from a plain hash by trying them all.
import { createHmac, randomInt } from 'node:crypto';
import type { SecretHash } from '../crypto/secrets';

const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;

/** A new user code, as shown: XXXX-XXXX. */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i += 1) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What a person typed, as the code it may be: upper case, without the dashes and white space people add or drop;
 * undefined when it cannot be a user code at all (then no lookup is made).
 */
export function normaliseUserCode(typed: unknown): string | undefined {
  if (typeof typed !== 'string' || typed.length > 64) return undefined;
  const code = typed.toUpperCase().replace(/[\s\-‐-―−]/g, '');
  if (code.length !== LENGTH) return undefined;
  for (const letter of code) if (!ALPHABET.includes(letter)) return undefined;
  return code;
}

/** The form a user code is shown in: XXXX-XXXX. */
export const formatUserCode = (normalised: string) => `${normalised.slice(0, 4)}-${normalised.slice(4)}`;

/** The stored form of a normalised user code: HMAC-SHA-256 under the router's secret. */
export function userCodeHash(secret: Buffer, normalised: string): SecretHash {
  return createHmac('sha256', secret).update(`user code ${normalised}`).digest('base64url') as SecretHash;
}
