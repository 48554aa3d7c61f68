// express-mcp-oauth/store: the storage contract, for the author of a store (Redis, DynamoDB, an ORM): every
// primitive's inputs and records. Types only; prove a store with express-mcp-oauth/testing. Named re-exports only.

/** The storage contract a custom store implements: its primitives, their inputs and its records. */
export type {
  AdvanceRefreshTokenInput,
  AuthorizationCodeRecord,
  ClientListing,
  ClientRecord,
  ConsumeCodeResult,
  DeviceAuthorizationRecord,
  GrantRecord,
  GrantWithClient,
  MaybePromise,
  OAuthStore,
  RedeemDeviceResult,
  RefreshTokenKey,
  RefreshTokenLookup,
  RefreshTokenRecord,
  RotationPointer,
  TokenEndpointAuthMethod,
  UpstreamTokenStore,
  UpstreamTokensRecord,
} from './types';
/** The storage of a key set, which the SQLite and PostgreSQL stores implement, and its records. */
export type { SigningKeyRecord, SigningKeyState, SigningKeyStore } from './types';
/** The SHA-256 hash of a secret, the only form in which secrets reach a store. */
export type { SecretHash } from '../crypto/secrets';
