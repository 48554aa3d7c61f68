// private_key_jwt client authentication (RFC 7523 §2.2 and §3, OpenID Connect Core §9): the client signs a short
// JWT about itself with a key of its JWKS. Everything that could let a forged or replayed assertion pass is
// checked here: the algorithm (asymmetric only, pinned to the key's type), the key's use, iss = sub = client_id, the
// audience (one value, ours: assertionAudiences), a short expiry, and a jti never accepted twice (through the store,
// so every instance agrees).
import jwt from 'jsonwebtoken';
import { OAuthError } from '../errors';
import {
  decodeJwt,
  describeRefusal,
  findKeys,
  isAllowedAlgorithm,
  keepUntil,
  singleAudience,
  storableJti,
  verifySignature,
  type VerificationKey,
} from '../jwt/verify';
import type { ClientRecord, MaybePromise } from '../store/types';

/** RFC 7523 §2.2: the client_assertion_type of a JWT client assertion. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The signing algorithms accepted, advertised as token_endpoint_auth_signing_alg_values_supported. */
export const ASSERTION_ALGORITHMS = ['RS256', 'PS256', 'ES256'] as const;
/** The longest an assertion may live (exp minus now), skew included: it is meant for one request. */
const MAX_LIFETIME_SECONDS = 360;
const CLOCK_TOLERANCE_SECONDS = 30;

export interface AssertionChecks {
  /** The client's keys; `refetch` asks its jwks_uri again (an unknown kid: the client may have rotated). */
  keys(refetch: boolean): Promise<VerificationKey[]>;
  /** The accepted values of aud (assertionAudiences), the preferred one first: aud must be exactly one of them. */
  audiences: readonly string[];
  now: () => number;
  useAssertionId(clientId: string, jti: string, expiresAt: number): MaybePromise<boolean>;
}

/**
 * The values a client assertion's aud may take, at every endpoint that authenticates clients (token, revocation,
 * introspection), the preferred one first.
 *
 * draft-ietf-oauth-rfc7523bis-11 §4 (updating RFC 7523 §3) makes the issuer identifier (RFC 8414) the sole audience
 * of a client authentication JWT, because of audience injection (the OpenID Foundation's disclosure of January 2025,
 * CVE-2025-27370/27371): a client that puts a token endpoint URL in aud takes it from metadata, where a malicious
 * server may name ours as its own, and then sends the assertion to that server's other endpoints (revocation,
 * pushed authorization, ...), which hand it to us. The issuer cannot be borrowed that way: the client checks it
 * against the metadata's own URL (RFC 8414 §3.3). So:
 * - the issuer identifier, and for an issuer with no path its spelling with the trailing slash (the same URL,
 *   RFC 3986 §6.2.3; the MCP Python SDK sends it, and the MCP conformance suite's server accepts it too);
 * - the token endpoint URL, still, against the draft: ChatGPT, the main client of Client ID Metadata Documents with
 *   private_key_jwt, signs its assertions for the token endpoint (as RFC 7523 §3 and OpenID Connect Core §9 taught),
 *   and the MCP TypeScript SDK does too when a server publishes no metadata. Refusing it would lock them out; what it
 *   leaves open is the client's to close (draft-ietf-oauth-security-topics-update: audience injection is prevented
 *   by the client), and it is the one value kept for that reason;
 * - never the URL of the revocation or introspection endpoint (which only this server's earlier versions accepted,
 *   each at its own endpoint): no client we know sends them, and each is one more value a malicious server can name.
 */
export function assertionAudiences(issuer: string, tokenEndpoint: string): string[] {
  const slashed = new URL(issuer).pathname === '/' ? [`${issuer}/`] : [];
  return [...new Set([issuer, ...slashed, tokenEndpoint])];
}

const refuse = (description: string, cause?: unknown) =>
  // Stryker disable next-line ConditionalExpression: equivalent, OAuthError treats { cause: undefined } as no cause
  new OAuthError('invalid_client', description, cause === undefined ? {} : { cause });

/** The subject (the client_id) a client assertion claims, read without verifying it, to find the client. */
export function assertionSubject(assertion: string): string | undefined {
  // No `json: true`: with it, a payload that is not JSON throws (a 500) instead of reading as no subject (401). A
  // payload that is not an object decodes as a string, whose `sub` is never a string.
  const sub = (jwt.decode(assertion) as { sub?: unknown } | null)?.sub;
  return typeof sub === 'string' ? sub : undefined;
}

/** Verifies a client assertion for `client`, or throws invalid_client saying what is wrong with it. */
export async function verifyClientAssertion(
  assertion: string,
  client: ClientRecord,
  checks: AssertionChecks,
): Promise<void> {
  const decoded = decodeJwt(assertion);
  if (!decoded) throw refuse('The client assertion is not a JWT.');
  const { alg, kid } = decoded.header;
  // RFC 8725 §3.1: the algorithm is chosen here, never by the token; "none" and HMAC (which would take the public
  // key as a shared secret) are never accepted.
  if (!isAllowedAlgorithm(alg, ASSERTION_ALGORITHMS)) {
    throw refuse(
      `The client assertion is signed with ${String(alg).slice(0, 20)}; use ${ASSERTION_ALGORITHMS.join(', ')}.`,
    );
  }
  const candidates = await findKeys(alg, kid, checks.keys);
  if (candidates.length === 0) {
    throw refuse(
      kid === undefined
        ? `None of the client's keys can verify an ${alg} signature.`
        : `The client has no ${alg} key with kid "${String(kid).slice(0, 100)}".`,
    );
  }

  const now = checks.now();
  const nowSeconds = Math.floor(now / 1000);
  let payload: jwt.JwtPayload;
  try {
    payload = verifySignature(
      assertion,
      candidates.map((candidate) => candidate.key),
      {
        alg,
        now,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        issuer: client.clientId,
        subject: client.clientId,
      },
    );
  } catch (failure) {
    const why = describeRefusal(failure, {
      signature: 'its signature does not match any of the client keys',
      issuer: 'its iss must be the client_id',
      subject: 'its sub must be the client_id',
    });
    throw refuse(`The client assertion was refused: ${why}.`, failure);
  }

  // draft-ietf-oauth-rfc7523bis-11 §4: one audience, ours. An array is refused unless it holds a single value: with
  // several, a JWT is accepted by any server that finds itself among them (RFC 7519 §4.1.3), the very ambiguity the
  // draft closes, even when every value names this server.
  const audience = singleAudience(payload.aud);
  if (audience === undefined || !checks.audiences.includes(audience)) {
    throw refuse(
      `The client assertion was refused: its aud must be the issuer, ${JSON.stringify(checks.audiences[0])}, ` +
        'as its only value.',
    );
  }
  // RFC 7523 §3: exp is required; a long-lived assertion would be a bearer credential in all but name.
  if (typeof payload.exp !== 'number') throw refuse('The client assertion has no exp claim.');
  if (payload.exp > nowSeconds + MAX_LIFETIME_SECONDS) {
    throw refuse(
      `The client assertion lives too long: its exp must be within ${MAX_LIFETIME_SECONDS} seconds.`,
    );
  }
  const jti = storableJti(payload.jti);
  if (jti === undefined)
    throw refuse('The client assertion needs a jti claim: a unique id for each assertion.');
  const expiresAt = keepUntil(payload.exp, CLOCK_TOLERANCE_SECONDS);
  if (!(await checks.useAssertionId(client.clientId, jti, expiresAt))) {
    throw refuse('The client assertion was already used; make a new one, with a new jti, for every request.');
  }
}
