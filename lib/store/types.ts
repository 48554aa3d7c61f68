// The storage contract: the one seam through which the library reads and writes state.
//
// Every method may return a value or a promise and is always awaited, so a synchronous store (SQLite) and an
// asynchronous one (PostgreSQL) fit the same contract. Every state change that must be atomic is one method.
// Secrets (client secrets, authorization codes, refresh tokens) cross this seam only as SHA-256 hashes.
import type { SecretHash } from '../crypto/secrets';

/** A value, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * How a client authenticates at the token endpoint (RFC 7591 §2): with a shared secret, with a JWT signed by a key
 * of its JWKS (`private_key_jwt`, RFC 7523 §2.2), or not at all (a public client).
 */
export type TokenEndpointAuthMethod =
  'client_secret_basic' | 'client_secret_post' | 'none' | 'private_key_jwt';

/**
 * A client: registered dynamically (RFC 7591; never expires, never changes), or described by a Client ID Metadata
 * Document (its client_id is the document's https URL; the library fetches the document and saves its latest
 * validated copy with saveClientDocument, so that grants can name the client).
 */
export interface ClientRecord {
  clientId: string;
  /** SHA-256 of the client secret; null unless the client authenticates with a secret. */
  clientSecretHash: SecretHash | null;
  clientName: string | null;
  redirectUris: string[];
  grantTypes: string[];
  responseTypes: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** Space-separated scopes the client may ask for. */
  scope: string;
  /** Other metadata (client_uri, logo_uri, contacts, jwks_uri, jwks, ...), kept to be echoed back. */
  metadata: Record<string, unknown>;
  /** Milliseconds since the epoch. */
  issuedAt: number;
}

/** One authorization of a client by a user: the consented scopes and resource. Revoking it ends all its tokens. */
export interface GrantRecord {
  grantId: string;
  clientId: string;
  userId: string;
  scopes: string[];
  /** The resource (RFC 8707) the grant's access tokens are for, or null for the default resource. */
  resource: string | null;
  createdAt: number;
  /** Nothing issued under the grant outlives this instant (milliseconds since the epoch). */
  expiresAt: number;
  /** When a token was last issued under this grant, or null. */
  lastUsedAt: number | null;
  /** When the grant was revoked, or null while it is active. */
  revokedAt: number | null;
}

/** An active grant with the name of its client, for a user's "connected apps" list. */
export interface GrantWithClient extends GrantRecord {
  clientName: string | null;
}

/** An authorization code, stored by hash (RFC 6749 §4.1.2, RFC 7636 §4.4). */
export interface AuthorizationCodeRecord {
  codeHash: SecretHash;
  grantId: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  scopes: string[];
  resource: string | null;
  codeChallenge: string;
  codeChallengeMethod: 'S256';
  expiresAt: number;
}

/**
 * The outcome of consuming a code: the first call gets the record (and its grant, while that is active), any later
 * call learns it was a replay.
 */
export type ConsumeCodeResult =
  | { status: 'consumed'; code: AuthorizationCodeRecord; grant: GrantRecord | undefined }
  | { status: 'replayed'; code: AuthorizationCodeRecord }
  | { status: 'not_found' };

/**
 * A refresh token, stored by hash. It expires and is revoked with its grant; whether it is still current is the
 * rotation's business (see rotateRefreshToken), not a field.
 */
export interface RefreshTokenRecord {
  tokenHash: SecretHash;
  grantId: string;
  clientId: string;
  /** The token this one was issued in exchange for, or null for the first of a grant. */
  parentHash: SecretHash | null;
  issuedAt: number;
  expiresAt: number;
  /** When its grant was revoked, or null. */
  revokedAt: number | null;
}

/** What the caller gives to rotate a refresh token. */
export interface RotateRefreshTokenInput {
  /** Hash of the token the client presented. */
  presentedHash: SecretHash;
  /** The authenticated client: a token issued to another client is treated as unknown and left untouched. */
  clientId: string;
  /** Hash of the new token to issue if the rotation succeeds. */
  successorHash: SecretHash;
  /** How long after its first use the presented token may be used again (lost responses, parallel refreshes). */
  retryWindowMs: number;
}

