// The storage contract: the one seam through which the library reads and writes state.
//
// A store keeps records and offers storage primitives (find, insert, a test-and-set for codes, a compare-and-set for
// refresh-token rotation, revoke); every protocol rule (PKCE, code replay, the rotation rule with its retry window
// and reuse detection, scope narrowing) is decided by the library on top of them. Each method says what it must make
// atomic. Every method may return a value or a promise and is always awaited, so a synchronous store (SQLite) and an
// asynchronous one (PostgreSQL) fit the same contract. Secrets (client secrets, authorization codes, refresh
// tokens) cross this seam only as SHA-256 hashes.
//
// Every rule a store must keep is written on OAuthStore below, and the shipped contract suite
// (express-mcp-oauth/testing) has a case for each. memory.ts keeps them all in a couple of hundred lines: read it
// beside this file.
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
 * Document (its client_id is the document's https URL). A document is fetched for whoever sends its URL, before
 * anyone consents, so the library keeps fetched documents in memory only; the store gets a copy when a user grants
 * the client access (createGrant), so that grants can name it, and drops it once no grant names it (purgeExpired).
 * A stored copy is never used to authenticate the client: the library fetches the document for that.
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
  /**
   * True while an operator has disabled the client (setClientDisabled): the library then treats it as unknown
   * (invalid_client). Absent otherwise; never set by a registration.
   */
  disabled?: true;
}

/**
 * One authorization of a client by a user: the consented scopes and resource. Revoking it ends all its tokens. The
 * store saves it as createGrant is given it; afterwards only three writes change it: revokeGrant (revokedAt), and
 * consumeAuthorizationCode and advanceRefreshToken (lastUsedAt).
 */
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
  /**
   * The issuedAt of the refresh token last issued under the grant, or null while none has been: the write that
   * issues a refresh token sets it in the same atomic step (consumeAuthorizationCode with a first refresh token, and
   * every advanceRefreshToken, a retry too). A code exchanged without a refresh token (a client without the
   * refresh_token grant) leaves it as it was. A store stores it; it does not derive it from its tokens.
   */
  lastUsedAt: number | null;
  /**
   * When the grant was revoked, by the store's own clock (revokeGrant is given no time), or null while it is not.
   * Set once: revoking again keeps the first time.
   */
  revokedAt: number | null;
}

/** A stored client as an operator's list shows it: with how many active grants name it, and when one was last used. */
export interface ClientListing extends ClientRecord {
  /** Its grants that are active now (unexpired, not revoked), by the store's clock. */
  activeGrants: number;
  /**
   * When it last got a grant or a token: the latest of its stored grants' lastUsedAt, or createdAt for a grant never
   * used (a machine client's token is a grant of its own, made when issued); null when no grant names it.
   */
  lastUsedAt: number | null;
}

