// The jwt-bearer grant with an ID-JAG (RFC 7523 §2.1; draft-ietf-oauth-identity-assertion-authz-grant §4.4; MCP's
// Enterprise-Managed Authorization extension, SEP-990 §5): an operator's client presents a grant its user's
// enterprise IdP issued, and gets an access token for that user, with no consent page and no refresh token.
import type { Request } from 'express';
import type { OAuthContext } from '../context';
import { idJagReplayKey, verifyIdJag } from './assertion';
import { OAuthError } from '../errors';
import { JWT_BEARER_GRANT, type EnterpriseIdpConfig, type IdJagClaims, type IdJagUser } from './options';
import type { ClientRecord } from '../store/types';
import type { GrantType } from '../grants/grant-type';
import { issueGrantlessToken } from '../grants/grantless-token';
import { readParam, readResource, requireParam } from '../util/params';
import { emailDomain } from '../util/email';
import { OFFLINE_ACCESS, parseScope } from '../util/scopes';

/** What the grant uses: the IdPs' keys, the store (a grant per token, and the jti record), the signer and events. */
type JwtBearerDeps = Pick<OAuthContext, 'store' | 'config' | 'signer' | 'emit' | 'issuerKeys'>;

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

export const jwtBearerGrant: GrantType = {
  type: JWT_BEARER_GRANT,
  // Offered with enterprise IdPs (an operator client's ID-JAG) or trusted workloads (a workload's JWT with no client
  // authentication: workload/grant.ts), and a store that keeps assertion ids (router/capabilities.ts).
  enabled: (config) => config.enterpriseIdps !== undefined || config.workloadIdentity !== undefined,
  issue: (ctx, { req, client, proof }) => {
    // An authenticated client presents an ID-JAG; with no IdP trusted there is nothing it could present.
    if (!ctx.config.enterpriseIdps)
      throw new OAuthError(
        'unauthorized_client',
        'No enterprise identity provider is trusted here; a workload sends its JWT without client authentication.',
      );
    return issueIdJagToken(ctx, req, client, proof.jkt);
  },
};

async function issueIdJagToken(
  ctx: JwtBearerDeps,
  req: Request,
  client: ClientRecord,
  jkt: string | undefined,
) {
  const { store, config } = ctx;
  // Enabled only with IdPs configured (above).
  const idps = config.enterpriseIdps!;
  // Draft §8.1: confidential clients only; authenticateClient proved who this one is, never by client_id alone.
  if (client.tokenEndpointAuthMethod === 'none')
    throw new OAuthError('unauthorized_client', 'A public client cannot use the jwt-bearer grant.');
  // RFC 7523 §2.1: exactly one JWT in `assertion`.
  const assertion = requireParam(req.body, 'assertion');
  const { claims, replayUntil } = await verifyIdJag(assertion, {
    issuers: idps.issuers,
    keys: (issuer, refetch) => ctx.issuerKeys!(issuer, { refetch, req }),
    audience: config.issuer,
    clientId: client.clientId,
    maxLifetimeSeconds: idps.maxLifetimeSeconds,
    now: config.now,
  });
  const resource = grantedResource(claims.resource, req, config.resources);
  const scopes = grantedScopes(claims.scope, readParam(req.body, 'scope'), client, config.scopeNames);

  const user = await userOf(ctx, req, claims as IdJagClaims, client);

  // The extension §7.4.2: replay detection is REQUIRED in this profile (RFC 7523 §3 item 7 leaves it optional). Last,
  // so that a request refused for any other reason leaves the ID-JAG usable by its rightful client.
  if (!(await store.useAssertionId!(idJagReplayKey(claims.iss), claims.jti, replayUntil)))
    throw invalidGrant('The ID-JAG was already used; ask the identity provider for a new one.');

  // The extension §5.1: the token is audience-restricted to the MCP server the ID-JAG's resource names.
  return issueGrantlessToken(ctx, req, {
    client,
    subject: user.id,
    scopes,
    resource,
    grantType: JWT_BEARER_GRANT,
    jkt,
  });
}

/** Why an ID-JAG named no user: the `reason` of its id_jag.refused event. */
type IdentityRefusal = 'no_account' | 'unverified_email' | 'malformed_email' | 'email_domain';

/**
 * The user an ID-JAG names. Draft §3.1 makes `iss` + `sub` the subject; an email claim is only what the IdP's
 * account holds, which at many IdPs its user or a tenant administrator can set to any address. So: the host's link
 * to the IdP account first; without one, an email only when the IdP verified it (OpenID Connect Core §5.1,
 * `email_verified` true, as upstream sign-in requires), only within the domains the operator lets that IdP speak for
 * (with two IdPs trusted, either could otherwise name the other's users, or one who signs in only with a password),
 * and only in a form normalisation leaves alone. Every refusal is invalid_grant (RFC 7523 §3.1) and an event.
 */
