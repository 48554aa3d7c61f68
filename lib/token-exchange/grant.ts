// The token-exchange grant at the token endpoint (RFC 8693 §2.1): a client the operator registered with the grant
// presents a live access token of this server as subject_token and names one downstream resource; the exchange
// itself is exchange.ts, shared with router.downstreamToken.
import { OAuthError } from '../errors';
import type { GrantType } from '../grants/grant-type';
import { readParam, requireParam } from '../util/params';
import { exchangeToken } from './exchange';
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT } from './options';

/** RFC 8693 §3: a JWT; our access tokens are JWTs, so a client may ask for this type as well. */
const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';

export const tokenExchangeGrant: GrantType = {
  type: TOKEN_EXCHANGE_GRANT,
  // Offered only with downstream resources configured; only operator clients can have it (clients/metadata.ts).
  enabled: (config) => config.tokenExchange !== undefined,
  issue: (ctx, { req, client, proof }) => {
    const { body } = req;
    // The client is the actor, and authenticateClient proved who it is: never a public client's client_id alone.
    if (client.tokenEndpointAuthMethod === 'none')
      throw new OAuthError('unauthorized_client', 'A public client cannot exchange tokens.');
    const subjectToken = requireParam(body, 'subject_token');
    // §2.1: subject_token_type is required; only this server's access tokens are exchanged.
    if (requireParam(body, 'subject_token_type') !== ACCESS_TOKEN_TYPE)
      throw new OAuthError('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}.`);
    // §2.1: an actor_token would name another actor; here the authenticated client is the actor, and a token that
    // says otherwise is refused rather than ignored.
    if (readParam(body, 'actor_token') !== undefined || readParam(body, 'actor_token_type') !== undefined)
      throw new OAuthError(
        'invalid_request',
        'actor_token is not supported: the authenticated client is the actor.',
      );
    const requested = readParam(body, 'requested_token_type');
    if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE && requested !== JWT_TOKEN_TYPE)
      throw new OAuthError('invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE}.`);
    return exchangeToken(ctx, req, {
      subjectToken,
      client,
      resource: readTarget(body),
      scope: readParam(body, 'scope'),
      jkt: proof.jkt,
    });
  },
};

/**
 * RFC 8693 §2.1: the target, by `resource` (RFC 8707) or by `audience`, which here must name the same URL: one
 * downstream resource per exchange, so that the new token's aud holds one value (invalid_target otherwise).
 */
function readTarget(body: unknown): string {
  const fields = (body ?? {}) as Record<string, unknown>;
  if (Array.isArray(fields.resource) || Array.isArray(fields.audience))
    throw new OAuthError('invalid_target', 'Name one downstream resource per exchange.');
  const resource = readParam(body, 'resource');
  const audience = readParam(body, 'audience');
  const same = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
  if (resource !== undefined && audience !== undefined && !same(resource, audience))
    throw new OAuthError('invalid_target', 'resource and audience name different targets; name one.');
  const target = resource ?? audience;
  if (target === undefined)
    throw new OAuthError('invalid_target', 'Name the downstream resource with the resource parameter.');
  return target;
}
