// A DPoP client key for the tests (RFC 9449 §4): proofs made with it, as a client makes them, each part overridable
// so that a test can make the one thing wrong that a check must catch.
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { accessTokenHash } from '../../lib/dpop/proof';
import { jwkThumbprint } from '../../lib/dpop/thumbprint';

export interface ProofParts {
  htm?: string;
  htu?: string;
  /** The access token the proof goes with (its hash becomes ath). */
  accessToken?: string;
  /** Claims to add, replace, or (undefined) remove. */
  claims?: Record<string, unknown>;
  /** Header members to add or replace. */
  header?: Record<string, unknown>;
}

export interface DpopKey {
  publicJwk: Record<string, unknown>;
  /** The RFC 7638 thumbprint: what a token bound to this key carries as cnf.jkt. */
  jkt: string;
  /** A proof for one request, made at `now` (milliseconds). */
  proof(now: number, parts?: ProofParts): string;
}

export function createDpopKey(): DpopKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  return {
    publicJwk,
    jkt: jwkThumbprint(publicJwk),
    proof: (now, parts = {}) => sign(privateKey, publicJwk, now, parts),
  };
}

function sign(privateKey: KeyObject, publicJwk: Record<string, unknown>, now: number, parts: ProofParts) {
  const payload: Record<string, unknown> = {
    jti: randomUUID(),
    htm: parts.htm ?? 'POST',
    htu: parts.htu,
    iat: Math.floor(now / 1000),
    ...(parts.accessToken === undefined ? {} : { ath: accessTokenHash(parts.accessToken) }),
    ...parts.claims,
  };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return jwt.sign(payload, privateKey, {
    algorithm: 'ES256',
    header: { typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk, ...parts.header } as jwt.JwtHeader,
  });
}

/** The claims of a JWT, unverified: what a test reads of a token the server issued. */
export const claimsOf = (token: string) => jwt.decode(token) as Record<string, unknown>;
