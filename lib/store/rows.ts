// Conversion of stored rows (snake_case columns, JSON text, integer milliseconds) into the store records, shared
// by the SQLite and PostgreSQL stores.
import type { SecretHash } from '../crypto/secrets';
import type { AuthorizationCodeRecord, ClientRecord, GrantRecord, RefreshTokenRecord } from './types';

/** A row as better-sqlite3 returns it. */
export type Row = Record<string, unknown>;

export function mapRow<T>(row: unknown, convert: (row: Row) => T): T | undefined {
  return row === undefined ? undefined : convert(row as Row);
}

export const scopesOf = (value: unknown): string[] =>
  typeof value === 'string' && value ? value.split(' ') : [];

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
    issuedAt: row.issued_at as number,
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

export function toToken(row: Row): RefreshTokenRecord {
  return {
    tokenHash: row.token_hash as SecretHash,
    grantId: row.grant_id as string,
    clientId: row.client_id as string,
    parentHash: row.parent_hash as SecretHash | null,
    issuedAt: row.issued_at as number,
    expiresAt: row.expires_at as number,
    revokedAt: row.revoked_at as number | null,
  };
}
