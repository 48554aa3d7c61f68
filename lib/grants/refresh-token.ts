// The refresh_token grant (RFC 6749 §6) with rotation and reuse detection (RFC 9700 §4.14): a refresh token for a new
// access token and its successor, never a wider scope, and a token used again past the reuse rule revokes the grant.
import { boundKeyOf, refreshTokenKey } from '../crypto/refresh-token';
import { requireBoundKey } from '../dpop/token-binding';
import { OAuthError } from '../errors';
import { readParam, readResource, requireParam } from '../util/params';
import { parseScope } from '../util/scopes';
import type { AccessTokenResponse } from './access-token-response';
import { grantTokenResponse, invalidGrant } from './grant-token-response';
import type { GrantDeps, GrantRequest, GrantType } from './grant-type';
import { rotateRefreshToken } from './rotation';
import type { GrantRecord } from '../store/types';

export const refreshTokenGrant: GrantType = {
  type: 'refresh_token',
  enabled: () => true,
  issue: refresh,
};

async function refresh(ctx: GrantDeps, { req, client, proof }: GrantRequest): Promise<AccessTokenResponse> {
  const { store, config } = ctx;
  const { jkt } = proof;
  const presentedToken = requireParam(req.body, 'refresh_token');
  const presentedKey = refreshTokenKey(presentedToken);
  // RFC 9449 §5: a bound token goes no further without a proof of its key; nothing is used up. Only a token this
  // client holds is said to be bound: any other is unknown, as it would be without DPoP.
  const bound = boundKeyOf(presentedToken);
  if (bound !== undefined && bound !== jkt) {
    const known = await store.findRefreshToken(presentedKey);
    if (!known || known.token.clientId !== client.clientId)
      throw invalidGrant('The refresh token is invalid or has expired.');
    requireBoundKey(bound, jkt, 'refresh token');
  }
  const scopeParam = readParam(req.body, 'scope');
  const resourceParam = readParam(req.body, 'resource');
  let scopes: string[] | undefined;
  if (scopeParam !== undefined || resourceParam !== undefined) {
    // Checked before rotating, so a bad request does not use the token up. RFC 6749 §6: narrower, never wider.
    const known = await store.findRefreshToken(presentedKey);
    if (!known || known.token.clientId !== client.clientId)
      throw invalidGrant('The refresh token is invalid or has expired.');
    const { grant } = known;
    if (grant.revokedAt !== null) throw invalidGrant('The authorization was revoked.');
    scopes = scopeParam === undefined ? grant.scopes : parseScope(scopeParam, new Set(grant.scopes));
    if (scopes.length === 0) throw new OAuthError('invalid_scope', 'The scope must not be empty.');
    if (resourceParam !== undefined && readResource(req.body, config.resources) !== grant.resource) {
      throw new OAuthError('invalid_target', 'The resource differs from the one authorized.');
    }
  }

  // A bound token's proof is recorded before the rotation, once the token is known to be this client's (a made-up token
  // bound to a key of one's own leaves no row): a whole captured request replayed after the bound token's reuse window
  // (a minute) but within its proof's life (five) is then refused as a replayed proof, not taken for reuse of the
  // token, which would revoke the grant (RFC 9449 §11.1).
  if (bound !== undefined) {
    const known = await store.findRefreshToken(presentedKey);
    if (!known || known.token.clientId !== client.clientId)
      throw invalidGrant('The refresh token is invalid or has expired.');
    await proof.useJti();
  }
  const { stepUp } = ctx;
  const outcome = await rotateRefreshToken(store, {
    presentedToken,
    clientId: client.clientId,
    policy: config.refreshTokenReuse,
    now: config.now(),
    // A tool was refused for want of scope a moment ago: this client should be asking the person, not refreshing.
    ...(stepUp ? { beforeFirstUse: (grant: GrantRecord) => stepUp.checkFirstUse(grant.grantId) } : {}),
  });
  if (outcome.status === 'reused') {
    // The rule revoked the grant in the store; this also forgets it in this process's bearer cache at once.
    await ctx.revokeGrant(outcome.grantId);
    ctx.emit(req, 'refresh_token.reused', {
      clientId: client.clientId,
      grantId: outcome.grantId,
      reason: outcome.reason,
      ...(outcome.firstUsedAt === null ? {} : { firstUsedAt: outcome.firstUsedAt }),
    });
    throw invalidGrant('The refresh token was already used; the authorization is revoked.');
  }
  if (outcome.status === 'invalid') throw invalidGrant('The refresh token is invalid or has expired.');
  const { grant } = outcome;
  ctx.emit(req, 'token.refreshed', {
    clientId: client.clientId,
    userId: grant.userId,
    grantId: grant.grantId,
    scopes: scopes ?? grant.scopes,
    // A token presented again (shared by several processes, a race, a lost response): it got the same successor.
    ...(outcome.firstUsedAt === null ? {} : { firstUsedAt: outcome.firstUsedAt }),
    ...(jkt === undefined ? {} : { jkt }),
  });
  // Without a scope parameter the token carries the grant's whole scope (the rotation already checked the rest).
  return grantTokenResponse(ctx, outcome.grant, scopes ?? outcome.grant.scopes, outcome.successor.token, jkt);
}
