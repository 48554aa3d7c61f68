// The SQLite schema and its migrations, versioned by PRAGMA user_version.
//
// Tables (all times are integer milliseconds since the Unix epoch):
//
// oauth_clients: one row per registered client (RFC 7591), and one per Client ID Metadata Document client that a
//   user consented to (client_id = the document's https URL: the copy last consented to, saved with its grant and
//   purged once no grant names it).
//   client_id TEXT PK; client_secret_hash TEXT (SHA-256 of the secret, base64url; NULL for public clients,
//   so a stolen database file does not hand out client credentials); client_name; redirect_uris,
//   grant_types, response_types (JSON arrays); token_endpoint_auth_method; scope (space-separated);
//   metadata (JSON object of the other registered fields); issued_at.
//
// oauth_grants: one row per authorization of a client by a user, made when the user clicks "Allow".
//   grant_id TEXT PK; client_id FK; user_id; scope; resource (RFC 8707, NULL for the default); created_at;
//   expires_at (nothing issued under the grant outlives it); last_used_at (the issued_at of its newest refresh
//   token, written by the code exchange or rotation that issues it); revoked_at (NULL while active; revokes its
//   refresh tokens);
//   latest_token_hash, latest_used_at (the refresh token last used for the first time, and when: the rotation
//   rule in lib/grants/rotation.ts needs nothing else); challenged_until (NULL, or until when a tool refused for want
//   of scope sends the grant's next refresh to authorize again: lib/grants/step-up-window.ts). The bearer check reads
//   it by primary key on every tool call.
//
// oauth_authorization_codes: one row per code.
//   code_hash TEXT PK (SHA-256 of the code: a leaked database cannot be replayed as codes); grant_id FK;
//   client_id; user_id; redirect_uri; scope; resource; code_challenge, code_challenge_method (PKCE, RFC 7636);
//   expires_at; used_at (set once, atomically, by the first redemption; a second one is a replay).
//
// oauth_refresh_tokens: one row per refresh token, including used ones, which reuse detection needs; WITHOUT ROWID,
//   so the row lives in its primary key.
//   token_hash TEXT PK ("<grant id>.<SHA-256 of the token>" as crypto/refresh-token.ts makes it, or the bare hash
//   for tokens from before version 4: this store, part of the library, relies on that format for locality);
//   grant_id; client_id; parent_hash (the token it replaced); issued_at; expires_at (the grant's). Whether a token
//   is used, superseded or revoked follows from its grant (lib/grants/rotation.ts). Deleted with their grant by the purge: by
//   key range, and old-format ones through a partial index. No foreign key: a cascade would need an index on
//   grant_id that every insert pays for; every write checks the grant in the same transaction instead.
//
// oauth_upstream_tokens: one row per user's token set at an upstream provider (upstream sign-in with keepTokens).
//   id TEXT PK (hash of the random id the sign-in carries to the consent page); grant_id (UNIQUE, NULL until the user
//   consents); provider; user_id; sealed (the token set as the library sealed it: never plain text); version
//   (counts refreshes, for the compare-and-set); lease_until (0, or until when one instance refreshes); expires_at.
//   No foreign key to the grant: the row exists before its grant, and goes by its own expires_at.
//
// oauth_device_authorizations: one row per device authorization (RFC 8628), purged once expired.
//   device_code_hash TEXT PK (SHA-256 of the device code); user_code_hash TEXT UNIQUE (HMAC of the user code under
//   the router's secret: 34 bits would not survive a plain hash); client_id; scope; resource; expires_at; interval
//   (seconds); status (pending, approved, denied, redeemed); user_id and grant_id (once decided). No foreign keys:
//   the grant is made when the user approves, and the row goes by its own expires_at.
import type { Database } from 'better-sqlite3';

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE oauth_clients (
    client_id TEXT PRIMARY KEY,
    client_secret_hash TEXT,
    client_name TEXT,
    redirect_uris TEXT NOT NULL,
    grant_types TEXT NOT NULL,
    response_types TEXT NOT NULL,
    token_endpoint_auth_method TEXT NOT NULL,
    scope TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    issued_at INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE oauth_grants (
    grant_id TEXT PRIMARY KEY,
    client_id TEXT NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER
  ) STRICT;
  CREATE INDEX oauth_grants_user ON oauth_grants (user_id, created_at);
  CREATE INDEX oauth_grants_client ON oauth_grants (client_id);
  CREATE INDEX oauth_grants_expiry ON oauth_grants (expires_at);

  CREATE TABLE oauth_authorization_codes (
    code_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL REFERENCES oauth_grants (grant_id) ON DELETE CASCADE,
    client_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT,
    code_challenge TEXT NOT NULL,
    code_challenge_method TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER
  ) STRICT;
  CREATE INDEX oauth_authorization_codes_grant ON oauth_authorization_codes (grant_id);
  CREATE INDEX oauth_authorization_codes_expiry ON oauth_authorization_codes (expires_at);

  CREATE TABLE oauth_refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL REFERENCES oauth_grants (grant_id) ON DELETE CASCADE,
    client_id TEXT NOT NULL,
    parent_hash TEXT,
    issued_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER,
    superseded_at INTEGER,
    revoked_at INTEGER
  ) STRICT;
  CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id);
  CREATE INDEX oauth_refresh_tokens_parent ON oauth_refresh_tokens (parent_hash);
  CREATE INDEX oauth_refresh_tokens_expiry ON oauth_refresh_tokens (expires_at);
  `,
  // 2: refresh tokens expire with their grant, and go with it (ON DELETE CASCADE) when the grant is purged, so this
  // index only cost every rotation a page write.
  `
  DROP INDEX oauth_refresh_tokens_expiry;
  `,
  // 3: a grant's last use is its newest refresh token's issued_at (read through this index) instead of a write to the
  // grant on every rotation; first tokens (no parent) stay out of the parent index.
  `
  DROP INDEX oauth_refresh_tokens_grant;
  CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id, issued_at);
  DROP INDEX oauth_refresh_tokens_parent;
  CREATE INDEX oauth_refresh_tokens_parent ON oauth_refresh_tokens (parent_hash) WHERE parent_hash IS NOT NULL;
  `,
  // 4: rotation state moves to the grant (its latest first-used token, see lib/grants/rotation.ts), and refresh tokens are kept
  // under "<grant id>.<hash>" keys (see crypto/refresh-token.ts) in a WITHOUT ROWID table: a grant's tokens are
  // neighbours in the primary key, found and purged by key range. A rotation now writes the grant row and one
  // token-table page, where it used to mark the token used, supersede siblings through the parent index and insert
  // into a rowid table and two indexes. Tokens of the old format keep their bare-hash keys; they alone go into a
  // partial index by grant, so that they are purged with their grant. The grants' last use and latest token are
  // set from the old rows.
  `
  ALTER TABLE oauth_grants ADD COLUMN latest_token_hash TEXT;
  ALTER TABLE oauth_grants ADD COLUMN latest_used_at INTEGER;
  UPDATE oauth_grants SET (latest_token_hash, latest_used_at) = (
    SELECT t.token_hash, t.used_at FROM oauth_refresh_tokens t
     WHERE t.grant_id = oauth_grants.grant_id AND t.used_at IS NOT NULL
     ORDER BY t.used_at DESC, t.rowid DESC LIMIT 1);
  UPDATE oauth_grants SET last_used_at = coalesce(
    (SELECT max(t.issued_at) FROM oauth_refresh_tokens t WHERE t.grant_id = oauth_grants.grant_id), last_used_at);
  CREATE TABLE oauth_refresh_tokens_v4 (
    token_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    parent_hash TEXT,
    issued_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
  INSERT INTO oauth_refresh_tokens_v4
    SELECT token_hash, grant_id, client_id, parent_hash, issued_at, expires_at FROM oauth_refresh_tokens;
  DROP TABLE oauth_refresh_tokens;
  ALTER TABLE oauth_refresh_tokens_v4 RENAME TO oauth_refresh_tokens;
  CREATE INDEX oauth_refresh_tokens_unkeyed ON oauth_refresh_tokens (grant_id) WHERE instr(token_hash, '.') = 0;
  `,
  // 5: single-use client assertions (private_key_jwt, RFC 7523 §3).
  `
  CREATE TABLE oauth_client_assertions (
    client_id TEXT NOT NULL,
    jti TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (client_id, jti)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX oauth_client_assertions_expiry ON oauth_client_assertions (expires_at);
  `,
  // 6: the signing keys of a store-backed key set (createKeySetSigner), sealed; at most one current.
  `
  CREATE TABLE oauth_signing_keys (
    kid TEXT PRIMARY KEY,
    sealed_key TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('next', 'current', 'retired')),
    created_at INTEGER NOT NULL,
    retired_at INTEGER
  ) STRICT;
  CREATE UNIQUE INDEX oauth_signing_keys_one_current ON oauth_signing_keys (state) WHERE state = 'current';
  `,
  // 7: a code exchange writes its grant's last_used_at as a rotation does, where reads used to fall back to the
  // newest refresh token's issued_at while it was NULL: grants get the newer of the two.
  `
  UPDATE oauth_grants SET last_used_at = newest.issued_at
    FROM (SELECT grant_id, max(issued_at) AS issued_at FROM oauth_refresh_tokens GROUP BY grant_id) AS newest
   WHERE newest.grant_id = oauth_grants.grant_id
     AND (oauth_grants.last_used_at IS NULL OR oauth_grants.last_used_at < newest.issued_at);
  `,
  // 8: users' upstream tokens (UpstreamTokenStore), sealed; at most one row per grant.
  `
  CREATE TABLE oauth_upstream_tokens (
    id TEXT PRIMARY KEY,
    grant_id TEXT UNIQUE,
    provider TEXT NOT NULL,
    user_id TEXT NOT NULL,
    sealed TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    lease_until INTEGER NOT NULL DEFAULT 0,
    expires_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX upstream_tokens_expiry ON oauth_upstream_tokens (expires_at);
  `,
  // 9: until when a grant was refused a tool for want of scope (markScopeChallenge), for the step-up window.
  `
  ALTER TABLE oauth_grants ADD COLUMN challenged_until INTEGER;
  `,
  // 10: device authorizations (RFC 8628), by the hashes of their two codes.
  `
  CREATE TABLE oauth_device_authorizations (
    device_code_hash TEXT PRIMARY KEY,
    user_code_hash TEXT NOT NULL UNIQUE,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT,
    expires_at INTEGER NOT NULL,
    interval INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'redeemed')),
    user_id TEXT,
    grant_id TEXT
  ) STRICT;
  CREATE INDEX oauth_device_authorizations_expiry ON oauth_device_authorizations (expires_at);
  `,
  // 11: when an operator disabled a client (setClientDisabled), NULL while it is enabled.
  `
  ALTER TABLE oauth_clients ADD COLUMN disabled_at INTEGER;
  `,
];

/** The schema version this code expects. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the database up to SQLITE_SCHEMA_VERSION (or `target`, for tests of a migration), each step in its own
 * transaction. Refuses a database from a newer version of this package rather than guess at its shape.
 */
export function migrateSqlite(db: Database, target = SQLITE_SCHEMA_VERSION): void {
  // The version is read again inside each IMMEDIATE transaction, so two processes opening a new file at once
  // apply each step exactly once.
  const step = db.transaction((): boolean => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > SQLITE_SCHEMA_VERSION) {
      throw new Error(
        `express-mcp-oauth: the database is at schema version ${current}, newer than this package knows ` +
          `(${SQLITE_SCHEMA_VERSION}); upgrade express-mcp-oauth or point it at another database file.`,
      );
    }
    if (current >= target) return false;
    db.exec(MIGRATIONS[current]!);
    db.pragma(`user_version = ${current + 1}`);
    return true;
  });
  while (step.immediate()) {
    // One migration per pass until the schema is current.
  }
}
