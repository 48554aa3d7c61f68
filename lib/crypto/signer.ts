// The access-token signer: RFC 9068 JWTs signed with node:crypto (jws-sign.ts) and verified with jsonwebtoken (the
// one JWT reader of the package; bench/README.md has the measurements), key rotation by kid, and the JWKS.
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { OAuthError } from '../errors';
import { decodeJwt, hasType, verifySignature } from '../jwt/verify';
import { createJwsSigner } from './jws-sign';
import { MAX_ACT_DEPTH, isActClaim, type ActClaim } from './act';
import {
  generateSigningKey,
  loadKey,
  type LoadedKey,
  type PublicJwk,
  type SigningAlgorithm,
  type SigningKeyInput,
} from './keys';

/** Options of createJwtSigner. */
export interface JwtSignerOptions {
  /** Keys, newest first: the first signs, every one verifies. Default: one key generated in memory. */
  keys?: SigningKeyInput[];
  /** The algorithm of a generated key (when `keys` is not given). Default ES256. */
  algorithm?: SigningAlgorithm;
  /** Seconds of clock skew tolerated on exp, iat and nbf when verifying. Default 5, at most 300. */
  clockToleranceSeconds?: number;
  /** The clock, in milliseconds since the epoch; tests pass a fake one. Default Date.now. */
  now?: () => number;
}

/** The claims of an access token (RFC 9068 §2.2), plus the grant it was issued under. */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  client_id: string;
  scope: string;
  iat: number;
  exp: number;
  jti: string;
  /** The grant this token belongs to: the bearer check refuses it once the grant is revoked. */
  grant_id: string;
  /** For a DPoP-bound token, the thumbprint of the client's key (RFC 9449 §6.1): only its holder may use it. */
  cnf?: { jkt: string };
  /** For a token from a token exchange (RFC 8693 §4.1), who acts for `sub`: the latest actor, then those before. */
  act?: ActClaim;
}

/** What the caller decides about a new access token; the signer adds iat, exp and jti. */
export interface AccessTokenInput {
  issuer: string;
  subject: string;
  audience: string;
  clientId: string;
  scope: string;
  grantId: string;
  /** Lifetime in seconds. */
  expiresIn: number;
  /** Binds the token to a DPoP key: the RFC 7638 thumbprint of the key that signed the token request's proof. */
  jkt?: string;
  /** RFC 8693 §4.1: who acts for the subject, for a token issued by a token exchange. */
  act?: ActClaim;
}

/** Signs and verifies access tokens, and publishes its public keys. */
export interface JwtSigner {
  /** Signs an RFC 9068 access token with the newest key. */
  signAccessToken(input: AccessTokenInput): { token: string; claims: AccessTokenClaims };
  /** Verifies signature, algorithm, typ, issuer, audience and expiry; throws OAuthError invalid_token otherwise. */
  verifyAccessToken(token: string, expected: { issuer: string; audience: string }): AccessTokenClaims;
  /** The public keys as an RFC 7517 JWK Set; the same frozen object until the keys change. */
  jwks(): { keys: readonly PublicJwk[] };
  /**
   * A key set shared with other instances (createKeySetSigner): verifies, reading the set again first when the token
   * names a kid this instance does not know yet. The router uses it, when present, after verifyAccessToken refused an
   * unknown key.
   */
  verifyAccessTokenFresh?(
    token: string,
    expected: { issuer: string; audience: string },
  ): Promise<AccessTokenClaims>;
  /** A key set shared with other instances: reads it again unless the copy in memory is younger than maxAgeMs. */
  reloadKeys?(options?: { maxAgeMs?: number }): Promise<void>;
}

/** The cause of the invalid_token error for a token whose kid no key of the signer has. */
export class UnknownKeyError extends Error {
  override readonly name = 'UnknownKeyError';
  constructor(readonly kid: unknown) {
    super(`No signing key has the kid ${JSON.stringify(kid)}.`);
  }
}

/** Whether an error is the invalid_token of an unknown kid. */
export function isUnknownKeyError(error: unknown): boolean {
  return error instanceof OAuthError && error.cause instanceof UnknownKeyError;
}

