// JWK thumbprints (RFC 7638): the SHA-256 of a public key's required members, in lexicographic order, with no white
// space. DPoP binds a token to the thumbprint of the client's key (RFC 9449 §6.1: cnf.jkt).
import { createHash } from 'node:crypto';

/** The members RFC 7638 §3.2 hashes for each key type (RFC 7518 §6, RFC 8037 §2). */
const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  EC: ['crv', 'kty', 'x', 'y'],
  RSA: ['e', 'kty', 'n'],
  OKP: ['crv', 'kty', 'x'],
};

/** The base64url SHA-256 thumbprint of a public JWK; throws a TypeError for a key type or member it lacks. */
export function jwkThumbprint(jwk: Readonly<Record<string, unknown>>): string {
  // Own members only: a kty of "constructor" or "toString" must not reach Object.prototype.
  const members =
    // Stryker disable next-line ConditionalExpression: equivalent, hasOwn finds no member for a kty that is no string
    typeof jwk.kty === 'string' && Object.hasOwn(REQUIRED, jwk.kty) ? REQUIRED[jwk.kty] : undefined;
  if (!members) throw new TypeError(`A JWK thumbprint needs kty EC, RSA or OKP, got ${String(jwk.kty)}.`);
  const canonical: Record<string, string> = {};
  for (const name of members) {
    const value = jwk[name];
    if (typeof value !== 'string' || value === '') throw new TypeError(`The JWK lacks its "${name}" member.`);
    canonical[name] = value;
  }
  // JSON.stringify keeps insertion order, which is the lexicographic order of REQUIRED's lists.
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url');
}
