// One grant type of the token endpoint (RFC 6749 §4): its grant_type, whether this server offers it, and how it
// issues. The token endpoint dispatches through the table (grants/table.ts): adding a grant is a file and a row.
import type { Request } from 'express';
import type { ClientAuthenticationDeps } from '../clients/authentication';
import type { OAuthContext } from '../context';
import type { TokenRequestProof } from '../dpop/token-binding';
import type { EventFields } from '../events';
import type { OAuthConfig } from '../options';
import type { ClientRecord } from '../store/types';
import type { AccessTokenResponse } from './access-token-response';

/** What a grant may use: client authentication's services, the signer, events, grant revocation, IdPs' keys. */
export type GrantDeps = ClientAuthenticationDeps &
  Pick<OAuthContext, 'signer' | 'emit' | 'revokeGrant' | 'issuerKeys' | 'stepUp'>;

/** A token request, past client authentication and the DPoP proof's checks. */
export interface GrantRequest {
  req: Request;
  /** The authenticated client, which registered this grant type. */
  client: ClientRecord;
  /** The request's DPoP proof: the key to bind to, and its jti to record once the grant is known good. */
  proof: TokenRequestProof;
}

type GrantTypeName = NonNullable<EventFields['grantType']>;

export interface GrantType {
  /** The grant_type parameter's value (RFC 6749 §4.1.3, §4.4.2, §6; RFC 7523 §2.1). */
  readonly type: GrantTypeName;
  /** Whether this server offers the grant: in metadata's grant_types_supported, and at the token endpoint. */
  enabled(config: OAuthConfig): boolean;
  /** Checks the request and issues, or throws an OAuthError (invalid_grant, invalid_scope, ...). */
  issue(ctx: GrantDeps, request: GrantRequest): Promise<AccessTokenResponse>;
}
