// Token introspection (RFC 7662), for resource servers that do not share this process (another service, a gateway):
// they can verify access tokens locally with the JWKS, and ask here when they need a revocation to count at once.
import type { RequestHandler } from 'express';
import { handle, type OAuthContext } from '../context';
import { OAuthError } from '../errors';
import { classifyPresentation, policyFor } from '../grants/rotation';
import { boundKeyOf, successorOf } from '../crypto/refresh-token';
import type { ClientRecord } from '../store/types';
import { authenticateClient, type ClientAuthenticationDeps } from '../clients/authentication';
import { findToken, type FoundToken, type TokenLookupDeps } from '../clients/token-lookup';
import { writeJson } from '../util/json-response';
import { readParam, requireParam } from '../util/params';

/** RFC 7662 §2.2: an inactive token gets this and nothing more, whatever the reason. */
const INACTIVE = Object.freeze({ active: false });

export function introspectHandler(
  ctx: ClientAuthenticationDeps & TokenLookupDeps & Pick<OAuthContext, 'emit'>,
): RequestHandler {
  return handle(async function introspectionEndpoint(req, res) {
    const client = (await authenticateClient(ctx, req))!;
    // §2.1: the caller must authenticate; a public client's client_id alone proves nothing.
    if (client.tokenEndpointAuthMethod === 'none') {
      throw new OAuthError(
        'invalid_client',
        'Introspection is for confidential clients: authenticate with a client secret or a private_key_jwt assertion.',
      );
    }
    const token = requireParam(req.body, 'token');
    const found = await findToken(ctx, token, readParam(req.body, 'token_type_hint'));
    const answer = found ? await describe(ctx, client, found, token) : INACTIVE;
    ctx.emit(req, 'token.introspected', {
      clientId: client.clientId,
      active: answer.active,
      ...(answer.active && found ? { tokenType: found.kind } : {}),
    });
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    writeJson(res, 200, answer);
  });
}

/** The introspection response of a token the caller may see, or INACTIVE. */
async function describe(
  ctx: Pick<OAuthContext, 'config' | 'store'>,
  caller: ClientRecord,
  token: FoundToken,
  presented: string,
): Promise<{ active: boolean } & Record<string, unknown>> {
  const { config, store } = ctx;
  const now = config.now();
  if (token.kind === 'access_token') {
    const { claims } = token;
    // §4: a resource server learns only about tokens meant for it; any client, about its own.
    const visible =
      claims.client_id === caller.clientId ||
      (config.resourceServers.get(caller.clientId)?.has(claims.aud) ?? false);
    // The signature check tolerates a few seconds of clock skew; introspection answers by this server's clock.
    if (!visible || claims.exp * 1000 <= now || !(await store.isGrantActive(claims.grant_id)))
      return INACTIVE;
    return {
      active: true,
      scope: claims.scope,
      client_id: claims.client_id,
      sub: claims.sub,
      aud: claims.aud,
      iss: claims.iss,
      exp: claims.exp,
      iat: claims.iat,
      jti: claims.jti,
      // RFC 8693 §4.1: the actor (and those before it) of an exchanged token.
      ...(claims.act ? { act: claims.act } : {}),
      // RFC 9449 §6.2: a resource server that introspects learns the key a bound token needs a proof of.
      ...(claims.cnf ? { token_type: 'DPoP', cnf: { jkt: claims.cnf.jkt } } : { token_type: 'Bearer' }),
    };
  }
  // A refresh token is only ever presented by its own client, so only that client may ask about it. It is active
  // while it could still be exchanged: its grant is live and presenting it would not be a reuse.
  const { token: refresh, grant } = token.found;
  if (refresh.clientId !== caller.clientId || grant.revokedAt !== null || grant.expiresAt <= now)
    return INACTIVE;
  const successor = successorOf(presented, refresh.grantId, config.refreshTokenReuse.successorKey);
  const presentation = await classifyPresentation(
    store,
    token.found,
    successor.key,
    policyFor(presented, config.refreshTokenReuse),
    now,
  );
  if (presentation.kind === 'reuse') return INACTIVE;
  const jkt = boundKeyOf(presented);
  return {
    active: true,
    scope: grant.scopes.join(' '),
    client_id: refresh.clientId,
    sub: grant.userId,
    aud: grant.resource ?? config.resources[0],
    iss: config.issuer,
    exp: Math.floor(refresh.expiresAt / 1000),
    iat: Math.floor(refresh.issuedAt / 1000),
    ...(jkt === undefined ? {} : { cnf: { jkt } }),
  };
}
