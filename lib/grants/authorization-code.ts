// The authorization_code grant (RFC 6749 §4.1.3) with PKCE (RFC 7636 §4.6): a code the user's consent gave this
// client, spent once, for an access token and, when the client registered the refresh_token grant, a refresh token.
import { isValidCodeVerifier, verifyS256 } from '../crypto/pkce';
import { issueRefreshToken } from '../crypto/refresh-token';
import { hashSecret } from '../crypto/secrets';
import { requireBoundKey } from '../dpop/token-binding';
import { OAuthError } from '../errors';
import type { AuthorizationCodeRecord } from '../store/types';
import { readParam, readResource, requireParam } from '../util/params';
import type { AccessTokenResponse } from './access-token-response';
import { grantTokenResponse, invalidGrant } from './grant-token-response';
import type { GrantDeps, GrantRequest, GrantType } from './grant-type';
import { replaceEarlierGrants } from './replace-earlier';

export const authorizationCodeGrant: GrantType = {
  type: 'authorization_code',
  enabled: () => true,
  issue: exchangeCode,
};

async function exchangeCode(
  ctx: GrantDeps,
  { req, client, proof }: GrantRequest,
): Promise<AccessTokenResponse> {
  const { store } = ctx;
  const { jkt } = proof;
  const code = requireParam(req.body, 'code');
  const redirectUri = requireParam(req.body, 'redirect_uri');
  const verifier = requireParam(req.body, 'code_verifier');
  if (!isValidCodeVerifier(verifier)) {
    throw new OAuthError(
      'invalid_request',
      'code_verifier must be 43 to 128 characters of [A-Z a-z 0-9 - . _ ~].',
    );
  }
  const codeHash = hashSecret(code);
  // Everything is checked before the code is consumed, so a request from the wrong client cannot burn it.
  const record = await store.findAuthorizationCode(codeHash);
  if (!record) throw invalidGrant('The authorization code is invalid or has expired.');
  if (record.clientId !== client.clientId)
    throw invalidGrant('The authorization code was issued to another client.');
  if (record.redirectUri !== redirectUri)
    throw invalidGrant('redirect_uri differs from the one in the authorization request.');
  const resource =
    readParam(req.body, 'resource') === undefined
      ? record.resource
      : readResource(req.body, ctx.config.resources);
  if (resource !== record.resource)
    throw new OAuthError('invalid_target', 'The resource differs from the one authorized.');
  // RFC 9449 §10: a code issued for a dpop_jkt carries it (authorize/handlers.ts).
  requireBoundKey(codeBoundKey(code), jkt, 'authorization code');

  if (!verifyS256(verifier, record.codeChallenge)) {
    // The code is burned by a wrong verifier: whoever holds a stolen code gets exactly one guess.
    await store.consumeAuthorizationCode(codeHash);
    await ctx.revokeGrant(record.grantId);
    ctx.emit(req, 'code.replayed', { ...codeIds(record), reason: 'pkce_mismatch' });
    throw invalidGrant('code_verifier does not match the code_challenge.');
  }
  // The request is good but for its proof's jti, which is recorded before the code is spent: a whole captured request
  // replayed is then refused as a replayed proof, and its code (already spent) is not taken for a replayed code, which
  // would revoke the grant (RFC 9449 §11.1).
  await proof.useJti();
  // One transaction marks the code used and saves the first refresh token under its (still active) grant.
  // RFC 9449 §5: a public client's refresh tokens are bound to its DPoP key (a confidential client's are bound to
  // its credentials already).
  const refreshToken = client.grantTypes.includes('refresh_token')
    ? issueRefreshToken(record.grantId, client.tokenEndpointAuthMethod === 'none' ? jkt : undefined)
    : undefined;
  const outcome = await store.consumeAuthorizationCode(
    codeHash,
    refreshToken === undefined ? undefined : { key: refreshToken.key },
  );
  if (outcome.status === 'replayed') {
    // RFC 6749 §4.1.2: a code used twice revokes everything issued from it.
    await ctx.revokeGrant(record.grantId);
    ctx.emit(req, 'code.replayed', { ...codeIds(record), reason: 'replay' });
    throw invalidGrant('The authorization code was already used; the tokens issued from it are revoked.');
  }
  if (outcome.status === 'not_found') throw invalidGrant('The authorization code is invalid or has expired.');
  if (!outcome.grant) throw invalidGrant('The authorization was revoked.');
  ctx.emit(req, 'code.redeemed', {
    ...codeIds(record),
    scopes: record.scopes,
    ...(jkt === undefined ? {} : { jkt }),
  });
  await replaceEarlierGrants(ctx, req, outcome.grant);
  return grantTokenResponse(ctx, outcome.grant, record.scopes, refreshToken?.token, jkt);
}

/** The DPoP key an authorization code was issued for ("<jkt>.<secret>", authorize/handlers.ts), if any. */
function codeBoundKey(code: string): string | undefined {
  const dot = code.indexOf('.');
  return dot > 0 ? code.slice(0, dot) : undefined;
}

/** The ids an event about a code carries. */
const codeIds = (code: AuthorizationCodeRecord) => ({
  clientId: code.clientId,
  userId: code.userId,
  grantId: code.grantId,
});
