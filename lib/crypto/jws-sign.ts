// Signing our own access tokens: the JWS Compact Serialization (RFC 7515 §7.1) of claims this package built, with
// node:crypto. Verification stays with jsonwebtoken, which reads what others send; signing reads nothing from outside,
// and jsonwebtoken's checks of the claims and options we give it cost a third of a refresh grant's signature while
// protecting nothing (bench/README.md has the measurement).
import { sign, type KeyObject } from 'node:crypto';
import type { SigningAlgorithm } from './keys';

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/**
 * A function that signs a claims object with `key` into a compact JWS whose header is `{ alg, typ, kid }`, built
 * once. ES256 signatures are the raw 64-byte R || S of RFC 7518 §3.4, not DER; RS256 is RSASSA-PKCS1-v1_5 with
 * SHA-256 (§3.3).
 */
export function createJwsSigner(
  alg: SigningAlgorithm,
  key: KeyObject,
  header: { typ: string; kid: string },
): (claims: object) => string {
  const encodedHeader = base64url(JSON.stringify({ alg, typ: header.typ, kid: header.kid }));
  const options = alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' as const } : key;
  return function signJws(claims) {
    const input = `${encodedHeader}.${base64url(JSON.stringify(claims))}`;
    return `${input}.${sign('sha256', Buffer.from(input, 'utf8'), options).toString('base64url')}`;
  };
}
