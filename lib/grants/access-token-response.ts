// The one place an access-token response is made (RFC 6749 §5.1): the token signed (RFC 9068), its type (DPoP for a
// token bound to a proof's key, RFC 9449 §5), its lifetime, the refresh token when there is one, and the scope.
import type { OAuthContext } from '../context';
import type { ActClaim } from '../crypto/act';

export interface AccessTokenResponse {
  access_token: string;
  /** DPoP for a token bound to the proof's key (RFC 9449 §5), Bearer otherwise. */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

/** What is issued: for whom, to which client, under which grant, what, where, for how long, bound to what. */
export interface IssuedToken {
  /** The user's id, or for a machine the client's own (RFC 9068 §2.2). */
  subject: string;
  clientId: string;
  grantId: string;
  scopes: readonly string[];
  /** The resource (RFC 8707), or null for the default one, as a grant keeps it. */
  resource: string | null;
  expiresIn: number;
  /** The DPoP key the token is bound to (RFC 9449 §5), or undefined for a bearer token. */
  jkt: string | undefined;
  refreshToken?: string | undefined;
  /** RFC 8693 §4.1: who acts for the subject, for a token from a token exchange. */
  act?: ActClaim | undefined;
}

export function accessTokenResponse(
  { config, signer }: Pick<OAuthContext, 'config' | 'signer'>,
  issued: IssuedToken,
): AccessTokenResponse {
  const scope = issued.scopes.join(' ');
  const { token } = signer.signAccessToken({
    issuer: config.issuer,
    subject: issued.subject,
    audience: issued.resource ?? config.resources[0]!,
    clientId: issued.clientId,
    scope,
    grantId: issued.grantId,
    expiresIn: issued.expiresIn,
    jkt: issued.jkt,
    ...(issued.act === undefined ? {} : { act: issued.act }),
  });
  return {
    access_token: token,
    token_type: issued.jkt === undefined ? 'Bearer' : 'DPoP',
    expires_in: issued.expiresIn,
    ...(issued.refreshToken === undefined ? {} : { refresh_token: issued.refreshToken }),
    scope,
  };
}
