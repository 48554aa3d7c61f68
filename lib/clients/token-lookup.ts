// What a presented token is, for revocation (RFC 7009) and introspection (RFC 7662): an access token is read by its
// signature (for any configured resource, or a downstream one of token exchange), a refresh token by its store key.
// Neither lookup changes anything.
import type { OAuthContext } from '../context';
import { refreshTokenKey } from '../crypto/refresh-token';
import { isUnknownKeyError, type AccessTokenClaims } from '../crypto/signer';
import { isOAuthError } from '../errors';
import type { RefreshTokenLookup } from '../store/types';

/** A token the server issued, as the lookups find it. */
export type FoundToken =
  { kind: 'access_token'; claims: AccessTokenClaims } | { kind: 'refresh_token'; found: RefreshTokenLookup };

/** What the lookups read: the signer and config for access tokens, the store for refresh tokens. */
export type TokenLookupDeps = Pick<OAuthContext, 'signer' | 'config' | 'store'>;

type Lookup = (ctx: TokenLookupDeps, token: string) => Promise<FoundToken | undefined>;

const findAccessToken: Lookup = async ({ signer, config }, token) => {
  if (token.split('.').length !== 3) return undefined;
  const downstream = config.tokenExchange ? [...config.tokenExchange.resources.keys()] : [];
  for (const audience of [...config.resources, ...downstream, ...config.operatorResources.keys()]) {
    const expected = { issuer: config.issuer, audience };
    try {
      return { kind: 'access_token', claims: signer.verifyAccessToken(token, expected) };
    } catch (error) {
      if (!isOAuthError(error)) throw error;
      // Another instance may have rotated in a key this one has not read yet.
      if (isUnknownKeyError(error) && signer.verifyAccessTokenFresh) {
        try {
          return { kind: 'access_token', claims: await signer.verifyAccessTokenFresh(token, expected) };
        } catch (again) {
          if (!isOAuthError(again)) throw again;
        }
      }
    }
  }
  return undefined;
};

const findRefreshToken: Lookup = async ({ store }, token) => {
  const found = await store.findRefreshToken(refreshTokenKey(token));
  return found && { kind: 'refresh_token', found };
};

/**
 * The token, tried as the kind its hint names first (RFC 7009 §2.1, RFC 7662 §2.1: the hint only orders the
 * lookups; an unknown hint is ignored). Undefined for anything unknown, expired, malformed or not signed by us.
 */
export async function findToken(
  ctx: TokenLookupDeps,
  token: string,
  hint: string | undefined,
): Promise<FoundToken | undefined> {
  const lookups =
    hint === 'access_token' ? [findAccessToken, findRefreshToken] : [findRefreshToken, findAccessToken];
  for (const lookup of lookups) {
    const found = await lookup(ctx, token);
    if (found) return found;
  }
  return undefined;
}

/** The grant and the client of a found token. */
export function ownerOf(token: FoundToken): { grantId: string; clientId: string } {
  return token.kind === 'access_token'
    ? { grantId: token.claims.grant_id, clientId: token.claims.client_id }
    : { grantId: token.found.token.grantId, clientId: token.found.token.clientId };
}
