// The steps every JWT from outside goes through (RFC 7519, RFC 8725), whatever it is: a client assertion
// (clients/assertion.ts), an ID-JAG (id-jag/assertion.ts), a DPoP proof (dpop/proof.ts). Each caller keeps its own
// claim rules and words; the decoding, the type and algorithm checks, the choice of keys, the signature with the clock
// and its tolerance, and the jti are done once, here. jsonwebtoken verifies.
import type { KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { containsControlCharacter } from '../util/params';

/** The longest jti kept (every kind's jti is stored for replay detection). */
export const MAX_JTI_LENGTH = 256;

/** A public key that may verify a JWT, as read from a JWKS (a client's jwks or jwks_uri, an IdP's jwks_uri). */
export interface VerificationKey {
  kid: string | undefined;
  kty: string;
  crv: string | undefined;
  alg: string | undefined;
  use: string | undefined;
  key: KeyObject;
}

/** A JWS, decoded without verifying: its header and its claims (an object). */
export interface DecodedJwt {
  header: jwt.JwtHeader & Record<string, unknown>;
  payload: jwt.JwtPayload;
}

/** The header and claims of a compact JWS whose payload is a JSON object, or undefined for anything else. */
export function decodeJwt(token: string): DecodedJwt | undefined {
  // No `json: true`: with it, a payload that is not JSON throws instead of reading as no JWT.
  const decoded = jwt.decode(token, { complete: true });
  if (!decoded || typeof decoded.payload === 'string') return undefined;
  return { header: decoded.header as DecodedJwt['header'], payload: decoded.payload };
}

/**
 * RFC 8725 §3.11: an explicitly typed JWT. RFC 7515 §4.1.9 lets a media type be compared without case and with
 * "application/" left out; `exact` keeps to the one spelling a specification demands (RFC 9449 §4.2: dpop+jwt).
 */
export function hasType(typ: unknown, expected: string, { exact = false } = {}): boolean {
  if (exact) return typ === expected;
  return typeof typ === 'string' && typ.toLowerCase().replace(/^application\//, '') === expected;
}

/**
 * RFC 8725 §3.1: the algorithm is chosen by the verifier, from its own list, never by the token: never "none", never
 * HMAC (which would take a public key for a shared secret).
 */
export const isAllowedAlgorithm = <T extends string>(alg: unknown, allowed: readonly T[]): alg is T =>
  (allowed as readonly unknown[]).includes(alg);

/** Which keys could have signed with `alg` (its key type and curve, use sig, the kid when the token names one). */
export function keysFor(alg: string, kid: string | undefined, keys: VerificationKey[]): VerificationKey[] {
  return keys.filter(
    (key) =>
      (kid === undefined || key.kid === kid) &&
      (key.use === undefined || key.use === 'sig') &&
      (key.alg === undefined || key.alg === alg) &&
      (alg === 'ES256' ? key.kty === 'EC' && key.crv === 'P-256' : key.kty === 'RSA'),
  );
}

/**
 * The keys that fit `alg` and `kid`; when none does, the key set once more with `refetch` (the signer may have just
 * rotated a key in; the caches of outbound/ refetch a URL at most once per interval, so a stranger's unknown kid
 * cannot make us fetch at will).
 */
export async function findKeys(
  alg: string,
  kid: string | undefined,
  load: (refetch: boolean) => Promise<VerificationKey[]>,
): Promise<VerificationKey[]> {
  const candidates = keysFor(alg, kid, await load(false));
  return candidates.length > 0 ? candidates : keysFor(alg, kid, await load(true));
}

/** What jsonwebtoken checks besides the signature: the clock and, when given, iss, sub and aud. */
export interface SignatureChecks {
  alg: string;
  /** Milliseconds since the epoch. */
  now: number;
  /** Seconds of skew allowed on exp and nbf. */
  clockTolerance?: number;
  issuer?: string;
  subject?: string;
  audience?: string;
}

/**
 * Verifies a JWT with the first of `keys` that accepts it (several may fit its alg and kid, or it names no kid), with
 * the one algorithm already allowed; throws jsonwebtoken's refusal of the last key when none does (an Error when
 * there is none).
 */
export function verifySignature(
  token: string,
  keys: readonly KeyObject[],
  { alg, now, clockTolerance, issuer, subject, audience }: SignatureChecks,
): jwt.JwtPayload {
  // jsonwebtoken skips a check whose option is undefined (and takes no tolerance as 0).
  const options: jwt.VerifyOptions = {
    algorithms: [alg as jwt.Algorithm],
    clockTimestamp: Math.floor(now / 1000),
    clockTolerance,
    issuer,
    subject,
    audience,
  };
  let failure: unknown;
  for (const key of keys) {
    try {
      return jwt.verify(token, key, options) as jwt.JwtPayload;
    } catch (error) {
      failure = error;
    }
  }
  throw failure ?? new Error('there is no key to verify it with');
}

/** Why jsonwebtoken refused a JWT, in words for a client; `signature` says whose keys it did not match. */
export function describeRefusal(
  error: unknown,
  words: { signature: string; issuer?: string; subject?: string },
): string {
  if (error instanceof jwt.TokenExpiredError) return 'it has expired';
  if (error instanceof jwt.NotBeforeError) return 'it is not valid yet';
  const message = error instanceof Error ? error.message : String(error);
  if (words.issuer !== undefined && /issuer/.test(message)) return words.issuer;
  if (words.subject !== undefined && /subject/.test(message)) return words.subject;
  if (/signature/.test(message)) return words.signature;
  return message.slice(0, 200);
}

/**
 * RFC 7519 §4.1.3 as draft-ietf-oauth-rfc7523bis §4 and the ID-JAG draft §4.4.1 profile it: a string, or an array of
 * exactly one value (with several, any server among them would accept the JWT: audience injection). Undefined
 * otherwise.
 */
export function singleAudience(aud: unknown): string | undefined {
  const value = Array.isArray(aud) && aud.length === 1 ? aud[0] : aud;
  return typeof value === 'string' ? value : undefined;
}

/**
 * A jti that can be kept for replay detection: a non-empty string of at most MAX_JTI_LENGTH characters, none a
 * control character (which a store may refuse: PostgreSQL refuses NUL). Undefined otherwise.
 */
export function storableJti(jti: unknown): string | undefined {
  return typeof jti === 'string' &&
    jti !== '' &&
    jti.length <= MAX_JTI_LENGTH &&
    !containsControlCharacter(jti)
    ? jti
    : undefined;
}

/** RFC 7519 §2: a NumericDate (seconds, perhaps with a fraction) plus a skew, as whole milliseconds for a store. */
export const keepUntil = (seconds: number, skewSeconds: number): number =>
  Math.ceil((seconds + skewSeconds) * 1000);