/** An active grant with the name of its client, for a user's "connected apps" list. */
export interface GrantWithClient extends GrantRecord {
  /** The stored client's name when the list is read (for a document client: its newest copy's). */
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
 * A device authorization (RFC 8628 §3.1): a client with no browser at hand asked for a user's consent, given on
 * another device. Stored by the hashes of its two codes, never the codes.
 */
export interface DeviceAuthorizationRecord {
  /** The device code's hash: the device polls with the code (RFC 8628 §3.4). */
  deviceCodeHash: SecretHash;
  /**
   * The user code's hash, keyed with the router's secret: a user code is short enough to be typed, so a plain hash
   * of it would be reversed by trying every code.
   */
  userCodeHash: SecretHash;
  clientId: string;
  scopes: string[];
  resource: string | null;
  expiresAt: number;
  /** The polling interval the client was told, in seconds (RFC 8628 §3.2). */
  interval: number;
  /** pending until the user decides; approved or denied then; redeemed once the device has its tokens. */
  status: 'pending' | 'approved' | 'denied' | 'redeemed';
  /** The user who decided, and, when approved, the grant made for it. */
  userId: string | null;
  grantId: string | null;
}

/** The outcome of redeeming a device authorization: only the first call on an approved one gets its grant. */
export type RedeemDeviceResult =
  { status: 'redeemed'; grant: GrantRecord | undefined } | { status: 'not_redeemed' };

/**
 * The key a refresh token is stored under, derived by the library from the token (crypto/refresh-token.ts). Opaque
 * to a store: a string of at most 512 characters, compared only for equality. A store needs nothing of its shape:
 * each RefreshTokenRecord carries its grantId.
 */
export type RefreshTokenKey = string & { readonly __brand: 'RefreshTokenKey' };

/**
 * A refresh token, stored by key. A stored token never changes: whether it is still current is decided by the
 * library from its grant's rotation pointer (see RefreshTokenLookup), and it is revoked and expires with its grant.
 */
export interface RefreshTokenRecord {
  key: RefreshTokenKey;
  grantId: string;
  clientId: string;
  /** The token this one was issued in exchange for, or null for the first of a grant. */
  parentKey: RefreshTokenKey | null;
  issuedAt: number;
  /** Always its grant's expiresAt. */
  expiresAt: number;
}

/**
 * A grant's rotation pointer: its refresh token that was most recently used for the first time, and when. The
 * library's rotation rule (RFC 9700 §4.14.2) needs nothing else to tell a first use, a retry and a reuse apart.
 */
export interface RotationPointer {
  key: RefreshTokenKey;
  usedAt: number;
}

/** A refresh token read with its grant, as the rotation rule needs them: one consistent read. */
export interface RefreshTokenLookup {
  token: RefreshTokenRecord;
  /** The token's grant as findGrant gives it, revoked or not. */
  grant: GrantRecord;
  /** The grant's rotation pointer, or null while none of its tokens has been used. */
  latestUsed: RotationPointer | null;
}

/** What the library asks of advanceRefreshToken: a compare-and-set of the rotation pointer and one insert. */
export interface AdvanceRefreshTokenInput {
  grantId: string;
  /** The pointer's key as the library read it (null: no token used yet); nothing happens unless it still is. */
  expectedLatestUsed: RefreshTokenKey | null;
  /** The pointer's new value (a first use), or absent to leave it as it is (a retry of the latest token). */
  latestUsed?: RotationPointer;
  /** The successor to insert. Its issuedAt is also the grant's new lastUsedAt. */
  successor: RefreshTokenRecord;
}

/**
 * The storage contract. Rules every method keeps:
 * - Clock. The store owns the clock it compares lifetimes against and reads the time of its own writes from
 *   (revokedAt, a first refresh token's issuedAt): an option of each implementation (`now`), so that tests can
 *   freeze it. Times the caller passes (issuedAt, usedAt, expiresAt) are stored as given.
 * - Lifetimes. A record with an expiresAt lives while now < expiresAt; from that instant on it has expired: it is
 *   never returned nor acted on (an expired code is not consumed, an expired grant neither revoked nor advanced, an
 *   expired assertion id may be used again), until purgeExpired deletes it.
 * - Copies. Records cross the seam as copies: changing an object after passing it in, or one read out, changes
 *   nothing stored.
 * - Refusals. A write the rules refuse (a taken client_id or grant id, a grant of a client that is not stored)
 *   throws or rejects and changes nothing.
 * - Atomicity. What a method calls atomic holds across connections and instances, not only within one process.
 * - Optional capabilities. A store may leave out useAssertionId and createGrantWithClient: the library then turns
 *   off the feature each serves, and says so once at start.
 */
export interface OAuthStore {
  /** Saves a new client. Its client_id is unique: a taken one is refused, and the stored client stays as it was. */
  registerClient(client: ClientRecord): MaybePromise<void>;
  /** The client with this id, or undefined. */
  findClient(clientId: string): MaybePromise<ClientRecord | undefined>;
  /**
   * Records the `jti` of a client's JWT assertion (RFC 7523 §3, item 7) until `expiresAt`. Atomic: true for the
   * first call with this (clientId, jti), false for every later one while the first is unexpired, whatever the
   * connection or instance. This is what makes an assertion single-use across instances.
   * Optional: a store without it turns private_key_jwt off (the router says so once, at start).
   */
  useAssertionId?(clientId: string, jti: string, expiresAt: number): MaybePromise<boolean>;

