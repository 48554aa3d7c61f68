// Signing keys: loading from PEM or KeyObject, generating, naming by JWK thumbprint, and publishing as JWK.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';

/** The JWS algorithms the signer supports: ES256 (default) and RS256. */
export type SigningAlgorithm = 'ES256' | 'RS256';

/** A key given to the signer: a private key signs and verifies; a public key only verifies (a retired key). */
export interface SigningKeyInput {
  /** PEM text or a KeyObject holding a private key (EC P-256 for ES256, RSA of 2048 bits or more for RS256). */
  privateKey?: string | KeyObject;
  /** PEM text or a KeyObject holding a public key, for a key that still verifies but no longer signs. */
  publicKey?: string | KeyObject;
  /** The key id; by default the RFC 7638 JWK thumbprint of the public key. */
  kid?: string;
}

/** A key parsed once at startup, ready for every sign and verify call. */
export interface LoadedKey {
  kid: string;
  alg: SigningAlgorithm;
  privateKey: KeyObject | undefined;
  publicKey: KeyObject;
  jwk: PublicJwk;
}

/** A public key as RFC 7517 JWK, with the members a JWKS consumer needs. */
export interface PublicJwk {
  kty: string;
  kid: string;
  alg: SigningAlgorithm;
  use: 'sig';
  [member: string]: unknown;
}

/** Generates a fresh key pair for `alg`. */
export function generateSigningKey(alg: SigningAlgorithm = 'ES256'): KeyObject {
  const pair =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return pair.privateKey;
}

/** Parses one key input, deriving its algorithm from the key itself so a key can never be used with another. */
export function loadKey(input: SigningKeyInput, index: number): LoadedKey {
  const where = `signer key #${index + 1}`;
  if (!input || (input.privateKey === undefined && input.publicKey === undefined)) {
    throw new TypeError(
      `${where}: give { privateKey } (PEM or KeyObject), or { publicKey } for a retired key.`,
    );
  }
  const privateKey = input.privateKey === undefined ? undefined : toPrivateKey(input.privateKey, where);
  const publicKey = privateKey ? createPublicKey(privateKey) : toPublicKey(input.publicKey!, where);
  const alg = algorithmOf(publicKey, where);
  const thumbprintJwk = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  const kid = input.kid ?? thumbprint(thumbprintJwk);
  if (typeof kid !== 'string' || kid.length === 0)
    throw new TypeError(`${where}: kid must be a non-empty string.`);
  return {
    kid,
    alg,
    privateKey,
    publicKey,
    jwk: { ...thumbprintJwk, kty: thumbprintJwk.kty!, kid, alg, use: 'sig' },
  };
}

function toPrivateKey(key: string | KeyObject, where: string): KeyObject {
  if (key instanceof KeyObject) {
    if (key.type !== 'private')
      throw new TypeError(`${where}: privateKey is a ${key.type} key; pass the private key.`);
    return key;
  }
  try {
    return createPrivateKey(key);
  } catch (error) {
    throw new TypeError(
      `${where}: privateKey is not a readable PEM private key (${(error as Error).message}).`,
    );
  }
}

function toPublicKey(key: string | KeyObject, where: string): KeyObject {
  if (key instanceof KeyObject) return key.type === 'private' ? createPublicKey(key) : key;
  try {
    return createPublicKey(key);
  } catch (error) {
    throw new TypeError(
      `${where}: publicKey is not a readable PEM public key (${(error as Error).message}).`,
    );
  }
}

function algorithmOf(key: KeyObject, where: string): SigningAlgorithm {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1') return 'ES256';
  if (key.asymmetricKeyType === 'rsa' && (details.modulusLength ?? 0) >= 2048) return 'RS256';
  throw new TypeError(
    `${where}: unsupported key (${key.asymmetricKeyType} ${details.namedCurve ?? details.modulusLength ?? ''}); ` +
      'use an EC P-256 key (ES256) or an RSA key of at least 2048 bits (RS256).',
  );
}

/** RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order. */
function thumbprint(jwk: Record<string, string>): string {
  const members =
    jwk.kty === 'EC'
      ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
      : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}
