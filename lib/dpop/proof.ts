// DPoP proofs (RFC 9449 §4): every check of §4.3 on the proof a client sends with a token request or with a DPoP-bound
// access token. A proof passes only if all of them do; the error says which one failed (invalid_dpop_proof, §5).
import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type jwt from 'jsonwebtoken';
import { OAuthError } from '../errors';
import {
  decodeJwt,
  hasType,
  isAllowedAlgorithm,
  keepUntil as keepUntilMs,
  MAX_JTI_LENGTH,
  storableJti,
  verifySignature,
} from '../jwt/verify';
import type { MaybePromise } from '../store/types';
import type { DpopNonces } from './nonce';
import { jwkThumbprint } from './thumbprint';

/** The proof algorithms accepted (asymmetric only, §4.3 item 5), advertised as dpop_signing_alg_values_supported. */
export const DPOP_ALGORITHMS = ['ES256', 'RS256', 'PS256'] as const;
/** How old a proof may be (§4.3 item 11, §11.1): it is made for one request, and its jti is kept that long. */
const MAX_PROOF_AGE_SECONDS = 300;
/** How far ahead of this server's clock a client's may be. */
const CLOCK_AHEAD_SECONDS = 60;
const MAX_PROOF_LENGTH = 8192;
const MIN_RSA_BITS = 2048;
/**
 * Verifying with an RSA key costs with its modulus and exponent, and a proof's key is anyone's choice: beyond these,
 * a key is refused before its signature is checked, so that a made-up key cannot cost a hundred times a real one.
 */
const MAX_RSA_BITS = 4096;
const RSA_EXPONENT = 65537n;
/** Members of a private JWK (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2): a proof's key must have none (item 7). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** What the proof must match: the request it came with. */
export interface DpopExpectations {
  /** The request's method (htm, item 8). */
  method: string;
  /** The request's URL as this server publishes it, without query or fragment (htu, item 9). */
  url: string;
  /** Milliseconds since the epoch. */
  now: number;
  /** At a protected resource: the access token, whose hash the proof's ath must be (item 12). */
  accessToken?: string;
  /** The nonces this server gives clients, when it asks for one (§8, item 10). */
  nonces?: DpopNonces;
  /**
   * Records a proof's jti for its key until `expiresAt`; false if it was recorded before (§11.1). Through the store,
   * so that no instance accepts a proof another one has seen.
   */
  useJti(jkt: string, jti: string, expiresAt: number): MaybePromise<boolean>;
}

/** A proof that passed: the thumbprint of its key (what a token is bound to, §6.1) and its jti. */
export interface DpopProof {
  jkt: string;
  jti: string;
}

/** A proof that passed every check of §4.3, its jti not yet recorded (§11.1), and until when to keep that jti. */
export interface CheckedDpopProof extends DpopProof {
  /** Milliseconds since the epoch: after this the proof is too old anyway, so its jti need not be kept. */
  keepUntil: number;
}

const invalid = (description: string) => new OAuthError('invalid_dpop_proof', description);

/** SHA-256 of an access token, base64url: a proof's ath (§4.2). */
export const accessTokenHash = (token: string): string =>
  createHash('sha256').update(token).digest('base64url');

/**
 * The proof from a request's DPoP header: exactly one (item 1). Node joins repeated headers with ", ", which a JWT
 * (three base64url parts) never holds. Undefined when there is none.
 */
export function readDpopHeader(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value) || value.includes(',')) throw invalid('Send exactly one DPoP header.');
  return value;
}

/** The public key of a proof's header, checked against its algorithm (items 5 to 7). */
function proofKey(alg: string, jwk: unknown): { key: KeyObject; jwk: Record<string, unknown> } {
  if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk))
    throw invalid('The DPoP proof has no jwk header.');
  const fields = jwk as Record<string, unknown>;
  if (PRIVATE_MEMBERS.some((name) => name in fields))
    throw invalid('The DPoP proof’s jwk holds a private key; send the public key only.');
  const fits = alg === 'ES256' ? fields.kty === 'EC' && fields.crv === 'P-256' : fields.kty === 'RSA';
  if (!fits) throw invalid(`The DPoP proof’s jwk is not a key for ${alg}.`);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: fields as JsonWebKey, format: 'jwk' });
  } catch {
    throw invalid('The DPoP proof’s jwk is not a valid public key.');
  }
  if (fields.kty === 'RSA') {
    // Stryker disable next-line OptionalChaining: equivalent, every RSA KeyObject has its asymmetricKeyDetails
    const { modulusLength = 0, publicExponent } = key.asymmetricKeyDetails ?? {};
    if (modulusLength < MIN_RSA_BITS || modulusLength > MAX_RSA_BITS || publicExponent !== RSA_EXPONENT)
      throw invalid(
        `The DPoP proof’s RSA key must have ${MIN_RSA_BITS} to ${MAX_RSA_BITS} bits and the exponent 65537.`,
      );
  }
  return { key, jwk: fields };
}

