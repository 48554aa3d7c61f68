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
      // A token from a token exchange (RFC 8693) carries the user's grant, which is not its holder's to end: §2.2.1
      // of RFC 7009 has the answer for a token this server cannot revoke alone. It lives minutes, and ends with the
      // user's grant.
      if (found.kind === 'access_token' && found.claims.act !== undefined)
        throw new OAuthError(
          'unsupported_token_type',
          'An exchanged token cannot be revoked alone; it expires soon, and with the authorization it came from.',
        );
      await ctx.revokeGrant(owner.grantId, { by: 'client', req, clientId: owner.clientId });
    }
    // RFC 7009 §2.2: unknown, expired and already revoked tokens are answered 200 as well.
    res.statusCode = 200;
    res.setHeader('Cache-Control', 'no-store');
    res.end();
  });
}
