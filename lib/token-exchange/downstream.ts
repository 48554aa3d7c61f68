// router.downstreamToken: the token exchange in process, for a tool that calls a downstream API for its user. The
// same rules as the grant (exchange.ts); the actor is the tool server, so there is no client to authenticate and no
// DPoP proof to bind to. Refusals are events too, as the token endpoint's are.
import type { OAuthContext } from '../context';
import { OAuthError, isOAuthError } from '../errors';
import { exchangeToken } from './exchange';
import { normaliseResource, TOKEN_EXCHANGE_GRANT } from './options';

/** A downstream API's token, from router.downstreamToken. */
export interface DownstreamToken {
  /** Send it as `Authorization: Bearer <accessToken>`, to that resource only. */
  accessToken: string;
  tokenType: 'Bearer';
  /** The resource it is for (its `aud`). */
  resource: string;
  scopes: string[];
  /** When it expires, in milliseconds since the epoch. */
  expiresAt: number;
}

export async function downstreamToken(
  ctx: Pick<OAuthContext, 'config' | 'signer' | 'store' | 'emit'>,
  auth: { token: string } | string,
  request: { resource: string; scope?: string | readonly string[] },
): Promise<DownstreamToken> {
  const { config } = ctx;
  if (!config.tokenExchange)
    throw new TypeError(
      "downstreamToken: set the router's tokenExchange option, e.g. { resources: ['https://renderer.example.com'] }.",
    );
  const subjectToken = typeof auth === 'string' ? auth : auth?.token;
  const { resource, scope } = request ?? ({} as { resource?: unknown; scope?: unknown });
  if (typeof resource !== 'string')
    throw new TypeError(
      'downstreamToken: name the downstream resource, e.g. { resource: "https://renderer.example.com" }.',
    );
  const asked = Array.isArray(scope) ? scope.join(' ') : scope;
  if (asked !== undefined && typeof asked !== 'string')
    throw new TypeError('downstreamToken: scope must be a string or a list of scope names.');
  try {
    if (typeof subjectToken !== 'string' || !subjectToken)
      throw new OAuthError('invalid_grant', "Pass requireBearer's req.auth (or the user's access token).");
    const answer = await exchangeToken(ctx, undefined, {
      subjectToken,
      client: undefined,
      resource,
      scope: asked,
      jkt: undefined,
    });
    return {
      accessToken: answer.access_token,
      tokenType: 'Bearer',
      // Parsed by the exchange already: the listed form, as the token's aud has it.
      resource: normaliseResource(new URL(resource)),
      scopes: answer.scope.split(' '),
      expiresAt: config.now() + answer.expires_in * 1000,
    };
  } catch (error) {
    if (isOAuthError(error))
      ctx.emit(undefined, 'token.refused', { reason: error.code, grantType: TOKEN_EXCHANGE_GRANT, resource });
    throw error;
  }
}
