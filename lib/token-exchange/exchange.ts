// One token exchange (RFC 8693), at the token endpoint or in process (router.downstreamToken): a live access token
// of this server traded for one meant for a single downstream API, naming the same user, the actor in `act`, with
// no more scope than the subject token, the client and the resource allow, expiring no later than the subject token,
// and with no refresh token. Every refusal is an OAuthError with the code the contract names.
import type { Request } from 'express';
import type { OAuthContext } from '../context';
import { actDepth, MAX_ACT_DEPTH, type ActClaim } from '../crypto/act';
import { isUnknownKeyError, type AccessTokenClaims } from '../crypto/signer';
import { OAuthError, isOAuthError } from '../errors';
import { accessTokenResponse, type AccessTokenResponse } from '../grants/access-token-response';
import { decodeJwt } from '../jwt/verify';
import type { ClientRecord } from '../store/types';
import { parseScope } from '../util/scopes';
import {
  ACCESS_TOKEN_TYPE,
  normaliseResource,
  TOKEN_EXCHANGE_GRANT,
  type TokenExchangeConfig,
  type TokenExchangeRefusal,
  type TokenExchangeRequest,
} from './options';

/** What an exchange uses: the settings, the signer (to verify and to sign), the grant's state, and events. */
export type ExchangeDeps = Pick<OAuthContext, 'config' | 'signer' | 'store' | 'emit'>;

/** One exchange asked for. */
export interface ExchangeInput {
  subjectToken: string;
  /** The authenticated client at the token endpoint; undefined in process (the tool server acts). */
  client: ClientRecord | undefined;
  /** The downstream resource, as asked (normalised here). */
  resource: string;
  /** The scope asked for, or undefined for all the exchange may carry. */
  scope: string | undefined;
  /** The DPoP key to bind the new token to (RFC 9449 §5), or undefined for a bearer token. */
  jkt: string | undefined;
}

/** RFC 8693 §2.2.1: the access-token response, with the type of what was issued. */
export interface ExchangeResponse extends AccessTokenResponse {
  issued_token_type: typeof ACCESS_TOKEN_TYPE;
}

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);
const REFUSAL_CODES: ReadonlySet<string> = new Set([
  'invalid_target',
  'invalid_scope',
  'invalid_grant',
  'unauthorized_client',
]);

export async function exchangeToken(
  ctx: ExchangeDeps,
  req: Request | undefined,
  input: ExchangeInput,
): Promise<ExchangeResponse> {
  const { config } = ctx;
  // Only called with the grant enabled (grant.ts) or after router.downstreamToken checked the option.
  const settings = config.tokenExchange!;
  const resource = listedResource(input.resource, settings);
  const subject = await verifySubject(ctx, input.subjectToken, settings);
  // An exchange acts on a person's behalf. A machine's own token (client credentials: sub is its client_id) names
  // nobody to act for, and exchanged it would read downstream as a user's token whose user is a client id.
  if (subject.sub === subject.client_id)
    throw invalidGrant(
      'The subject_token is a client’s own token, which acts for no user: it cannot be exchanged.',
    );
  // The actor: the client that asks, or in process the tool server the subject token was issued for.
  const actor = input.client?.clientId ?? subject.aud;
  checkMayAct(subject, actor);
  if (actDepth(subject.act) >= MAX_ACT_DEPTH)
    throw invalidGrant(
      `The subject token was exchanged ${MAX_ACT_DEPTH} times already; no more actors may join.`,
    );
  // The actors before this one nest inside it; with none, `act: undefined` is left out of the signed JSON.
  const act: ActClaim = { sub: actor, act: subject.act };
  const scopes = narrowedScopes(subject, input, settings.resources.get(resource), config.scopeNames);
  const request: TokenExchangeRequest = {
    actor,
    client: input.client,
    subject: subject.sub,
    subjectClientId: subject.client_id,
    subjectAudience: subject.aud,
    subjectAct: subject.act,
    resource,
    scopes,
  };
  await applyPolicy(settings, request, req);

  const remaining = subject.exp - Math.floor(config.now() / 1000);
  const expiresIn = Math.min(settings.maxLifetimeSeconds ?? config.lifetimes.accessToken, remaining);
  const clientId = input.client?.clientId ?? subject.client_id;
  // Under the subject token's grant: revoking the user's grant ends the exchanged tokens too, since introspection and
  // every bearer check ask whether it is active.
  const body = accessTokenResponse(ctx, {
    subject: subject.sub,
    clientId,
    grantId: subject.grant_id,
    scopes,
    resource,
    expiresIn,
    jkt: input.jkt,
    act,
  });
  ctx.emit(req, 'token.exchanged', {
    clientId,
    userId: subject.sub,
    grantId: subject.grant_id,
    scopes,
    grantType: TOKEN_EXCHANGE_GRANT,
    resource,
    actor,
    ...(input.jkt === undefined ? {} : { jkt: input.jkt }),
  });
  // RFC 8693 §2.2.1: issued_token_type is required; a refresh token is not issued (the exchange is repeated instead).
  return {
    access_token: body.access_token,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: body.token_type,
    expires_in: body.expires_in,
    scope: body.scope,
  };
}

