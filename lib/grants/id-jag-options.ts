// The enterpriseIdps option, parsed once: which identity providers' ID-JAGs the jwt-bearer grant accepts (MCP's
// Enterprise-Managed Authorization extension, SEP-990; draft-ietf-oauth-identity-assertion-authz-grant), and how
// their user is found in the host app.
import type { Request } from 'express';
import type { MaybePromise } from '../store/types';

/** RFC 7523 §2.1: the grant type that carries an ID-JAG as its assertion. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Draft §7: the profile a Resource Authorization Server lists in authorization_grant_profiles_supported. */
export const ID_JAG_PROFILE = 'urn:ietf:params:oauth:grant-profile:id-jag';

/** The verified claims of an ID-JAG (draft §3.1), as findUser receives them. */
export interface IdJagClaims {
  /** The IdP, one of `issuers`. */
  iss: string;
  /** The user at the IdP: unique with iss (and tenant, for a multi-tenant IdP), draft §3.1. */
  sub: string;
  email?: string;
  tenant?: string;
  client_id: string;
  [claim: string]: unknown;
}

/** Trusted enterprise identity providers for Enterprise-Managed Authorization (ID-JAG). */
export interface EnterpriseIdpOptions {
  /**
   * The IdPs' issuer identifiers (RFC 8414 §2, https), exactly as their ID-JAGs' `iss` spells them. Their keys come
   * from `{issuer}/.well-known/oauth-authorization-server` (or `openid-configuration`) and its `jwks_uri`, fetched
   * like clients' documents (the clientMetadataDocuments fetch settings).
   */
  issuers: readonly string[];
  /**
   * The host app's user for the ID-JAG's subject (`iss` + `sub`, or `email` if the app links accounts by it), or
   * null: the grant is then refused with invalid_grant.
   */
  findUser: (
    claims: IdJagClaims,
    req: Request,
  ) => MaybePromise<{ id: string; name?: string; email?: string } | null | undefined>;
  /** The longest lifetime (exp - iat) of an ID-JAG accepted, in seconds. Default 300; from 10 to 3600. */
  maxLifetimeSeconds?: number;
}

/** The parsed settings; undefined in the config when the option is not given (the grant is then off). */
export interface EnterpriseIdpConfig {
  issuers: readonly string[];
  findUser: EnterpriseIdpOptions['findUser'];
  maxLifetimeSeconds: number;
}

export function parseEnterpriseIdps(
  given: EnterpriseIdpOptions | undefined,
  fail: (message: string) => never,
): EnterpriseIdpConfig | undefined {
  if (given === undefined) return undefined;
  const example = "{ issuers: ['https://acme.okta.com'], findUser: (claims) => users.byEmail(claims.email) }";
  if (!given || typeof given !== 'object') fail(`enterpriseIdps must be an object, e.g. ${example}.`);
  if (!Array.isArray(given.issuers) || given.issuers.length === 0)
    fail(`enterpriseIdps.issuers must list the trusted IdPs' issuer URLs, e.g. ${example}.`);
  for (const issuer of given.issuers) {
    const problem = issuerProblem(issuer);
    if (problem) fail(`enterpriseIdps.issuers: "${String(issuer)}" ${problem}.`);
  }
  if (typeof given.findUser !== 'function')
    fail(`enterpriseIdps.findUser must be a function (claims, req) => user or null, e.g. ${example}.`);
  const maxLifetimeSeconds = given.maxLifetimeSeconds ?? 300;
  if (!Number.isInteger(maxLifetimeSeconds) || maxLifetimeSeconds < 10 || maxLifetimeSeconds > 3600)
    fail('enterpriseIdps.maxLifetimeSeconds must be a whole number of seconds from 10 to 3600.');
  return { issuers: [...new Set(given.issuers)], findUser: given.findUser, maxLifetimeSeconds };
}

/** RFC 8414 §2: an issuer identifier is an https URL with no query or fragment. */
function issuerProblem(issuer: unknown): string | undefined {
  if (typeof issuer !== 'string') return 'is not a string';
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:') return 'must use https (RFC 8414 §2; the extension §7.3)';
  if (url.search || url.hash || issuer.includes('#') || issuer.includes('?'))
    return 'must not have a query or fragment (RFC 8414 §2)';
  if (url.username || url.password) return 'must not carry credentials';
  return undefined;
}
