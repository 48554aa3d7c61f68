// JWS Compact Serialization (RFC 7515 §7.1) of a JSON payload, signed straight with node:crypto. The signature is the
// one cost of a token grant that cannot go; jsonwebtoken's validation, stream plumbing and repeated header encoding
// around it cost most of what it does again, on every grant.
import { sign, type KeyObject } from 'node:crypto';
import type { SigningAlgorithm } from './keys';

/** Signs `payload` under a header fixed once per key: returns a function of the payload alone. */
export function createCompactSigner(
  alg: SigningAlgorithm,
  privateKey: KeyObject,
  header: Record<string, string>,
): (payload: object) => string {
  const encodedHeader = Buffer.from(JSON.stringify({ ...header, alg })).toString('base64url');
  // RFC 7518 §3.4: an ES256 signature is R || S, 64 bytes (IEEE P1363), not the DER that OpenSSL gives by default.
  const keyOptions = alg === 'ES256' ? { key: privateKey, dsaEncoding: 'ieee-p1363' as const } : privateKey;
  return function signCompact(payload) {
    const input = `${encodedHeader}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    return `${input}.${sign('sha256', Buffer.from(input), keyOptions).toString('base64url')}`;
  };
}