/** RFC 8707 §2 and RFC 8693 §2.2.2: one resource of the operator's list, or invalid_target. */
function listedResource(asked: string, settings: TokenExchangeConfig): string {
  const normalised = URL.canParse(asked) ? normaliseResource(new URL(asked)) : '';
  if (!settings.resources.has(normalised))
    throw new OAuthError(
      'invalid_target',
      `Tokens cannot be exchanged for "${asked.slice(0, 200)}": it is not a downstream resource of this server.`,
    );
  return normalised;
}

/**
 * The subject token, which must be a live access token of this server (RFC 8693 §2.1: "valid" is the server's to
 * decide): signed by its keys, typed at+jwt (a refresh token is no JWT at all), for one of its resources or a
 * downstream one, unexpired by this server's clock, and of a grant still active. RFC 8693 §2.2.2 names
 * invalid_request for a bad subject token; RFC 6749 §5.2's invalid_grant says more precisely that the grant presented
 * is dead, and is what clients retry differently, so the contract uses it.
 */
async function verifySubject(
  { config, signer, store }: ExchangeDeps,
  token: string,
  settings: TokenExchangeConfig,
): Promise<AccessTokenClaims> {
  const dead = 'The subject_token is not a live access token of this server.';
  const audience = decodeJwt(token)?.payload.aud;
  if (
    typeof audience !== 'string' ||
    !(config.resources.includes(audience) || settings.resources.has(audience))
  )
    throw invalidGrant(dead);
  const expected = { issuer: config.issuer, audience };
  let claims: AccessTokenClaims;
  try {
    try {
      claims = signer.verifyAccessToken(token, expected);
    } catch (error) {
      // A key set shared with other instances may hold a key this one has not read yet.
      if (!isUnknownKeyError(error) || !signer.verifyAccessTokenFresh) throw error;
      claims = await signer.verifyAccessTokenFresh(token, expected);
    }
  } catch (error) {
    if (isOAuthError(error)) throw new OAuthError('invalid_grant', dead, { cause: error });
    throw error;
  }
  // The signer tolerates a few seconds of skew; an exchange answers by this server's clock, as introspection does.
  if (claims.exp * 1000 <= config.now()) throw invalidGrant('The subject_token has expired.');
  if (!(await store.isGrantActive(claims.grant_id)))
    throw invalidGrant('The subject_token belongs to an authorization that has ended.');
  return claims;
}

/**
 * RFC 8693 §4.4: a subject token that names who may act for it (`may_act`) is exchanged by that actor alone. A
 * may_act this server cannot read refuses every actor: it was meant to restrict.
 */
function checkMayAct(subject: AccessTokenClaims, actor: string): void {
  const mayAct = (subject as AccessTokenClaims & { may_act?: unknown }).may_act;
  if (mayAct === undefined) return;
  // A string, a number, a list or null has no `sub` that equals an actor, which is always a non-empty string.
  const allowed = (mayAct as { sub?: unknown } | null)?.sub;
  if (allowed !== actor)
    throw invalidGrant('The subject_token names who may act for it (may_act), and that is not this actor.');
}

/**
 * RFC 8693 §2.1 and RFC 6749 §3.3: the scope asked for, or all that may be given, within the subject token's scope,
 * the exchanging client's registered scope, and the resource's ceiling: an exchange narrows, never widens
 * (invalid_scope).
 */
function narrowedScopes(
  subject: AccessTokenClaims,
  { client, scope }: ExchangeInput,
  ceiling: ReadonlySet<string> | undefined,
  catalogue: ReadonlySet<string>,
): string[] {
  const clientScopes = client ? new Set(client.scope.split(' ')) : undefined;
  const allowed = new Set(
    subject.scope
      .split(' ')
      .filter(
        (name) =>
          catalogue.has(name) &&
          (clientScopes === undefined || clientScopes.has(name)) &&
          (ceiling === undefined || ceiling.has(name)),
      ),
  );
  if (scope !== undefined) {
    const asked = parseScope(scope, allowed);
    if (asked.length > 0) return asked;
  }
  if (allowed.size === 0)
    throw new OAuthError('invalid_scope', 'No scope of the subject_token may be given to that resource.');
  return [...allowed];
}

/** The host's policy, after the rules above: it may refuse, never widen. Anything but true refuses (fails closed). */
async function applyPolicy(
  settings: TokenExchangeConfig,
  request: TokenExchangeRequest,
  req: Request | undefined,
): Promise<void> {
  if (!settings.policy) return;
  const verdict: unknown = await settings.policy(
    Object.freeze({ ...request, scopes: Object.freeze([...request.scopes]) }),
    req,
  );
  if (verdict === true) return;
  const refusal = verdict as Partial<TokenExchangeRefusal> | null | undefined;
  const code = refusal?.error;
  if (REFUSAL_CODES.has(code as string)) {
    const { description } = refusal!;
    throw new OAuthError(
      code as TokenExchangeRefusal['error'],
      typeof description === 'string' ? description : 'This exchange is not allowed.',
    );
  }
  throw new OAuthError('invalid_target', 'This exchange is not allowed for that resource.');
}
