// The access-token response of a user's grant (the code and refresh grants): nothing outlives the grant, so the last
// access token expires with it.
import type { OAuthContext } from '../context';
import { OAuthError } from '../errors';
import type { GrantRecord } from '../store/types';
import { accessTokenResponse, type AccessTokenResponse } from './access-token-response';

export const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

export function grantTokenResponse(
  ctx: Pick<OAuthContext, 'config' | 'signer'>,
  grant: GrantRecord,
  scopes: string[],
  refreshToken: string | undefined,
  jkt: string | undefined,
): AccessTokenResponse {
  const { config } = ctx;
  const expiresIn = Math.min(
    config.lifetimes.accessToken,
    Math.floor((grant.expiresAt - config.now()) / 1000),
  );
  if (expiresIn <= 0) throw invalidGrant('The authorization has expired.');
  return accessTokenResponse(ctx, {
    subject: grant.userId,
    clientId: grant.clientId,
    grantId: grant.grantId,
    scopes,
    resource: grant.resource,
    expiresIn,
    jkt,
    refreshToken,
  });
}