/**
 * The outcome of a rotation. `rotated`: the successor is stored and expires with the grant. `reused`: a used or
 * superseded token was presented outside the retry window; the store has already revoked the whole grant.
 * `invalid`: unknown, expired, revoked, or issued to another client; nothing changed.
 */
export type RotateRefreshTokenResult =
  | { status: 'rotated'; grant: GrantRecord; successorExpiresAt: number }
  | { status: 'reused'; grantId: string }
  | { status: 'invalid' };

/**
 * The storage contract. Records past their lifetime are never returned. The store owns the clock it compares
 * lifetimes against (an option of each implementation, so tests can freeze it).
 */
export interface OAuthStore {
  /** Saves a new client. Its client_id is unique. */
  registerClient(client: ClientRecord): MaybePromise<void>;
  /** The client with this id, or undefined. */
  findClient(clientId: string): MaybePromise<ClientRecord | undefined>;
  /**
   * Saves the validated copy of a Client ID Metadata Document as a client (client_id = the document's URL),
   * replacing the previous copy: documents change, and the library saves the newest one it fetched.
   */
  saveClientDocument(client: ClientRecord): MaybePromise<void>;
  /**
   * Records the `jti` of a client's JWT assertion (RFC 7523 §3, item 7) until `expiresAt`. Atomic: true for the
   * first call with this (clientId, jti), false for every later one while the first is unexpired, whatever the
   * connection or instance. This is what makes an assertion single-use across instances.
   */
  useAssertionId(clientId: string, jti: string, expiresAt: number): MaybePromise<boolean>;

  /** Saves a new grant. */
  createGrant(grant: GrantRecord): MaybePromise<void>;
  /** The grant with this id, revoked or not, or undefined once it has expired. */
  findGrant(grantId: string): MaybePromise<GrantRecord | undefined>;
  /** Whether the grant exists, is unexpired and is not revoked. The bearer check calls it on every request. */
  isGrantActive(grantId: string): MaybePromise<boolean>;
  /** Revokes a grant and every refresh token issued under it. Idempotent; true if it was active until now. */
  revokeGrant(grantId: string): MaybePromise<boolean>;
  /** The active grants of a user, newest first (created_at, then grant id, both descending), with client names. */
  listActiveGrants(userId: string): MaybePromise<GrantWithClient[]>;

  /** Saves a new authorization code. */
  saveAuthorizationCode(code: AuthorizationCodeRecord): MaybePromise<void>;
  /** The unexpired code with this hash, used or not, without consuming it; undefined otherwise. */
  findAuthorizationCode(codeHash: SecretHash): MaybePromise<AuthorizationCodeRecord | undefined>;
  /**
   * Atomically marks the code used. Only the first call gets `consumed`, with the code's grant if it is still active;
   * every later one gets `replayed`. Given `firstRefreshToken`, the same transaction saves it under that active
   * grant (expiring with it) and marks the grant used: one write for the whole code exchange.
   */
  consumeAuthorizationCode(
    codeHash: SecretHash,
    firstRefreshToken?: { tokenHash: SecretHash },
  ): MaybePromise<ConsumeCodeResult>;

  /** Saves the first refresh token of a grant; it expires with the grant. Marks the grant used. */
  saveRefreshToken(token: { tokenHash: SecretHash; grantId: string; clientId: string }): MaybePromise<void>;
  /** The unexpired refresh token with this hash (used, superseded or revoked ones included), or undefined. */
  findRefreshToken(tokenHash: SecretHash): MaybePromise<RefreshTokenRecord | undefined>;
  /** Atomically exchanges a refresh token for a successor, detecting reuse (see RotateRefreshTokenResult). */
  rotateRefreshToken(input: RotateRefreshTokenInput): MaybePromise<RotateRefreshTokenResult>;

  /**
   * Deletes up to `batchSize` expired codes, expired grants (each grant with its refresh tokens, which expire
   * with it) and expired assertion ids; returns how many rows it deleted itself (codes removed with their grant are not counted). Call again
   * until it returns 0.
   */
  purgeExpired(batchSize?: number): MaybePromise<number>;
}
