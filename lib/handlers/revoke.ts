// Token revocation (RFC 7009): a refresh token or an access token ends the grant it belongs to, and with it every
// token of that client's authorization. The spec's clients send JSON {"token": "..."}; forms work too.
import type { Request, RequestHandler } from 'express';
import { handle, type OAuthContext } from '../context';
import { refreshTokenKey } from '../crypto/refresh-token';
import { OAuthError, isOAuthError } from '../errors';
import { authenticateClient } from './client-authentication';
import type { ClientRecord } from '../store/types';
import { readParam, requireParam } from '../util/params';

interface TokenOwner {
  grantId: string;
  clientId: string;
}

type Lookup = (ctx: OAuthContext, token: string) => Promise<TokenOwner | undefined>;

const findRefreshToken: Lookup = async ({ store }, token) => {
  const found = await store.findRefreshToken(refreshTokenKey(token));
  return found && { grantId: found.token.grantId, clientId: found.token.clientId };
};

const findAccessToken: Lookup = async ({ signer, config }, token) => {
  if (token.split('.').length !== 3) return undefined;
  for (const audience of config.resources) {
    try {
      const claims = signer.verifyAccessToken(token, { issuer: config.issuer, audience });
      return { grantId: claims.grant_id, clientId: claims.client_id };
    } catch (error) {
      if (!isOAuthError(error)) throw error;
    }
  }
  return undefined;
};

export function revokeHandler(ctx: OAuthContext): RequestHandler {
  return handle(async function revocationEndpoint(req: Request, res) {
    // Credentials are optional (possession of the refresh token is the proof), but wrong ones are refused.
    const client: ClientRecord | undefined = await authenticateClient(ctx, req, {
      optional: true,
      endpoint: ctx.config.endpoints.revocation,
    });
    const token = requireParam(req.body, 'token');
    // RFC 7009 §2.1: the hint only orders the lookups; an unknown hint is ignored.
    const hint = readParam(req.body, 'token_type_hint');
    const lookups =
      hint === 'access_token' ? [findAccessToken, findRefreshToken] : [findRefreshToken, findAccessToken];
    let owner: TokenOwner | undefined;
    for (const lookup of lookups) {
      owner = await lookup(ctx, token);
      if (owner) break;
    }
    if (owner) {
      if (client && owner.clientId !== client.clientId) {
        throw new OAuthError('unauthorized_client', 'The token was not issued to this client.');
      }
      await ctx.revokeGrant(owner.grantId);
    }
    // RFC 7009 §2.2: unknown, expired and already revoked tokens are answered 200 as well.
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).end();
  });
}
