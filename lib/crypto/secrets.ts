// Random secrets, their SHA-256 digests, and constant-time comparison: the only ways secrets are made and checked.
import * as nodeCrypto from 'node:crypto';
import { createHash, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';

/**
 * The SHA-256 digest of a secret, base64url-encoded. The brand keeps a plain secret from being passed where
 * only its hash may be stored: codes, refresh tokens and client secrets live at rest only in this form.
 */
export type SecretHash = string & { readonly __brand: 'SecretHash' };

const ENTROPY_POOL = Buffer.alloc(4096);
let poolOffset = ENTROPY_POOL.length;

/** A random value of `bytes` bytes (at least 32, i.e. 256 bits), base64url-encoded without padding. */
export function randomSecret(bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < 32) {
    throw new RangeError(`randomSecret needs at least 32 bytes (256 bits) of entropy, got ${bytes}.`);
  }
  if (bytes !== 32) return randomBytes(bytes).toString('base64url');
  // The 32-byte secrets of every grant (codes, refresh tokens) come from a pool filled 4 KB at a time by the CSPRNG,
  // as Node pools the entropy of randomUUID: one call into OpenSSL per 128 secrets instead of one per secret. Each
  // byte is handed out once.
  if (poolOffset + 32 > ENTROPY_POOL.length) {
    randomFillSync(ENTROPY_POOL);
    poolOffset = 0;
  }
  const secret = ENTROPY_POOL.toString('base64url', poolOffset, poolOffset + 32);
  poolOffset += 32;
  return secret;
}

/** SHA-256 of the UTF-8 bytes of `value`, base64url-encoded. */
export function sha256(value: string): string {
  // crypto.hash() (Node >= 20.12) is a one-shot digest several times cheaper than createHash() for short input.
  return oneShotHash
    ? oneShotHash('sha256', value, 'base64url')
    : createHash('sha256').update(value).digest('base64url');
}

type OneShotHash = (algorithm: string, data: string, encoding: 'base64url') => string;
const oneShotHash = (nodeCrypto as { hash?: OneShotHash }).hash;

/** The storable hash of a secret (authorization code, refresh token, client secret). */
export function hashSecret(secret: string): SecretHash {
  return sha256(secret) as SecretHash;
}

/** Compares two strings in time that depends only on their lengths, never on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  // Lengths of hashes are public; comparing equal-length buffers keeps timingSafeEqual from throwing.
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

/** Whether `secret` hashes to `expected`, compared in constant time. */
export function secretMatchesHash(secret: string, expected: SecretHash | string): boolean {
  return constantTimeEqual(sha256(secret), expected);
}
