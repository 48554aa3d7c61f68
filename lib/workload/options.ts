// The workloadIdentity option, parsed once: Workload Identity Federation (MCP's extension, SEP-1933, draft). Which
// platforms' JWTs (a Kubernetes service-account token, a cloud workload identity) the jwt-bearer grant accepts with
// no client authentication, and the rules that map a workload to the machine client it acts as, with its scopes.
import { issuerUrlProblem } from '../util/issuer-url';

/** A workload the operator trusts: one subject of one issuer, acting as one operator client. */
interface WorkloadRule {
  /** Its platform's issuer identifier, one of `issuers`, exactly as its JWTs' `iss` spells it. */
  issuer: string;
  /**
   * Its `sub`, compared exactly (`system:serviceaccount:billing:exporter` for a Kubernetes service account). No
   * patterns: a wildcard would let any workload of the platform that can be named so in.
   */
  subject: string;
  /**
   * The client it acts as: one the operator registered (registerOperatorClient) with the client_credentials grant.
   * Its tokens are that client's (`sub` and `client_id` its id), as with client credentials, and need no secret.
   */
  clientId: string;
  /** The scopes it may get, at most (within the client's). Default: the client's. */
  scopes?: readonly string[];
  /**
   * Further claims its JWT must carry with exactly these string values (a tenant, a namespace, a cluster name), for
   * a platform whose one issuer serves several tenants (SEP-1933, "Multi-Tenancy Considerations").
   */
  claims?: Readonly<Record<string, string>>;
}

/** Workload Identity Federation (SEP-1933): workloads' platform JWTs as jwt-bearer grants, without a client secret. */
export interface WorkloadIdentityOptions {
  /**
   * The platforms' issuer identifiers (https, no query or fragment). Their keys come from
   * `{issuer}/.well-known/oauth-authorization-server` (or `openid-configuration`) and its `jwks_uri`, fetched like
   * enterprise IdPs' (the clientMetadataDocuments fetch settings).
   */
  issuers: readonly string[];
  /** The workloads that may get tokens; every other one is refused with invalid_grant. */
  workloads: readonly WorkloadRule[];
  /**
   * The longest lifetime (exp - iat) of a workload JWT accepted, in seconds. Default 3600 (a Kubernetes projected
   * token's); from 10 to 86400. SEP-1933 asks for the shortest the platform allows.
   */
  maxLifetimeSeconds?: number;
}

/** A rule, parsed. */
export interface ParsedWorkloadRule {
  issuer: string;
  subject: string;
  clientId: string;
  /** Undefined: the client's scope. */
  scopes: readonly string[] | undefined;
  claims: Readonly<Record<string, string>>;
}

/** The parsed settings; undefined in the config when the option is not given. */
export interface WorkloadIdentityConfig {
  issuers: readonly string[];
  /** The rules by issuer, then by subject. */
  rules: ReadonlyMap<string, ReadonlyMap<string, ParsedWorkloadRule>>;
  maxLifetimeSeconds: number;
}

const EXAMPLE =
  "{ issuers: ['https://oidc.eks.eu-west-1.amazonaws.com/id/ABC'], workloads: [{ issuer: 'https://oidc.eks.eu-west-1" +
  ".amazonaws.com/id/ABC', subject: 'system:serviceaccount:billing:exporter', clientId: exporter.clientId }] }";

export function parseWorkloadIdentity(
  given: WorkloadIdentityOptions | undefined,
  ownIssuer: string,
  scopeNames: ReadonlySet<string>,
  fail: (message: string) => never,
): WorkloadIdentityConfig | undefined {
  if (given === undefined) return undefined;
  if (!given || typeof given !== 'object') fail(`workloadIdentity must be an object, e.g. ${EXAMPLE}.`);
  if (!Array.isArray(given.issuers) || given.issuers.length === 0)
    fail(`workloadIdentity.issuers must list the platforms' issuer URLs, e.g. ${EXAMPLE}.`);
  const issuers: string[] = [];
  for (const issuer of given.issuers) {
    const problem = issuerUrlProblem(issuer);
    if (problem) fail(`workloadIdentity.issuers: "${String(issuer)}" ${problem}.`);
    if (issuer === ownIssuer)
      fail('workloadIdentity.issuers names this server itself: its own tokens are exchanged, not federated.');
    if (issuers.includes(issuer))
      fail(`workloadIdentity.issuers: "${issuer}" is listed twice; list it once.`);
    issuers.push(issuer);
  }
  if (!Array.isArray(given.workloads) || given.workloads.length === 0)
    fail(`workloadIdentity.workloads must list the workloads that may get tokens, e.g. ${EXAMPLE}.`);
  const rules = new Map<string, Map<string, ParsedWorkloadRule>>();
  given.workloads.forEach((rule, index) => {
    const where = `workloadIdentity.workloads[${index}]`;
    if (!rule || typeof rule !== 'object') fail(`${where} must be an object, e.g. ${EXAMPLE}.`);
    const { issuer, subject, clientId, scopes, claims } = rule;
    if (!issuers.includes(issuer)) fail(`${where}.issuer must be one of workloadIdentity.issuers.`);
    if (typeof subject !== 'string' || !subject || /[*?]/.test(subject))
      fail(`${where}.subject must be the workload's exact sub, with no wildcard.`);
    if (typeof clientId !== 'string' || !clientId)
      fail(`${where}.clientId must name the operator client the workload acts as (registerOperatorClient).`);
    if (
      scopes !== undefined &&
      (!Array.isArray(scopes) || scopes.length === 0 || scopes.some((scope) => !scopeNames.has(scope)))
    )
      fail(`${where}.scopes must list scopes of the catalogue (leave it out for the client's).`);
    if (
      claims !== undefined &&
      (!claims ||
        typeof claims !== 'object' ||
        Array.isArray(claims) ||
        Object.values(claims).some((value) => typeof value !== 'string') ||
        Object.keys(claims).some((name) => ['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti'].includes(name)))
    )
      fail(
        `${where}.claims must map other claim names to exact string values, e.g. { namespace: 'billing' }.`,
      );
    const bySubject = rules.get(issuer) ?? new Map<string, ParsedWorkloadRule>();
    if (bySubject.has(subject))
      fail(`${where}: ${issuer} ${subject} has a rule already; give each workload one.`);
    bySubject.set(subject, {
      issuer,
      subject,
      clientId,
      scopes: scopes === undefined ? undefined : Object.freeze([...scopes]),
      claims: Object.freeze({ ...(claims ?? {}) }),
    });
    rules.set(issuer, bySubject);
  });
  const maxLifetimeSeconds = given.maxLifetimeSeconds ?? 3600;
  if (!Number.isInteger(maxLifetimeSeconds) || maxLifetimeSeconds < 10 || maxLifetimeSeconds > 86_400)
    fail('workloadIdentity.maxLifetimeSeconds must be a whole number of seconds from 10 to 86400.');
  return { issuers, rules, maxLifetimeSeconds };
}
