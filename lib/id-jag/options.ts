// The enterpriseIdps option, parsed once: which identity providers' ID-JAGs the jwt-bearer grant accepts (MCP's
// Enterprise-Managed Authorization extension, SEP-990; draft-ietf-oauth-identity-assertion-authz-grant), and how
// their user is found in the host app.
import type { Request } from 'express';
import type { MaybePromise } from '../store/types';
import { issuerUrlProblem } from '../util/issuer-url';

/** RFC 7523 §2.1: the grant type that carries an ID-JAG as its assertion. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Draft §7: the profile a Resource Authorization Server lists in authorization_grant_profiles_supported. */
export const ID_JAG_PROFILE = 'urn:ietf:params:oauth:grant-profile:id-jag';

/** The verified claims of an ID-JAG (draft §3.1), as findLinkedUser and findUser receive them. */
export interface IdJagClaims {
  /** The IdP, one of `issuers`. */
  iss: string;
  /** The user at the IdP: unique with iss (and tenant, for a multi-tenant IdP), draft §3.1. */
  sub: string;
  /**
   * An address the user's IdP account holds. Unverified unless `email_verified` is the boolean true: at many IdPs a
   * user or a tenant administrator can set it to anything, including another person's address.
   */
  email?: string;
  /** OpenID Connect Core §5.1: true only when the IdP checked that the user controls `email`. */
  email_verified?: unknown;
  tenant?: string;
  client_id: string;
  [claim: string]: unknown;
}

/** A user of the host app, as the ID-JAG's lookups return one. */
export interface IdJagUser {
  id: string;
  name?: string;
  email?: string;
}

/** A trusted IdP with the email domains it speaks for. */
export interface EnterpriseIdp {
  /** Its issuer identifier (RFC 8414 §2, https), exactly as its ID-JAGs' `iss` spells it. */
  issuer: string;
  /**
   * The email domains whose users this IdP may name (`['example.com', 'example.org']`), compared exactly and without
   * case: an ID-JAG naming an address elsewhere is refused. Without it, any verified address.
   */
  emailDomains?: readonly string[];
}

/** Trusted enterprise identity providers for Enterprise-Managed Authorization (ID-JAG). */
export interface EnterpriseIdpOptions {
  /**
   * The IdPs, by issuer identifier (RFC 8414 §2, https, exactly as their ID-JAGs' `iss` spells it) or with the email
   * domains they speak for. Their keys come from `{issuer}/.well-known/oauth-authorization-server` (or
   * `openid-configuration`) and its `jwks_uri`, fetched like clients' documents (the clientMetadataDocuments fetch
   * settings).
   */
  issuers: readonly (string | EnterpriseIdp)[];
  /**
   * The user the host app has linked to this IdP account (`iss` + `sub`, and `tenant` for a multi-tenant IdP), or
   * null. Asked first: a link, made when the user connected the account, names the user whatever the email says.
   */
  findLinkedUser?: (
    subject: { iss: string; sub: string; tenant?: string },
    req: Request,
  ) => MaybePromise<IdJagUser | null | undefined>;
  /**
   * The host app's user with the ID-JAG's `email`, or null; asked when no link names a user. An ID-JAG's `email` is
   * unverified unless `email_verified` is true, so this is asked only for an address that its IdP verified
   * (`email_verified` the boolean true), within the IdP's `emailDomains`, and that Unicode normalisation leaves as it
   * is; compare it with `emailKey` (NFKC, lower case) on both sides, never with a database's lower(). Any other
   * ID-JAG without a link is refused with invalid_grant.
   */
  findUser?: (claims: IdJagClaims, req: Request) => MaybePromise<IdJagUser | null | undefined>;
  /** The longest lifetime (exp - iat) of an ID-JAG accepted, in seconds. Default 300; from 10 to 3600. */
  maxLifetimeSeconds?: number;
}

/** The parsed settings; undefined in the config when the option is not given (the grant is then off). */
export interface EnterpriseIdpConfig {
  issuers: readonly string[];
  /** Each issuer's email domains, lower case; an issuer absent here may name any verified address. */
  emailDomains: ReadonlyMap<string, ReadonlySet<string>>;
  findLinkedUser: EnterpriseIdpOptions['findLinkedUser'];
  findUser: EnterpriseIdpOptions['findUser'];
  maxLifetimeSeconds: number;
}

export function parseEnterpriseIdps(
  given: EnterpriseIdpOptions | undefined,
  fail: (message: string) => never,
): EnterpriseIdpConfig | undefined {
  if (given === undefined) return undefined;
  const example =
    "{ issuers: [{ issuer: 'https://acme.okta.com', emailDomains: ['acme.com'] }], findUser: (claims) => " +
    'users.byEmailKey(emailKey(claims.email)) }';
  if (!given || typeof given !== 'object') fail(`enterpriseIdps must be an object, e.g. ${example}.`);
  if (!Array.isArray(given.issuers) || given.issuers.length === 0)
    fail(`enterpriseIdps.issuers must list the trusted IdPs' issuer URLs, e.g. ${example}.`);
  const issuers: string[] = [];
  const emailDomains = new Map<string, ReadonlySet<string>>();
  for (const entry of given.issuers) {
    const { issuer, emailDomains: domains } = typeof entry === 'string' ? { issuer: entry } : (entry ?? {});
    const problem = issuerUrlProblem(issuer);
    if (problem) fail(`enterpriseIdps.issuers: "${String(issuer)}" ${problem}.`);
    if (issuers.includes(issuer)) fail(`enterpriseIdps.issuers: "${issuer}" is listed twice; list it once.`);
    issuers.push(issuer);
    if (domains !== undefined) emailDomains.set(issuer, parseDomains(issuer, domains, fail));
  }
  for (const name of ['findLinkedUser', 'findUser'] as const)
    if (given[name] !== undefined && typeof given[name] !== 'function')
      fail(`enterpriseIdps.${name} must be a function, e.g. ${example}.`);
  if (!given.findUser && !given.findLinkedUser)
    fail(
      'enterpriseIdps needs findUser(claims) (a user by verified email) or findLinkedUser({ iss, sub }) (a user ' +
        `linked to the IdP account), or both, e.g. ${example}.`,
    );
  const maxLifetimeSeconds = given.maxLifetimeSeconds ?? 300;
  if (!Number.isInteger(maxLifetimeSeconds) || maxLifetimeSeconds < 10 || maxLifetimeSeconds > 3600)
    fail('enterpriseIdps.maxLifetimeSeconds must be a whole number of seconds from 10 to 3600.');
  return {
    issuers,
    emailDomains,
    findLinkedUser: given.findLinkedUser,
    findUser: given.findUser,
    maxLifetimeSeconds,
  };
}

/** RFC 1035 §2.3.1 and RFC 5890: a host name of letters, digits and hyphens (A-labels for other scripts). */
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

function parseDomains(issuer: string, given: unknown, fail: (message: string) => never): ReadonlySet<string> {
  const where = `enterpriseIdps.issuers: "${issuer}"`;
  if (!Array.isArray(given) || given.length === 0)
    fail(`${where}: emailDomains must list domains, e.g. ['example.com']; leave it out to allow any.`);
  const domains = new Set<string>();
  for (const domain of given) {
    if (typeof domain !== 'string' || !DOMAIN.test(domain.toLowerCase()))
      fail(
        `${where}: emailDomains holds "${String(domain)}", which is not a domain; write it as in an address ` +
          "after the @ (example.com; an IDN as its xn-- form), with no '@' or wildcard.",
      );
    domains.add(domain.toLowerCase());
  }
  return domains;
}