  /** Saves a new grant as given. Refused if its grantId is taken or its client is not stored. */
  createGrant(grant: GrantRecord): MaybePromise<void>;
  /**
   * Saves a new grant and, in the same atomic step, `client`: the validated copy of a Client ID Metadata Document
   * (its clientId is the grant's) that the user just consented to, replacing any copy stored before, so that the
   * grant always names a stored client. Both or neither: if the grant is refused (its id taken), the stored copy
   * stays as it was. The purge must never remove a copy between the two writes (see purgeExpired). Optional: a store
   * without it turns Client ID Metadata Documents off (the router says so once, at start).
   */
  createGrantWithClient?(grant: GrantRecord, client: ClientRecord): MaybePromise<void>;
  /**
   * The grant with this id, revoked or not, until it expires (a revoked grant's tokens are still recognised as
   * revoked); undefined once it has expired, or for an unknown id.
   */
  findGrant(grantId: string): MaybePromise<GrantRecord | undefined>;
  /** Whether the grant exists, is unexpired and is not revoked. The bearer check calls it on every request. */
  isGrantActive(grantId: string): MaybePromise<boolean>;
  /**
   * Marks an active grant (unexpired, not revoked) as refused a tool for want of scope, until `until`, replacing an
   * earlier mark; does nothing for any other grant. The mark lives with the grant (it goes when the grant is purged)
   * and is never part of the GrantRecord read back. Optional, with takeScopeChallenge: a store without them turns
   * off the step-up window (the router's stepUpWindowMs).
   */
  markScopeChallenge?(grantId: string, until: number): MaybePromise<void>;
  /**
   * A test-and-clear, atomic across connections and instances: if the grant's mark is later than the store's clock,
   * clears it and returns true; otherwise returns false (clearing an expired mark or not). Of concurrent calls for
   * one mark, at most one returns true.
   */
  takeScopeChallenge?(grantId: string): MaybePromise<boolean>;

  /**
   * Saves a new device authorization, pending. Refused (thrown) if its device code hash or its user code hash is
   * taken by any stored one, expired or not: the library then makes new codes. Optional, with the three methods
   * below: a store without them turns the device authorization grant off.
   */
  saveDeviceAuthorization?(record: DeviceAuthorizationRecord): MaybePromise<void>;
  /** The device authorization whose device code, or user code, has this hash: until it is purged, expired or not. */
  findDeviceAuthorization?(
    hash: SecretHash,
    by: 'device_code' | 'user_code',
  ): MaybePromise<DeviceAuthorizationRecord | undefined>;
  /**
   * A test-and-set, atomic across connections and instances: if the device authorization is pending and unexpired,
   * records the user's decision (approved with `userId` and `grantId`, or denied with `userId` and no grant) and
   * returns true. Otherwise changes nothing and returns false.
   */
  decideDeviceAuthorization?(
    deviceCodeHash: SecretHash,
    decision: { approved: boolean; userId: string; grantId: string | null },
  ): MaybePromise<boolean>;
  /**
   * Raises the device authorization's interval to `interval` seconds if it is lower (RFC 8628 §3.5: after a
   * slow_down, the device must wait 5 seconds more on every later poll); never lowers it. Optional: without it a
   * slow_down is answered, but the interval the library enforces stays the first one.
   */
  slowDownDeviceAuthorization?(deviceCodeHash: SecretHash, interval: number): MaybePromise<void>;
  /**
   * A test-and-set, atomic across connections and instances: if the device authorization is approved and unexpired,
   * marks it redeemed and returns its grant if still active (as consumeAuthorizationCode does, inserting
   * `firstRefreshToken` in the same step when given and the grant is active). Every other call gets not_redeemed.
   */
  redeemDeviceAuthorization?(
    deviceCodeHash: SecretHash,
    firstRefreshToken?: { key: RefreshTokenKey },
  ): MaybePromise<RedeemDeviceResult>;
  /**
   * Revokes an active grant (unexpired, not revoked): sets its revokedAt to the store's own clock and returns true.
   * Otherwise changes nothing and returns false, so a second revocation keeps the first one's time. Revoking a grant
   * revokes every refresh token issued under it: the store reads each token with its grant (findRefreshToken).
   */
  revokeGrant(grantId: string): MaybePromise<boolean>;
  /**
   * The active grants of a user (unexpired, not revoked), newest first: by createdAt, and grants created in the same
   * millisecond by grant id, both descending, comparing ids by code unit (the library's ids are time-ordered). Each
   * with its client's name as stored when the list is read.
   */
  listActiveGrants(userId: string): MaybePromise<GrantWithClient[]>;
  /**
   * For operators: up to `limit` stored clients (registered ones and stored document copies) whose ids sort after
   * `after` (by code unit), in that order; the next page starts after the last one returned. Each as findClient reads
   * it, with its count of active grants and its grants' last use. Optional, with listGrants: a store without them
   * gives an administrators' console nothing to list.
   */
  listClients?(page: { after?: string; limit: number }): MaybePromise<ClientListing[]>;
  /**
   * For operators: up to `limit` active grants of every user (unexpired, not revoked), newest first by grant id
   * (the library's ids are time-ordered), those whose ids sort before `before` when it is given; each with its
   * client's name as stored when the list is read.
   */
  listGrants?(page: { before?: string; limit: number }): MaybePromise<GrantWithClient[]>;
  /**
   * For operators: disables (true) or enables (false) a stored client, and returns whether it exists. A disabled
   * client is read back with `disabled: true`. Optional, with revokeClientGrants.
   */
  setClientDisabled?(clientId: string, disabled: boolean): MaybePromise<boolean>;
  /**
   * For operators: revokes every active grant of the client (by the store's clock, as revokeGrant) and returns their
   * ids; the grants of other clients, and those already ended, are left as they are.
   */
  revokeClientGrants?(clientId: string): MaybePromise<string[]>;
  /**
   * The client lifecycle: deletes up to `batchSize` (default 500) idle registrations and returns how many. A
   * registration is idle when it is a public client (token_endpoint_auth_method none; never a document copy, whose
   * id starts with `https://`, nor a confidential client such as the operator's), registered before
   * `registeredBefore`, and named by no stored grant (active, revoked or expired: grants go by purgeExpired first)
   * and no unexpired device authorization. Never one with a live grant, whatever runs at the same time on any
   * instance: a grant being made for it either keeps it or fails for want of its client. Optional.
   */
  purgeIdleClients?(registeredBefore: number, batchSize?: number): MaybePromise<number>;

