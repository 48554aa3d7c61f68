// Token revocation (RFC 7009): a refresh token or an access token ends the grant it belongs to, and with it every
// token of that client's authorization. The spec's clients send JSON {"token": "..."}; forms work too.
import type { Request, RequestHandler } from 'express';
import { handle, type OAuthContext } from '../context';
import { OAuthError } from '../errors';
import { authenticateClient, type ClientAuthenticationDeps } from '../clients/authentication';
import { findToken, ownerOf, type TokenLookupDeps } from '../clients/token-lookup';
import { readParam, requireParam } from '../util/params';

export function revokeHandler(
  ctx: ClientAuthenticationDeps & TokenLookupDeps & Pick<OAuthContext, 'revokeGrant'>,
): RequestHandler {
  return handle(async function revocationEndpoint(req: Request, res) {
    // Credentials are optional (possession of the refresh token is the proof), but wrong ones are refused.
    const client = await authenticateClient(ctx, req, { optional: true });
    const token = requireParam(req.body, 'token');
    const found = await findToken(ctx, token, readParam(req.body, 'token_type_hint'));
    if (found) {
      const owner = ownerOf(found);
      if (client && owner.clientId !== client.clientId) {
        throw new OAuthError('unauthorized_client', 'The token was not issued to this client.');
      }
      await ctx.revokeGrant(owner.grantId, { by: 'client', req, clientId: owner.clientId });
    }
    // RFC 7009 §2.2: unknown, expired and already revoked tokens are answered 200 as well.
    res.statusCode = 200;
    res.setHeader('Cache-Control', 'no-store');
    res.end();
  });
}
