// The grant types of the token endpoint, in the order metadata lists them (grant_types_supported): the endpoint and
// the metadata both read this table, so a grant is offered in one place.
import type { OAuthConfig } from '../options';
import { jwtBearerGrant } from '../id-jag/grant';
import { authorizationCodeGrant } from './authorization-code';
import { clientCredentialsGrant } from './client-credentials';
import { deviceCodeGrant } from './device-code';
import type { GrantType } from './grant-type';
import { refreshTokenGrant } from './refresh-token';
import { tokenExchangeGrant } from '../token-exchange/grant';

const GRANT_TYPES: readonly GrantType[] = [
  authorizationCodeGrant,
  refreshTokenGrant,
  clientCredentialsGrant,
  jwtBearerGrant,
  tokenExchangeGrant,
  deviceCodeGrant,
];

/** The grant types this server offers. */
export const offeredGrants = (config: OAuthConfig): GrantType[] =>
  GRANT_TYPES.filter((grant) => grant.enabled(config));

/** Whether a grant_type value names one of the grant types (offered or not), for events. */
export const isKnownGrantType = (value: unknown): value is GrantType['type'] =>
  GRANT_TYPES.some((grant) => grant.type === value);