  /** Saves a new authorization code, unused. */
  saveAuthorizationCode(code: AuthorizationCodeRecord): MaybePromise<void>;
  /** The unexpired code with this hash, used or not, without consuming it; undefined otherwise. */
  findAuthorizationCode(codeHash: SecretHash): MaybePromise<AuthorizationCodeRecord | undefined>;
  /**
   * A test-and-set, atomic across connections and instances: marks the unexpired code used if it was not. Only the
   * first call gets `consumed`, with the code's grant if it is still active (unexpired, not revoked; otherwise
   * `grant: undefined` and nothing else is written); every later one gets `replayed` while the code lives, and
   * `not_found` once it has expired. Given `firstRefreshToken` and an active grant, the same atomic step inserts the
   * grant's first refresh token (parentKey null, the code's clientId, issuedAt now by the store's clock, expiring
   * with the grant) and sets the grant's lastUsedAt to that issuedAt, in the record stored and the one returned: one
   * write for the whole code exchange. Without `firstRefreshToken` the grant is returned as stored.
   */
  consumeAuthorizationCode(
    codeHash: SecretHash,
    firstRefreshToken?: { key: RefreshTokenKey },
  ): MaybePromise<ConsumeCodeResult>;

  /**
   * The unexpired refresh token with this key and its grant (revoked or not) with the grant's rotation pointer, read
   * together: the pointer must be at least as new as the token (a token and the pointer move that made it are
   * written in one step, so reading both in one statement or transaction is enough). Undefined otherwise.
   */
  findRefreshToken(key: RefreshTokenKey): MaybePromise<RefreshTokenLookup | undefined>;
  /**
   * A compare-and-set, atomic across connections and instances: if the grant exists, is unexpired and not revoked,
   * and its rotation pointer's key equals `expectedLatestUsed` (both null counts as equal), then set the pointer to
   * `latestUsed` when given, set the grant's lastUsedAt to `successor.issuedAt`, insert `successor`, and return true.
   * Otherwise change nothing and return false. Of several concurrent calls with the same expected key that move
   * the pointer, at most one returns true.
   */
  advanceRefreshToken(input: AdvanceRefreshTokenInput): MaybePromise<boolean>;

