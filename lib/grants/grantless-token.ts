// An access token issued without a consent or a refresh token (the client_credentials and jwt-bearer grants): a grant
// of its own that lives as long as the token, so that revocation (revokeGrant) and the bearer check, which asks
// whether a token's grant is active, work for these tokens as for a user's consent.
import type { Request } from 'express';
import type { OAuthContext } from '../context';
import { timeOrderedId } from '../crypto/time-ordered-id';
import type { EventFields } from '../events';
import type { ClientRecord, GrantRecord } from '../store/types';
import { accessTokenResponse, type AccessTokenResponse } from './access-token-response';

/** What is issued: for whom (a user's id, or for a machine the client's own, RFC 9068 §2.2), what and where. */
export interface GrantlessToken {
  client: ClientRecord;
  subject: string;
  scopes: string[];
  /** The resource (RFC 8707), or null for the default one, as a user's grant keeps it. */
  resource: string | null;
  grantType: NonNullable<EventFields['grantType']>;
  /** The DPoP key the token is bound to (RFC 9449 §5), or undefined for a bearer token. */
  jkt: string | undefined;
}

export async function issueGrantlessToken(
  ctx: Pick<OAuthContext, 'store' | 'config' | 'signer' | 'emit'>,
  req: Request,
  { client, subject, scopes, resource, grantType, jkt }: GrantlessToken,
): Promise<AccessTokenResponse> {
  const { store, config } = ctx;
  const now = config.now();
  const expiresIn = config.lifetimes.accessToken;
  const grant: GrantRecord = {
    grantId: timeOrderedId(now),
    clientId: client.clientId,
    userId: subject,
    scopes,
    resource,
    createdAt: now,
    expiresAt: now + expiresIn * 1000,
    lastUsedAt: null,
    revokedAt: null,
  };
  await store.createGrant(grant);
  ctx.emit(req, 'token.issued', {
    clientId: client.clientId,
    // A machine's token names no user.
    ...(subject === client.clientId ? {} : { userId: subject }),
    grantId: grant.grantId,
    scopes,
    grantType,
    ...(jkt === undefined ? {} : { jkt }),
  });
  // RFC 6749 §4.4.3 and draft-ietf-oauth-identity-assertion-authz-grant §4.4.3: no refresh token.
  return accessTokenResponse(ctx, {
    subject,
    clientId: client.clientId,
    grantId: grant.grantId,
    scopes,
    resource,
    expiresIn,
    jkt,
  });
}