/** htu and the request's URL name the same resource: compared as URLs (scheme and host case, default port). */
function sameUrl(htu: string, expected: string): boolean {
  if (!URL.canParse(htu)) return false;
  const a = new URL(htu);
  const b = new URL(expected);
  return a.origin === b.origin && a.pathname === b.pathname;
}

/** Verifies a DPoP proof for a request, or throws invalid_dpop_proof (use_dpop_nonce for a missing nonce). */
export async function verifyDpopProof(proof: string, expected: DpopExpectations): Promise<DpopProof> {
  const checked = checkDpopProof(proof, expected);
  await useDpopProof(checked, expected.useJti);
  return { jkt: checked.jkt, jti: checked.jti };
}

/**
 * Every check of §4.3, without the replay check of §11.1: nothing is recorded, so the caller must still call
 * useDpopProof before it answers. For the token endpoint, which records the jti only once the grant is known good.
 */
export function checkDpopProof(proof: string, expected: Omit<DpopExpectations, 'useJti'>): CheckedDpopProof {
  // Item 2: a well-formed JWT, and no more than a proof needs.
  // Stryker disable next-line Regex: equivalent, jsonwebtoken refuses to decode what the anchors keep out
  if (proof.length > MAX_PROOF_LENGTH || !/^[\w-]+\.[\w-]+\.[\w-]+$/.test(proof))
    throw invalid('The DPoP proof is not a JWT.');
  const decoded = decodeJwt(proof);
  if (!decoded) throw invalid('The DPoP proof is not a JWT.');
  const { typ, alg, jwk } = decoded.header;
  // Item 4: typ tells a proof from any other JWT signed with the same key; §4.2 gives it one spelling.
  if (!hasType(typ, 'dpop+jwt', { exact: true })) throw invalid('The DPoP proof’s typ must be dpop+jwt.');
  // Item 5 (RFC 8725 §3.1): the algorithm is chosen here; never none, never HMAC.
  if (!isAllowedAlgorithm(alg, DPOP_ALGORITHMS))
    throw invalid(
      `The DPoP proof is signed with ${String(alg).slice(0, 20)}; use ${DPOP_ALGORITHMS.join(', ')}.`,
    );
  const { key, jwk: publicJwk } = proofKey(alg, jwk);
  const nowSeconds = Math.floor(expected.now / 1000);
  let payload: jwt.JwtPayload;
  try {
    // Item 6. exp and nbf are not DPoP claims; a proof that has them must still honour them.
    payload = verifySignature(proof, [key], { alg, now: expected.now });
  } catch {
    throw invalid('The DPoP proof’s signature does not verify with its jwk.');
  }
  // Item 3: the claims every proof has.
  const { htm, htu, iat } = payload;
  // The jti is stored (§11.1): no control character, which a store may refuse (PostgreSQL refuses NUL).
  const jti = storableJti(payload.jti);
  if (jti === undefined)
    throw invalid(
      `The DPoP proof needs a jti of 1 to ${MAX_JTI_LENGTH} characters, none a control character.`,
    );
  if (htm !== expected.method) throw invalid(`The DPoP proof’s htm must be ${expected.method}.`);
  // Stryker disable next-line ConditionalExpression: equivalent, sameUrl refuses what is not a URL string
  if (typeof htu !== 'string' || !sameUrl(htu, expected.url))
    throw invalid(`The DPoP proof’s htu must be ${expected.url}.`);
  // Item 11: made just now (a stolen proof is worth one request, for a few minutes at most).
  if (
    typeof iat !== 'number' ||
    iat < nowSeconds - MAX_PROOF_AGE_SECONDS ||
    iat > nowSeconds + CLOCK_AHEAD_SECONDS
  )
    throw invalid('The DPoP proof’s iat is not within a few minutes of this server’s clock.');
  // Item 10: the server's nonce, when it asked for one (§8).
  if (expected.nonces !== undefined && !expected.nonces.accepts(payload.nonce)) {
    throw new OAuthError('use_dpop_nonce', 'Send the DPoP proof with the nonce in the DPoP-Nonce header.', {
      headers: { 'DPoP-Nonce': expected.nonces.current() },
    });
  }
  // Item 12: at a protected resource, the proof is for this very access token.
  if (expected.accessToken !== undefined && payload.ath !== accessTokenHash(expected.accessToken))
    throw invalid('The DPoP proof’s ath is not the hash of the access token it came with.');
  const keepUntil = keepUntilMs(iat, MAX_PROOF_AGE_SECONDS + CLOCK_AHEAD_SECONDS);
  return { jkt: jwkThumbprint(publicJwk), jti, keepUntil };
}

/** Records a checked proof's jti for its key, or throws invalid_dpop_proof for one used before (§11.1). */
export async function useDpopProof(
  { jkt, jti, keepUntil }: CheckedDpopProof,
  useJti: DpopExpectations['useJti'],
): Promise<void> {
  // §11.1: one proof, one request.
  if (!(await useJti(jkt, jti, keepUntil)))
    throw invalid('This DPoP proof was used before; make a new one for each request.');
}
