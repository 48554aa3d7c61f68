// The PostgreSQL schema and its migrations, recorded in oauth_schema_migrations. The tables and columns mirror the
// SQLite ones (see sqlite-schema.ts for what each holds and why secrets are hashes); times are BIGINT
// milliseconds, lists and metadata JSON text, so both stores share one row mapping. One difference: refresh tokens
// keep their foreign key (ON DELETE CASCADE) and (grant_id, issued_at) index here, which the purge's cascade reads;
// SQLite drops both for key ranges, to spare every insert a second B-tree.
import type { PoolClient } from 'pg';

const migrations = (s: string): readonly string[] => [
  `
  CREATE TABLE ${s}.oauth_clients (
    client_id TEXT PRIMARY KEY,
    client_secret_hash TEXT,
    client_name TEXT,
    redirect_uris TEXT NOT NULL,
    grant_types TEXT NOT NULL,
    response_types TEXT NOT NULL,
    token_endpoint_auth_method TEXT NOT NULL,
    scope TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    issued_at BIGINT NOT NULL
  );
  CREATE TABLE ${s}.oauth_grants (
    grant_id TEXT PRIMARY KEY,
    client_id TEXT NOT NULL REFERENCES ${s}.oauth_clients (client_id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at BIGINT
  );
  CREATE INDEX oauth_grants_user ON ${s}.oauth_grants (user_id, created_at);
  CREATE INDEX oauth_grants_client ON ${s}.oauth_grants (client_id);
  CREATE INDEX oauth_grants_expiry ON ${s}.oauth_grants (expires_at);
  CREATE TABLE ${s}.oauth_authorization_codes (
    code_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL REFERENCES ${s}.oauth_grants (grant_id) ON DELETE CASCADE,
    client_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT,
    code_challenge TEXT NOT NULL,
    code_challenge_method TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
  );
  CREATE INDEX oauth_authorization_codes_grant ON ${s}.oauth_authorization_codes (grant_id);
  CREATE INDEX oauth_authorization_codes_expiry ON ${s}.oauth_authorization_codes (expires_at);
  CREATE TABLE ${s}.oauth_refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL REFERENCES ${s}.oauth_grants (grant_id) ON DELETE CASCADE,
    client_id TEXT NOT NULL,
    parent_hash TEXT,
    issued_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT,
    superseded_at BIGINT,
    revoked_at BIGINT
  );
  CREATE INDEX oauth_refresh_tokens_grant ON ${s}.oauth_refresh_tokens (grant_id);
  CREATE INDEX oauth_refresh_tokens_parent ON ${s}.oauth_refresh_tokens (parent_hash);
  CREATE INDEX oauth_refresh_tokens_expiry ON ${s}.oauth_refresh_tokens (expires_at);
  `,
  // 2: refresh tokens expire with their grant and are purged with it (ON DELETE CASCADE): the index only slowed rotation.
  `DROP INDEX ${s}.oauth_refresh_tokens_expiry;`,
  // 3: a grant's last use is read from its newest refresh token, not written on every rotation (see sqlite-schema.ts).
  `
  DROP INDEX ${s}.oauth_refresh_tokens_grant;
  CREATE INDEX oauth_refresh_tokens_grant ON ${s}.oauth_refresh_tokens (grant_id, issued_at);
  DROP INDEX ${s}.oauth_refresh_tokens_parent;
  CREATE INDEX oauth_refresh_tokens_parent ON ${s}.oauth_refresh_tokens (parent_hash) WHERE parent_hash IS NOT NULL;
  `,
  // 4: rotation state moves to the grant (its latest first-used token; see lib/grants/rotation.ts): tokens are never updated,
  // and the parent index and the used/superseded/revoked marks go.
  `
  ALTER TABLE ${s}.oauth_grants ADD COLUMN latest_token_hash TEXT, ADD COLUMN latest_used_at BIGINT;
  UPDATE ${s}.oauth_grants g SET latest_token_hash = l.token_hash, latest_used_at = l.used_at
    FROM (SELECT DISTINCT ON (grant_id) grant_id, token_hash, used_at FROM ${s}.oauth_refresh_tokens
           WHERE used_at IS NOT NULL ORDER BY grant_id, used_at DESC, issued_at DESC) l
   WHERE l.grant_id = g.grant_id;
  DROP INDEX ${s}.oauth_refresh_tokens_parent;
  ALTER TABLE ${s}.oauth_refresh_tokens DROP COLUMN used_at, DROP COLUMN superseded_at, DROP COLUMN revoked_at;
  `,
  // 5: single-use client assertions (private_key_jwt, RFC 7523 §3), shared by every instance.
  `
  CREATE TABLE ${s}.oauth_client_assertions (
    client_id TEXT NOT NULL,
    jti TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (client_id, jti)
  );
  CREATE INDEX oauth_client_assertions_expiry ON ${s}.oauth_client_assertions (expires_at);
  `,
  // 6: the signing keys of a store-backed key set (createKeySetSigner), sealed; at most one current.
  `
  CREATE TABLE ${s}.oauth_signing_keys (
    kid TEXT PRIMARY KEY,
    sealed_key TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('next', 'current', 'retired')),
    created_at BIGINT NOT NULL,
    retired_at BIGINT
  );
  CREATE UNIQUE INDEX oauth_signing_keys_one_current ON ${s}.oauth_signing_keys (state) WHERE state = 'current';
  `,
  // 7: a code exchange writes its grant's last_used_at as a rotation does, where reads used to take the newest
  // refresh token's issued_at: grants get the newer of the two (see sqlite-schema.ts).
  `
  UPDATE ${s}.oauth_grants g SET last_used_at = newest.issued_at
    FROM (SELECT grant_id, max(issued_at) AS issued_at FROM ${s}.oauth_refresh_tokens GROUP BY grant_id) newest
   WHERE newest.grant_id = g.grant_id AND (g.last_used_at IS NULL OR g.last_used_at < newest.issued_at);
  `,
  // 8: users' upstream tokens (UpstreamTokenStore), sealed; at most one row per grant (see sqlite-schema.ts).
  `
  CREATE TABLE ${s}.oauth_upstream_tokens (
    id TEXT PRIMARY KEY,
    grant_id TEXT UNIQUE,
    provider TEXT NOT NULL,
    user_id TEXT NOT NULL,
    sealed TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    lease_until BIGINT NOT NULL DEFAULT 0,
    expires_at BIGINT NOT NULL
  );
  CREATE INDEX upstream_tokens_expiry ON ${s}.oauth_upstream_tokens (expires_at);
  `,
  // 9: until when a grant was refused a tool for want of scope (markScopeChallenge; see sqlite-schema.ts).
  `
  ALTER TABLE ${s}.oauth_grants ADD COLUMN challenged_until BIGINT;
  `,
  // 10: device authorizations (RFC 8628), by the hashes of their two codes (see sqlite-schema.ts).
  `
  CREATE TABLE ${s}.oauth_device_authorizations (
    device_code_hash TEXT PRIMARY KEY,
    user_code_hash TEXT NOT NULL UNIQUE,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT,
    expires_at BIGINT NOT NULL,
    interval INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'redeemed')),
    user_id TEXT,
    grant_id TEXT
  );
  CREATE INDEX oauth_device_authorizations_expiry ON ${s}.oauth_device_authorizations (expires_at);
  `,
  // 11: when an operator disabled a client (setClientDisabled; see sqlite-schema.ts).
  `
  ALTER TABLE ${s}.oauth_clients ADD COLUMN disabled_at BIGINT;
  `,
];

/**
 * Creates the schema if needed and applies the missing migrations (up to `target`, for tests of a migration),
 * serialised across processes by a lock.
 */
export async function migratePostgres(client: PoolClient, schema: string, target?: number): Promise<void> {
  const all = migrations(schema);
  const steps = all.slice(0, target ?? all.length);
  await client.query('BEGIN');
  try {
    // Several instances may start at once: the first takes the lock and migrates, the others then find it done.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`express-mcp-oauth:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.oauth_schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`,
    );
    const { rows } = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${schema}.oauth_schema_migrations`,
    );
    const current = rows[0]?.version ?? 0;
    if (current > all.length) {
      throw new Error(
        `express-mcp-oauth: schema ${schema} is at version ${current}, newer than this package knows (${all.length}); upgrade express-mcp-oauth.`,
      );
    }
    for (let version = current; version < steps.length; version += 1) {
      await client.query(steps[version]!);
      await client.query(
        `INSERT INTO ${schema}.oauth_schema_migrations (version, applied_at) VALUES ($1, $2)`,
        [version + 1, Date.now()],
      );
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

/** The number of migrations this package knows. */
export const POSTGRES_SCHEMA_VERSION = migrations('x').length;
