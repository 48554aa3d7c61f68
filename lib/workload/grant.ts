// Workload Identity Federation (MCP's extension, SEP-1933, draft): a jwt-bearer grant (RFC 7523 §2.1) whose
// assertion is a workload's JWT from its platform, sent with no client authentication. The JWT is verified as RFC 7523
// §3 says (SEP-1933 "JWT Validation"), then an operator's rule maps its exact issuer and subject (and any claims the
// rule names) to the operator client the workload acts as; the token is that client's, as with client credentials.
// Every refusal is invalid_grant (RFC 7523 §3.1; SEP-1933's error example), and an event says why to the operator.
import type { Request } from 'express';
import type { ClientAuthenticationDeps } from '../clients/authentication';
import { ASSERTION_ALGORITHMS } from '../clients/assertion';
import type { OAuthContext } from '../context';
import { tokenRequestProof } from '../dpop/token-binding';
import { OAuthError } from '../errors';
import type { AccessTokenResponse } from '../grants/access-token-response';
import { issueGrantlessToken } from '../grants/grantless-token';
import { JWT_BEARER_GRANT } from '../id-jag/options';
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
} from '../jwt/verify';
import type { ClientRecord } from '../store/types';
import { readParam, readResource, requireParam } from '../util/params';
import { parseScope } from '../util/scopes';
import type { ParsedWorkloadRule, WorkloadIdentityConfig } from './options';

/** RFC 7523 §3 item 4 allows "reasonable" skew; the same 30 s as ID-JAGs and client assertions. */
const CLOCK_TOLERANCE_SECONDS = 30;

/** What the grant uses: the issuers' keys, the client lookup, the store (a grant per token, the jti), events. */
export type WorkloadDeps = ClientAuthenticationDeps & Pick<OAuthContext, 'signer' | 'emit' | 'issuerKeys'>;

/** Why a workload was refused: the `reason` of its workload.refused event. */
type WorkloadRefusal = 'invalid_jwt' | 'untrusted_issuer' | 'no_rule' | 'claims' | 'client' | 'replayed';

/** The replay key of a workload JWT's jti: per issuer (RFC 7519 §4.1.7); the space keeps it apart from client ids. */
const workloadReplayKey = (issuer: string) => `workload ${issuer}`;

/** Whether a token request is a workload's: the jwt-bearer grant, with workloads trusted and no client named. */
export const isWorkloadRequest = (
  config: { workloadIdentity: WorkloadIdentityConfig | undefined },
  req: Request,
) => config.workloadIdentity !== undefined && readParam(req.body, 'grant_type') === JWT_BEARER_GRANT;