/** Creates the access-token signer. Keys are parsed once here; a bad key fails now, not on the first request. */
export function createJwtSigner(options: JwtSignerOptions = {}): JwtSigner {
  const config = parseOptions(options);
  const keys = config.keys;
  const signingKey = keys[0]!;
  const byKid = new Map(keys.map((key) => [key.kid, key]));
  const jwks = Object.freeze({ keys: Object.freeze(keys.map((key) => Object.freeze(key.jwk))) });
  const nowSeconds = () => Math.floor(config.now() / 1000);
  // The header, built once, names the key that signs (RFC 7515 §4.1.4) and the token type (RFC 9068 §2.1).
  const signJws = createJwsSigner(signingKey.alg, signingKey.privateKey!, {
    typ: 'at+jwt',
    kid: signingKey.kid,
  });

  return {
    signAccessToken(input) {
      const iat = nowSeconds();
      const claims: AccessTokenClaims = {
        iss: input.issuer,
        sub: input.subject,
        aud: input.audience,
        client_id: input.clientId,
        scope: input.scope,
        iat,
        exp: iat + input.expiresIn,
        jti: randomUUID(),
        grant_id: input.grantId,
        ...(input.jkt === undefined ? {} : { cnf: { jkt: input.jkt } }),
        ...(input.act === undefined ? {} : { act: input.act }),
      };
      return { token: signJws(claims), claims };
    },

    verifyAccessToken(token, expected) {
      const decoded = typeof token === 'string' ? decodeJwt(token) : undefined;
      if (!decoded) throw invalidToken('The access token is malformed.');
      const { header } = decoded;
      // RFC 9068 §2.1: the header's typ is "at+jwt"; §4 also accepts "application/at+jwt".
      if (!hasType(header.typ, 'at+jwt')) {
        // RFC 9068 §4: a JWT of another type (an ID token, say) must not pass as an access token.
        throw invalidToken('The token is not an access token (typ must be at+jwt).');
      }
      const key = header.kid === undefined ? undefined : byKid.get(header.kid);
      if (!key)
        throw invalidToken(
          'The access token was signed with an unknown key.',
          new UnknownKeyError(header.kid),
        );
      try {
        // The algorithm is pinned to the key's own, so "none" or an HMAC made with the public key never passes.
        const payload = verifySignature(token as string, [key.publicKey], {
          alg: key.alg,
          now: config.now(),
          issuer: expected.issuer,
          audience: expected.audience,
          clockTolerance: config.clockToleranceSeconds,
        }) as Partial<AccessTokenClaims>;
        return checkClaims(payload);
      } catch (error) {
        if (error instanceof OAuthError) throw error;
        const reason =
          error instanceof jwt.TokenExpiredError
            ? 'The access token has expired.'
            : 'The access token is invalid.';
        throw invalidToken(reason, error);
      }
    },

    jwks: () => jwks,
  };
}

function checkClaims(payload: Partial<AccessTokenClaims>): AccessTokenClaims {
  const required = ['sub', 'client_id', 'scope', 'jti', 'grant_id'] as const;
  for (const name of required) {
    if (typeof payload[name] !== 'string') throw invalidToken(`The access token lacks the ${name} claim.`);
  }
  if (typeof payload.exp !== 'number') throw invalidToken('The access token lacks the exp claim.');
  // A confirmation this server cannot read must not be taken for none: the token would pass as a bearer token.
  if (payload.cnf !== undefined && typeof payload.cnf?.jkt !== 'string')
    throw invalidToken('The access token has a cnf claim without a jkt.');
  // An actor this server cannot read must not be taken for none: the token would pass as the subject's own.
  if (payload.act !== undefined && !isActClaim(payload.act, MAX_ACT_DEPTH))
    throw invalidToken('The access token has an act claim this server cannot read.');
  return payload as AccessTokenClaims;
}

function invalidToken(description: string, cause?: unknown): OAuthError {
  return new OAuthError('invalid_token', description, { cause });
}

interface SignerConfig {
  keys: LoadedKey[];
  clockToleranceSeconds: number;
  now: () => number;
}

function parseOptions(options: JwtSignerOptions): SignerConfig {
  const algorithm = options.algorithm ?? 'ES256';
  if (algorithm !== 'ES256' && algorithm !== 'RS256') {
    throw new TypeError(
      `createJwtSigner: algorithm must be "ES256" or "RS256", got ${JSON.stringify(algorithm)}.`,
    );
  }
  const inputs = options.keys ?? [{ privateKey: generateSigningKey(algorithm) }];
  if (!Array.isArray(inputs) || inputs.length === 0) {
    throw new TypeError(
      'createJwtSigner: keys must be a non-empty array (newest first), or left out to generate one.',
    );
  }
  const keys = inputs.map(loadKey);
  if (!keys[0]!.privateKey) {
    throw new TypeError(
      'createJwtSigner: the first key signs, so it needs a privateKey; put retired public keys after it.',
    );
  }
  const kids = new Set(keys.map((key) => key.kid));
  if (kids.size !== keys.length)
    throw new TypeError('createJwtSigner: two keys share a kid; give each key its own.');
  const clockToleranceSeconds = options.clockToleranceSeconds ?? 5;
  if (!Number.isFinite(clockToleranceSeconds) || clockToleranceSeconds < 0 || clockToleranceSeconds > 300) {
    throw new TypeError('createJwtSigner: clockToleranceSeconds must be a number of seconds from 0 to 300.');
  }
  const now = options.now ?? Date.now;
  if (typeof now !== 'function')
    throw new TypeError('createJwtSigner: now must be a function returning milliseconds.');
  return { keys, clockToleranceSeconds, now };
}
