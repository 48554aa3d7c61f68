// Conversion of stored rows (snake_case columns, JSON text, integer milliseconds) into the store records, shared
// by the SQLite and PostgreSQL stores.
import type { SecretHash } from '../crypto/secrets';
import type {
  AuthorizationCodeRecord,
  ClientListing,
  ClientRecord,
  DeviceAuthorizationRecord,
  GrantRecord,
  RefreshTokenKey,
  RefreshTokenLookup,
  SigningKeyRecord,
  UpstreamTokensRecord,
} from './types';

/** A row as better-sqlite3 returns it. */
export type Row = Record<string, unknown>;

export function mapRow<T>(row: unknown, convert: (row: Row) => T): T | undefined {
  return row === undefined ? undefined : convert(row as Row);
}

const scopesOf = (value: unknown): string[] => (typeof value === 'string' && value ? value.split(' ') : []);

export function toClient(row: Row): ClientRecord {
  return {
    clientId: row.client_id as string,
    clientSecretHash: row.client_secret_hash as SecretHash | null,
    clientName: row.client_name as string | null,
    redirectUris: JSON.parse(row.redirect_uris as string),
    grantTypes: JSON.parse(row.grant_types as string),
    responseTypes: JSON.parse(row.response_types as string),
    tokenEndpointAuthMethod: row.token_endpoint_auth_method as ClientRecord['tokenEndpointAuthMethod'],
    scope: row.scope as string,
    metadata: JSON.parse(row.metadata as string),
    issuedAt: Number(row.issued_at),
    ...(row.disabled_at === null || row.disabled_at === undefined ? {} : { disabled: true as const }),
  };
}

/** A client row with its grants' count and last use (listClients). */
export function toClientListing(row: Row): ClientListing {
  return {
    ...toClient(row),
    activeGrants: Number(row.active_grants),
    lastUsedAt: row.grants_last_used_at === null ? null : Number(row.grants_last_used_at),
  };
}

export function toGrant(row: Row): GrantRecord {
  return {
    grantId: row.grant_id as string,
    clientId: row.client_id as string,
    userId: row.user_id as string,
    scopes: scopesOf(row.scope),
    resource: row.resource as string | null,
    createdAt: row.created_at as number,
    expiresAt: row.expires_at as number,
    lastUsedAt: row.last_used_at as number | null,
    revokedAt: row.revoked_at as number | null,
  };
}

export function toCode(row: Row): AuthorizationCodeRecord {
  return {
    codeHash: row.code_hash as SecretHash,
    grantId: row.grant_id as string,
    clientId: row.client_id as string,
    userId: row.user_id as string,
    redirectUri: row.redirect_uri as string,
    scopes: scopesOf(row.scope),
    resource: row.resource as string | null,
    codeChallenge: row.code_challenge as string,
    codeChallengeMethod: 'S256',
    expiresAt: row.expires_at as number,
  };
}

export function toDeviceAuthorization(row: Row): DeviceAuthorizationRecord {
  return {
    deviceCodeHash: row.device_code_hash as SecretHash,
    userCodeHash: row.user_code_hash as SecretHash,
    clientId: row.client_id as string,
    scopes: scopesOf(row.scope),
    resource: row.resource as string | null,
    expiresAt: Number(row.expires_at),
    interval: Number(row.interval),
    status: row.status as DeviceAuthorizationRecord['status'],
    userId: row.user_id as string | null,
    grantId: row.grant_id as string | null,
  };
}

/** A refresh token joined with its grant: token columns under their own names, then the grant's columns. */
export function toRefreshLookup(row: Row): RefreshTokenLookup {
  return {
    token: {
      key: row.token_key as RefreshTokenKey,
      grantId: row.grant_id as string,
      clientId: row.token_client_id as string,
      parentKey: row.parent_hash as RefreshTokenKey | null,
      issuedAt: row.token_issued_at as number,
      expiresAt: row.token_expires_at as number,
    },
    grant: toGrant(row),
    latestUsed:
      row.latest_token_hash === null || row.latest_token_hash === undefined
        ? null
        : { key: row.latest_token_hash as RefreshTokenKey, usedAt: row.latest_used_at as number },
  };
}

export function toSigningKey(row: Row): SigningKeyRecord {
  return {
    kid: row.kid as string,
    sealedKey: row.sealed_key as string,
    state: row.state as SigningKeyRecord['state'],
    createdAt: row.created_at as number,
    retiredAt: row.retired_at as number | null,
  };
}

export function toUpstreamTokens(row: Row): UpstreamTokensRecord {
  return {
    id: row.id as SecretHash,
    provider: row.provider as string,
    userId: row.user_id as string,
    sealed: row.sealed as string,
    grantId: row.grant_id as string | null,
    version: row.version as number,
    leaseUntil: row.lease_until as number,
    expiresAt: row.expires_at as number,
  };
}