/** Verifies the workload's JWT, finds its rule and client, and issues; or throws invalid_grant. */
export async function issueWorkloadToken(
  ctx: WorkloadDeps,
  req: Request,
): Promise<{ client: ClientRecord; body: AccessTokenResponse; useJti: () => Promise<void> }> {
  const { config, store } = ctx;
  const settings = config.workloadIdentity!;
  const refuse = (reason: WorkloadRefusal, description: string, detail: string, cause?: unknown): never => {
    // Every detail is bounded where it is made: the issuer is one the operator listed, the rest cut to size.
    ctx.emit(req, 'workload.refused', { reason, detail });
    throw new OAuthError(
      'invalid_grant',
      `The workload token was refused: ${description}.`,
      cause ? { cause } : {},
    );
  };
  const assertion = requireParam(req.body, 'assertion');
  const decoded = decodeJwt(assertion);
  if (!decoded) return refuse('invalid_jwt', 'it is not a JWT', 'the assertion is not a JWT');
  const { alg, kid, typ } = decoded.header;
  // RFC 8725 §3.11: a JWT typed as something else (an ID-JAG, an access token, a logout token) is not a workload's
  // credential, whatever its claims; platforms type theirs JWT or not at all.
  if (typ !== undefined && !hasType(typ, 'jwt'))
    return refuse(
      'invalid_jwt',
      'its typ header must be JWT or absent',
      `typ ${JSON.stringify(typ).slice(0, 64)}`,
    );
  // RFC 8725 §3.1: an allow-list, never "none" or an HMAC (a published key is no shared secret).
  if (!isAllowedAlgorithm(alg, ASSERTION_ALGORITHMS))
    return refuse(
      'invalid_jwt',
      `it is signed with ${String(alg).slice(0, 20)}; use ${ASSERTION_ALGORITHMS.join(', ')}`,
      `alg ${String(alg).slice(0, 20)}`,
    );
  // SEP-1933: only a trusted issuer's, and no fetch for any other.
  const issuer = decoded.payload.iss;
  if (typeof issuer !== 'string' || !settings.issuers.includes(issuer))
    return refuse(
      'untrusted_issuer',
      'its issuer is not trusted here',
      `iss ${JSON.stringify(issuer)?.slice(0, 200)}`,
    );
  const candidates = await findKeys(alg, kid, (refetch) => ctx.issuerKeys!(issuer, { refetch, req }));
  if (candidates.length === 0)
    return refuse(
      'invalid_jwt',
      `no key of its issuer verifies an ${alg} signature`,
      `${issuer}: no ${alg} key`,
    );
  let payload;
  try {
    // RFC 7523 §3 items 4, 5 and 9: the signature, exp and nbf.
    payload = verifySignature(
      assertion,
      candidates.map((candidate) => candidate.key),
      { alg, now: config.now(), clockTolerance: CLOCK_TOLERANCE_SECONDS },
    );
  } catch (failure) {
    const why = describeRefusal(failure, { signature: "its signature does not match its issuer's keys" });
    return refuse('invalid_jwt', why, `${issuer}: ${why}`, failure);
  }
  // SEP-1933 "JWT Format": aud is the token endpoint, alone (RFC 7523 §3 item 3; several audiences would let any of
  // them replay it here).
  if (singleAudience(payload.aud) !== config.endpoints.token)
    return refuse(
      'invalid_jwt',
      `its aud must be ${config.endpoints.token} alone`,
      `${issuer}: aud mismatch`,
    );
  const { sub, exp, iat } = payload;
  const jti = storableJti(payload.jti);
  if (typeof sub !== 'string' || !sub)
    return refuse('invalid_jwt', 'it has no sub claim', `${issuer}: no sub`);
  if (jti === undefined) return refuse('invalid_jwt', 'it needs a jti claim', `${issuer}: no jti`);
  if (typeof exp !== 'number' || typeof iat !== 'number')
    return refuse('invalid_jwt', 'it needs exp and iat claims', `${issuer}: no exp or iat`);
  if (iat > config.now() / 1000 + CLOCK_TOLERANCE_SECONDS)
    return refuse('invalid_jwt', 'its iat is in the future', `${issuer}: iat in the future`);
  if (exp - iat > settings.maxLifetimeSeconds)
    return refuse(
      'invalid_jwt',
      `it lives too long: exp must be within ${settings.maxLifetimeSeconds} seconds of iat`,
      `${issuer}: lifetime ${exp - iat} s`,
    );
  const who = `${issuer} ${JSON.stringify(sub.slice(0, 256))}`;
  // SEP-1933 "Workload Trust Relationship": the exact subject, then the rule's other claims.
  const rule = settings.rules.get(issuer)?.get(sub);
  if (!rule) return refuse('no_rule', 'this workload may not get tokens here', `${who}: no rule names it`);
  const mismatch = Object.entries(rule.claims).find(([name, value]) => payload[name] !== value);
  if (mismatch)
    return refuse('claims', 'this workload may not get tokens here', `${who}: claim ${mismatch[0]} differs`);
  const client = await clientOf(ctx, req, rule);
  if (!client)
    return refuse(
      'client',
      'this workload may not get tokens here',
      `${who}: client ${rule.clientId} is missing or unfit`,
    );
  const resource =
    readParam(req.body, 'resource') === undefined ? null : readResource(req.body, config.resources);
  const scopes = grantedScopes(rule, client, readParam(req.body, 'scope'), config.scopeNames);
  const proof = tokenRequestProof(ctx, req, client);
  // RFC 7523 §3 item 7, and SEP-1933's "jti ... to prevent replay attacks": once, last, so that a request refused for
  // anything else leaves the JWT usable by its workload.
  if (!(await store.useAssertionId!(workloadReplayKey(issuer), jti, keepUntil(exp, CLOCK_TOLERANCE_SECONDS))))
    return refuse('replayed', 'it was used already; present a fresh one', `${who}: jti used before`);
  const body = await issueGrantlessToken(ctx, req, {
    client,
    subject: client.clientId,
    scopes,
    resource,
    grantType: JWT_BEARER_GRANT,
    jkt: proof.jkt,
  });
  return { client, body, useJti: proof.useJti };
}

/** The rule's client: registered by the operator, confidential, with the client_credentials grant. */
async function clientOf(ctx: WorkloadDeps, req: Request, rule: ParsedWorkloadRule) {
  const client = await ctx.findClient(rule.clientId, req);
  if (
    !client ||
    client.tokenEndpointAuthMethod === 'none' ||
    !client.grantTypes.includes('client_credentials')
  )
    return undefined;
  return client;
}

/** The rule's scopes (or the client's), within the client's; the scope asked for narrows them (invalid_scope). */
function grantedScopes(
  rule: ParsedWorkloadRule,
  client: ClientRecord,
  asked: string | undefined,
  catalogue: ReadonlySet<string>,
): string[] {
  const clientScopes = new Set(client.scope.split(' ').filter((scope) => catalogue.has(scope)));
  const allowed = new Set((rule.scopes ?? [...clientScopes]).filter((scope) => clientScopes.has(scope)));
  const scopes = asked === undefined ? [...allowed] : parseScope(asked, allowed);
  if (scopes.length === 0) throw new OAuthError('invalid_scope', 'This workload may ask for no scope here.');
  return scopes;
}
