// Record builders for store tests: valid by default, overridable field by field.
import { randomUUID } from 'node:crypto';
import { issueRefreshToken } from '../crypto/refresh-token';
import { hashSecret, randomSecret, type SecretHash } from '../crypto/secrets';
import type { AuthorizationCodeRecord, ClientRecord, GrantRecord, RefreshTokenKey } from '../store/types';
import { DAY, MINUTE } from './clock';

export function clientRecord(overrides: Partial<ClientRecord> = {}): ClientRecord {
  return {
    clientId: `client-${randomUUID()}`,
    clientSecretHash: hashSecret(randomSecret()),
    clientName: 'Test Client',
    redirectUris: ['https://client.example/callback'],
    grantTypes: ['authorization_code', 'refresh_token'],
    responseTypes: ['code'],
    tokenEndpointAuthMethod: 'client_secret_basic',
    scope: 'notes:read notes:write',
    metadata: { client_uri: 'https://client.example' },
    issuedAt: 0,
    ...overrides,
  };
}

export function grantRecord(
  now: number,
  overrides: Partial<GrantRecord> & { clientId: string },
): GrantRecord {
  return {
    grantId: `grant-${randomUUID()}`,
    userId: 'user-1',
    scopes: ['notes:read', 'notes:write'],
    resource: 'https://api.example/mcp',
    createdAt: now,
    expiresAt: now + 30 * DAY,
    lastUsedAt: null,
    revokedAt: null,
    ...overrides,
  };
}

export function codeRecord(
  now: number,
  grant: GrantRecord,
  overrides: Partial<AuthorizationCodeRecord> = {},
): AuthorizationCodeRecord {
  return {
    codeHash: hashSecret(randomSecret()),
    grantId: grant.grantId,
    clientId: grant.clientId,
    userId: grant.userId,
    redirectUri: 'https://client.example/callback',
    scopes: grant.scopes,
    resource: grant.resource,
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    codeChallengeMethod: 'S256',
    expiresAt: now + 10 * MINUTE,
    ...overrides,
  };
}

/** A new refresh token of a grant, in the library's format, and its store key. */
export function newRefreshToken(grantId: string): { plain: string; hash: RefreshTokenKey } {
  const { token, key } = issueRefreshToken(grantId);
  return { plain: token, hash: key };
}

/** A fresh random secret (a code, a client secret) and its hash. */
export function newSecret(): { plain: string; hash: SecretHash } {
  const plain = randomSecret();
  return { plain, hash: hashSecret(plain) };
}