async function userOf(
  ctx: JwtBearerDeps,
  req: Request,
  claims: IdJagClaims,
  client: ClientRecord,
): Promise<IdJagUser> {
  const idps: EnterpriseIdpConfig = ctx.config.enterpriseIdps!;
  const refuse = (reason: IdentityRefusal, description: string, detail: string): never => {
    ctx.emit(req, 'id_jag.refused', {
      clientId: client.clientId,
      reason,
      detail: `${detail} (iss ${JSON.stringify(claims.iss)}, sub ${JSON.stringify(claims.sub.slice(0, 256))})`,
    });
    throw invalidGrant(description);
  };
  const noAccount = () =>
    refuse(
      'no_account',
      'The ID-JAG names no user of this service.',
      'no user is linked to or has its email',
    );
  const { iss, sub, tenant } = claims;
  let user = await idps.findLinkedUser?.(
    { iss, sub, ...(typeof tenant === 'string' ? { tenant } : {}) },
    req,
  );
  if (!user) {
    if (!idps.findUser || claims.email === undefined) return noAccount();
    if (claims.email_verified !== true)
      return refuse(
        'unverified_email',
        'The ID-JAG names its user by an email its identity provider has not verified (email_verified is not true).',
        `email_verified is ${(JSON.stringify(claims.email_verified) ?? 'absent').slice(0, 64)}`,
      );
    const domain = emailDomain(claims.email);
    if (domain === undefined)
      return refuse(
        'malformed_email',
        'The ID-JAG email is not an address this service can match.',
        'the email claim is not an address in normalised form',
      );
    const allowed = idps.emailDomains.get(iss);
    if (allowed && !allowed.has(domain))
      return refuse(
        'email_domain',
        'The identity provider may not name users of that email domain here.',
        `the email's domain ${JSON.stringify(domain)} is not one the IdP speaks for`,
      );
    user = await idps.findUser(claims, req);
  }
  // requireBearer reads sub = client_id as a machine's token: such a user's token would act as the client.
  if (!user || typeof user.id !== 'string' || !user.id || user.id === client.clientId) return noAccount();
  return user;
}

/**
 * The extension §4.3 and §7.6.2, draft §4.4.1, RFC 8707 §2: every resource the ID-JAG names must be one of ours
 * (invalid_grant: a grant meant for another server). A resource parameter picks one of them; without either, the
 * default resource (null in the grant, as elsewhere).
 */
function grantedResource(claim: unknown, req: Request, resources: readonly string[]): string | null {
  const asked = readParam(req.body, 'resource') === undefined ? undefined : readResource(req.body, resources);
  if (claim === undefined) return asked ?? null;
  const asserted = (Array.isArray(claim) ? claim : [claim]).map((value) =>
    typeof value === 'string' ? value.replace(/\/+$/, '') : '',
  );
  if (asserted.length === 0 || asserted.some((value) => !resources.includes(value)))
    throw invalidGrant('The ID-JAG is for a resource this server does not serve.');
  if (asked !== undefined && !asserted.includes(asked))
    throw new OAuthError('invalid_target', 'The resource is not one the ID-JAG grants.');
  return asked ?? asserted[0]!;
}

/**
 * The extension §7.6.2: each scope of the ID-JAG must be one this client may have here (invalid_grant otherwise);
 * without a scope claim, the client's whole scope. §7.2.1 and RFC 6749 §3.3: the token gets the intersection with
 * the scope asked for, which may narrow it, never widen it (invalid_scope).
 */
function grantedScopes(
  claim: unknown,
  asked: string | undefined,
  client: ClientRecord,
  catalogue: ReadonlySet<string>,
): string[] {
  const allowed = client.scope.split(' ').filter((scope) => catalogue.has(scope));
  let asserted = allowed;
  if (claim !== undefined) {
    if (typeof claim !== 'string') throw invalidGrant('The ID-JAG scope claim must be a string.');
    asserted = [...new Set(claim.split(' ').filter((scope) => scope && scope !== OFFLINE_ACCESS))];
    const foreign = asserted.find((scope) => !allowed.includes(scope));
    if (foreign !== undefined)
      throw invalidGrant(
        `The ID-JAG grants the scope "${foreign.slice(0, 64)}", which this client may not have.`,
      );
  }
  const scopes = asked === undefined ? asserted : parseScope(asked, new Set(asserted));
  if (scopes.length === 0)
    throw new OAuthError('invalid_scope', 'The ID-JAG grants this client no scope here.');
  return scopes;
}