  /**
   * Deletes expired records in batches, up to `batchSize` (default 500) of EACH kind per call, so that a backlog of
   * one kind never holds up another: expired codes; expired grants, each with its refresh tokens (which expire with
   * it) and codes; expired assertion ids; expired device authorizations (revoking first the grant of one approved but
   * never redeemed: nobody holds a token of it); and stored copies of Client ID Metadata Documents (clients whose id starts
   * with `https://`, in any case) that no grant names any more. Registered clients are never deleted. Returns how many
   * codes, grants, assertion ids and copies it deleted (the refresh tokens and codes that go with their grant are
   * not counted), so 0 means nothing of those kinds is left to delete: call it again until it returns 0. The
   * library never calls it; the host app does, on a schedule. A copy saved by a createGrantWithClient running at the
   * same time, on any instance, is never removed from under its grant.
   */
  purgeExpired(batchSize?: number): MaybePromise<number>;
}

/** Where a signing key is in its life: published ahead (next), signing (current), or verifying only (retired). */
export type SigningKeyState = 'next' | 'current' | 'retired';

/** A signing key of a store-backed key set (see createKeySetSigner). */
export interface SigningKeyRecord {
  kid: string;
  /** The private key (PKCS#8 PEM) as the library sealed it with the key set's encryption key; opaque to the store. */
  sealedKey: string;
  state: SigningKeyState;
  createdAt: number;
  /** When it stopped signing, or null while it has not. */
  retiredAt: number | null;
}

/**
 * The storage of a key set shared by every instance (the SQLite, PostgreSQL and memory stores implement it). Several
 * instances call it at once; each method says what it must make atomic. Its times are the caller's.
 */
export interface SigningKeyStore {
  /** Every stored key, in any order. */
  listSigningKeys(): MaybePromise<SigningKeyRecord[]>;
  /**
   * Inserts a key. Atomic: a key in state `current` is inserted only while no key is current (of instances racing to
   * create the first key, exactly one wins); returns whether it was inserted. A kid is unique.
   */
  addSigningKey(key: SigningKeyRecord): MaybePromise<boolean>;
  /**
   * Atomic: if `kid` is in state `next`, the current key (if any) becomes `retired` at `at` and `kid` becomes
   * `current`, and it returns true. Otherwise nothing changes and it returns false.
   */
  promoteSigningKey(kid: string, at: number): MaybePromise<boolean>;
  /** Deletes the keys retired before `before`; returns how many. */
  deleteRetiredSigningKeys(before: number): MaybePromise<number>;
}

/**
 * A user's tokens at an upstream provider (upstream sign-in with `keepTokens`), kept for the tools that call the
 * provider's API on the user's behalf. `sealed` is the token set as the library sealed it (AES-256-GCM under a key
 * derived from the router's secret): opaque to the store, never in plain text.
 */
export interface UpstreamTokensRecord {
  /**
   * The row's key: the hash (hashSecret) of a random id that the browser's sign-in carries from the upstream
   * callback to the consent page. Unique.
   */
  id: SecretHash;
  /** The provider's id, as the `upstream` option names it. */
  provider: string;
  /** The host app's user the upstream identity was mapped to. */
  userId: string;
  sealed: string;
  /** The grant the tokens belong to, or null until the user consents (attachUpstreamTokens). */
  grantId: string | null;
  /** Counts replacements (a refresh); starts at 0. */
  version: number;
  /** Until when one caller holds the right to refresh (leaseUpstreamTokens), by the store's clock; 0 when none. */
  leaseUntil: number;
  expiresAt: number;
}

/**
 * The storage of users' upstream tokens (the SQLite, PostgreSQL and memory stores implement it; createOAuthRouter
 * asks for it when a provider keeps tokens). Lifetimes follow OAuthStore's rules (an expired row is never returned
 * nor acted on), and purgeExpired deletes expired rows with the rest. Each atomic method holds across instances.
 */
export interface UpstreamTokenStore {
  /** Saves a new row (grantId null, version 0, leaseUntil 0). Refused if its id is taken. */
  saveUpstreamTokens(
    record: Pick<UpstreamTokensRecord, 'id' | 'provider' | 'userId' | 'sealed' | 'expiresAt'>,
  ): MaybePromise<void>;
  /**
   * Atomic: if the row `id` is unexpired and attached to no grant, and no row is attached to `grantId`, attaches it
   * to `grantId` with the new `expiresAt` and returns true (once: a second call for the same id returns false).
   * Otherwise changes nothing and returns false.
   */
  attachUpstreamTokens(id: SecretHash, grantId: string, expiresAt: number): MaybePromise<boolean>;
  /** The unexpired row attached to this grant, or undefined. */
  findUpstreamTokens(grantId: string): MaybePromise<UpstreamTokensRecord | undefined>;
  /**
   * Atomic: if the grant's row is unexpired, at `version`, and not leased (leaseUntil at or before the store's now),
   * sets leaseUntil to `until` and returns true; otherwise false. Of concurrent callers at most one wins: the one
   * that refreshes upstream.
   */
  leaseUpstreamTokens(grantId: string, version: number, until: number): MaybePromise<boolean>;
  /**
   * Atomic compare-and-set: if the grant's row is unexpired and at `version`, stores `sealed`, increments the
   * version, clears the lease and returns true; otherwise changes nothing and returns false.
   */
  replaceUpstreamTokens(grantId: string, version: number, sealed: string): MaybePromise<boolean>;
  /** Deletes the grant's row, expired or not, and returns what it held (undefined when there was none). */
  deleteUpstreamTokens(grantId: string): MaybePromise<UpstreamTokensRecord | undefined>;
}
