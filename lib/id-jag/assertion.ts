// Verifying an Identity Assertion JWT Authorization Grant (ID-JAG): draft-ietf-oauth-identity-assertion-authz-grant
// §3.1 (claims) and §4.4.1 (processing rules), RFC 7523 §3 and RFC 7521 §5.2, as MCP's Enterprise-Managed
// Authorization extension (SEP-990) §5.1, §7.4 and §7.6 profiles them. Every failure is invalid_grant (RFC 7523
// §3.1). Single use (the jti) is the caller's last step, once nothing else can refuse the request.
import type jwt from 'jsonwebtoken';
import { ASSERTION_ALGORITHMS } from '../clients/assertion';
import { OAuthError } from '../errors';
import {
  decodeJwt,
  describeRefusal,
  findKeys,
  hasType,
  isAllowedAlgorithm,
  keepUntil,
  singleAudience,
  storableJti,
  verifySignature,
  type VerificationKey,
} from '../jwt/verify';

/** The extension §7.4.2: "accounting for minimal clock skew". */
const ID_JAG_CLOCK_TOLERANCE_SECONDS = 30;
const TYP = 'oauth-id-jag+jwt';

export interface IdJagChecks {
  /** The trusted issuers (enterpriseIdps.issuers). */
  issuers: readonly string[];
  /** An issuer's keys; `refetch` asks its jwks_uri again (an unknown kid: the IdP may have rotated). */
  keys(issuer: string, refetch: boolean): Promise<VerificationKey[]>;
  /** Our issuer identifier: the only accepted aud. */
  audience: string;
  /** The authenticated client's id: the ID-JAG's client_id must be it. */
  clientId: string;
  maxLifetimeSeconds: number;
  now: () => number;
}

/** What the grant needs of a verified ID-JAG. */
export interface VerifiedIdJag {
  claims: jwt.JwtPayload & {
    iss: string;
    sub: string;
    jti: string;
    exp: number;
    iat: number;
    client_id: string;
  };
  /** When the jti may be forgotten: the last moment the ID-JAG could still be accepted. */
  replayUntil: number;
}

const refuse = (description: string, cause?: unknown) =>
  new OAuthError(
    'invalid_grant',
    `The ID-JAG was refused: ${description}.`,
    cause === undefined ? {} : { cause },
  );

/**
 * The key under which an ID-JAG's jti is recorded with OAuthStore.useAssertionId: per issuer (RFC 7519 §4.1.7: a jti
 * is unique for its issuer; the extension §7.4.2: replay scoped by iss). The space cannot occur in a client_id
 * (registered ids are base64url, document ids URLs), so it never meets a client assertion's record.
 */
export const idJagReplayKey = (issuer: string) => `id-jag ${issuer}`;

export async function verifyIdJag(assertion: string, checks: IdJagChecks): Promise<VerifiedIdJag> {
  const decoded = decodeJwt(assertion);
  if (!decoded) throw refuse('it is not a JWT');
  const { alg, kid, typ } = decoded.header;
  // Draft §4.4.1 and §3.1, RFC 8725 §3.11: explicitly typed, so that an ID token or another JWT of the same IdP
  // cannot be passed off as a grant.
  if (!hasType(typ, TYP)) throw refuse(`its typ header must be ${TYP}`);
  // The extension §7.4.1: an explicit allow-list, never "none"; RFC 8725 §3.1: no HMAC either (a public key is no
  // shared secret).
  if (!isAllowedAlgorithm(alg, ASSERTION_ALGORITHMS))
    throw refuse(`it is signed with ${String(alg).slice(0, 20)}; use ${ASSERTION_ALGORITHMS.join(', ')}`);
  // The extension §7.4.1, RFC 7523 §3 item 1: only a trusted IdP's grants, and no fetch for any other issuer.
  const issuer = decoded.payload.iss;
  if (typeof issuer !== 'string' || !checks.issuers.includes(issuer))
    throw refuse('its issuer is not a trusted identity provider');

  // The extension §7.4.1: a kid the IdP has just rotated in is looked for once more, at most once per interval.
  const candidates = await findKeys(alg, kid, (refetch) => checks.keys(issuer, refetch));
  if (candidates.length === 0)
    throw refuse(
      kid === undefined
        ? `no key of the identity provider can verify an ${alg} signature`
        : `the identity provider has no ${alg} key with kid "${String(kid).slice(0, 100)}"`,
    );
  const now = checks.now();
  const nowSeconds = Math.floor(now / 1000);
  let payload: jwt.JwtPayload;
  try {
    // RFC 7523 §3 items 4, 5 and 9: the signature, exp and nbf (with the tolerance).
    payload = verifySignature(
      assertion,
      candidates.map((candidate) => candidate.key),
      { alg, now, clockTolerance: ID_JAG_CLOCK_TOLERANCE_SECONDS },
    );
  } catch (failure) {
    throw refuse(
      describeRefusal(failure, { signature: "its signature does not match the identity provider's keys" }),
      failure,
    );
  }

  // Draft §4.4.1: aud is our issuer identifier, a string or an array of exactly that one value (audience injection).
  if (!audienceMatches(singleAudience(payload.aud), checks.audience))
    throw refuse(
      `its aud must be this server's issuer, ${JSON.stringify(checks.audience)}, as its only value`,
    );
  // Draft §3.1: the required claims.
  const { sub, exp, iat, client_id: clientId } = payload;
  if (typeof sub !== 'string' || !sub) throw refuse('it has no sub claim');
  const jti = storableJti(payload.jti);
  if (jti === undefined) throw refuse('it needs a jti claim');
  if (typeof exp !== 'number') throw refuse('it has no exp claim');
  if (typeof iat !== 'number') throw refuse('it has no iat claim');
  // RFC 7519 §4.1.6; the extension §7.4.2: rejected outside its validity window, which starts at iat.
  if (iat > nowSeconds + ID_JAG_CLOCK_TOLERANCE_SECONDS) throw refuse('its iat is in the future');
  // The extension §7.4.2: ID-JAGs MUST be short-lived.
  if (exp - iat > checks.maxLifetimeSeconds)
    throw refuse(`it lives too long: exp must be within ${checks.maxLifetimeSeconds} seconds of iat`);
  // Draft §4.4.1: the client continuity rule: the grant was issued for the client that presents it.
  if (clientId !== checks.clientId) throw refuse('its client_id is not the authenticated client');
  return {
    claims: { ...payload, iss: issuer, sub, jti, exp, iat, client_id: clientId },
    replayUntil: keepUntil(exp, ID_JAG_CLOCK_TOLERANCE_SECONDS),
  };
}

/** Our issuer, or for an issuer with no path its spelling with the trailing slash (the same URL, RFC 3986 §6.2.3). */
function audienceMatches(audience: string | undefined, issuer: string): boolean {
  if (audience === undefined) return false;
  return audience === issuer || (audience === `${issuer}/` && new URL(issuer).pathname === '/');
}
