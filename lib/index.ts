// The public contract of express-mcp-oauth, the authorization server: named re-exports only, grouped by module.
// The other entry points: express-mcp-oauth/mcp (scope-gated MCP tools), /postgres (the PostgreSQL store), /store
// (the storage contract's records), /pages (the pages' words and look), /check (the deployment check), /testing (the
// store contract suite), /experimental (fastPath). Everything not exported by one of them is internal.
//
// What is named here: every function and class, the options object each takes and what it returns, the interfaces
// a host implements or receives (stores, signers, users, events, callbacks' arguments). An option group nested in
// another (the router's `dpop`, `upstream`, `rateLimits`, ...) is documented with its parent and reached through it,
// as `OAuthRouterOptions['dpop']`: naming each of them here doubled the list without letting anyone do more.

// ---------------------------------------------------------------------------------------------------------------
// The router: every OAuth endpoint, mounted on one Express router (lib/router/)
// ---------------------------------------------------------------------------------------------------------------

/** Creates the Express router with every OAuth endpoint, and the bearer check for the tool server. */
export { createOAuthRouter } from './router';
/** The router and what it carries: requireBearer, wellKnown, revokeGrant, info, signInLimits. */
export type { OAuthRouter, OAuthServerInfo } from './router';
/** The router's options, the user the host app signs in, and a store for the rate limits' counters. */
export type { OAuthRouterOptions, OAuthUser, RateLimitStore } from './options';
/**
 * Registers a client on the operator's word (a machine client of the client_credentials grant); the router's
 * registerOperatorClient does the same with its own store and scopes.
 */
export { registerOperatorClient } from './grants/operator-clients';
/** What the operator says of such a client, and what registering it returns. */
export type { OperatorClient, OperatorClientOptions, OperatorGrantType } from './grants/operator-clients';
/** A resource of the host's own for the operator's clients alone (the `operatorResources` option), such as an admin API. */
export type { OperatorResource } from './grants/operator-resources';
/**
 * The trusted enterprise IdPs of the jwt-bearer grant (the `enterpriseIdps` option), each with the email domains it
 * speaks for, the ID-JAG claims findLinkedUser and findUser read, and the user they return.
 */
export type { EnterpriseIdp, IdJagClaims, IdJagUser } from './id-jag/options';
/**
 * The one form in which to compare email addresses (NFKC, lower case), or undefined for one that names no account:
 * what findUser of the jwt-bearer grant and of upstream sign-in should match on both sides.
 */
export { emailKey } from './util/email';
/**
 * Sign-in through upstream providers (the `upstream` option): who signed in, as findUser sees it, and what a plain
 * OAuth 2 provider's identity reader is given.
 */
export type { UpstreamIdentity, UpstreamIdentityContext } from './upstream/options';
/** A user's fresh upstream access token, as router.upstreamToken gives it to a tool. */
export type { UpstreamToken } from './upstream/tokens';
/** A downstream API's token for a tool's user, as router.downstreamToken gives it (RFC 8693, in process). */
export type { DownstreamToken } from './token-exchange/downstream';
/**
 * Token exchange's policy hook (the `tokenExchange` option): what an exchange asks, as the hook sees it, and the
 * refusal it may answer with.
 */
export type { TokenExchangeRefusal, TokenExchangeRequest } from './token-exchange/options';
/** The names of the rate limits, as a RateLimitStore factory is given them. */
export type { RateLimitName } from './rate-limit-options';
/** A scope catalogue: each scope with the plain words the consent page shows. */
export type { ScopeCatalogue } from './util/scopes';
/** Where each endpoint lives below the issuer by default (the `paths` option changes them). */
export { DEFAULT_PATHS } from './paths';

// ---------------------------------------------------------------------------------------------------------------
// The bearer check of the tool server (lib/middleware/bearer.ts)
// ---------------------------------------------------------------------------------------------------------------

/** What requireBearer accepts, and what it puts on req.auth. */
export type { AuthenticatedRequest, BearerAuth, RequireBearerOptions } from './middleware/bearer';
/**
 * Answers a refusal of a protected route the way requireBearer does: the error's status, `WWW-Authenticate: Bearer
 * resource_metadata=..., [scope=...,] error=..., error_description=...` (RFC 6750 §3, RFC 9728 §5.1), exposed to
 * browsers, no-store, and the error as JSON. Without an error: the bare challenge of a request with no token. With
 * DpopChallengeOptions, the DPoP challenge too (RFC 9449 §7.1), first and with the error for a DPoP request.
 */
export { refuseBearer } from './middleware/bearer-refusal';
export type { DpopChallengeOptions } from './middleware/bearer-refusal';

// ---------------------------------------------------------------------------------------------------------------
// Access tokens: signers and keys (lib/crypto/, lib/keys/)
// ---------------------------------------------------------------------------------------------------------------

/** Creates the RFC 9068 access-token signer (ES256 by default, RS256 optional), with key rotation and a JWKS. */
export { createJwtSigner } from './crypto/signer';
/** The signer, its options and the claims of its access tokens. */
export type { AccessTokenClaims, AccessTokenInput, JwtSigner, JwtSignerOptions } from './crypto/signer';
/**
 * Creates a signer over a key set kept in the store and shared by every instance: keys rotate without a cutover
 * (next, current, retired), sealed at rest with an encryption key.
 */
export { createKeySetSigner } from './keys/key-set-signer';
/** The key-set signer and its options. */
export type { KeySetSigner, KeySetSignerOptions } from './keys/key-set-signer';
/** Generates a signing key pair (EC P-256 for ES256, RSA 2048 for RS256) and returns its private KeyObject. */
export { generateSigningKey } from './crypto/keys';
/** The supported algorithms, and a published public key. */
export type { PublicJwk, SigningAlgorithm } from './crypto/keys';

// ---------------------------------------------------------------------------------------------------------------
// Stores: the storage contract and its implementations (lib/store/)
// ---------------------------------------------------------------------------------------------------------------

/** Opens a SQLite database (a path or an open better-sqlite3 Database), migrates it, and returns the default store. */
export { createSqliteStore } from './store/sqlite';
/** The SQLite store and its options. */
export type { SqliteStore, SqliteStoreOptions } from './store/sqlite';
/**
 * An in-memory store that passes the store contract suite: the runnable specification of the contract and a fast
 * store for tests. Not for production: one process, nothing durable.
 */
export { createMemoryStore } from './store/memory';
/** The in-memory store and its options (which optional capabilities it keeps). */
export type { MemoryStore, MemoryStoreOptions } from './store/memory';
/**
 * The storage contract a store implements, and the storage of a key set (which the SQLite and PostgreSQL stores
 * implement). Every record and input type of the contract is in express-mcp-oauth/store.
 */
export type { OAuthStore, SigningKeyStore } from './store/types';
/**
 * Whether an error means the store cannot be reached right now, or SQLite stayed busy past its timeout (answered 503
 * temporarily_unavailable).
 */
export { isStoreUnavailable } from './store/unavailable';

// ---------------------------------------------------------------------------------------------------------------
// Errors and audit events (lib/errors.ts, lib/events.ts)
// ---------------------------------------------------------------------------------------------------------------

/** The OAuth error class and a type guard for it. */
export { OAuthError, isOAuthError } from './errors';
/** The closed set of OAuth error codes, and what an OAuthError may carry (its status follows from its code). */
export type { OAuthErrorCode, OAuthErrorOptions } from './errors';
/** An audit event as onEvent receives it (its `type` tells which). */
export type { OAuthEvent } from './events';
