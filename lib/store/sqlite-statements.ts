// The SQLite store's statements, prepared once. Their tables are described in sqlite-schema.ts.
import type { Database, Statement } from 'better-sqlite3';

/** A grant's columns, as toGrant reads them. */
const GRANT_COLUMNS = (g: string) =>
  `${g}.grant_id, ${g}.client_id, ${g}.user_id, ${g}.scope, ${g}.resource, ${g}.created_at, ${g}.expires_at,
   ${g}.last_used_at, ${g}.revoked_at`;

/** The SQL of every statement of the SQLite store, by name. */
const SQL = {
  insertClient: `INSERT INTO oauth_clients (client_id, client_secret_hash, client_name, redirect_uris, grant_types,
         response_types, token_endpoint_auth_method, scope, metadata, issued_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  findClient: 'SELECT * FROM oauth_clients WHERE client_id = ?',
  upsertClientDocument: `INSERT INTO oauth_clients (client_id, client_secret_hash, client_name, redirect_uris, grant_types,
         response_types, token_endpoint_auth_method, scope, metadata, issued_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (client_id) DO UPDATE SET client_secret_hash = excluded.client_secret_hash,
         client_name = excluded.client_name, redirect_uris = excluded.redirect_uris, grant_types = excluded.grant_types,
         response_types = excluded.response_types, token_endpoint_auth_method = excluded.token_endpoint_auth_method,
         scope = excluded.scope, metadata = excluded.metadata, issued_at = excluded.issued_at`,
  // An expired entry may be taken over: its assertion can no longer be accepted anyway.
  useAssertionId: `INSERT INTO oauth_client_assertions (client_id, jti, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (client_id, jti) DO UPDATE SET expires_at = excluded.expires_at
         WHERE oauth_client_assertions.expires_at <= ?`,
  purgeAssertions: `DELETE FROM oauth_client_assertions WHERE (client_id, jti) IN
         (SELECT client_id, jti FROM oauth_client_assertions WHERE expires_at <= ? LIMIT ?)`,
  insertGrant: `INSERT INTO oauth_grants (grant_id, client_id, user_id, scope, resource, created_at, expires_at, last_used_at,
         revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  findGrant: `SELECT ${GRANT_COLUMNS('g')} FROM oauth_grants g WHERE g.grant_id = ? AND g.expires_at > ?`,
  grantActive: 'SELECT 1 FROM oauth_grants WHERE grant_id = ? AND expires_at > ? AND revoked_at IS NULL',
  // Only an active grant is revoked: a revoked one keeps the time of its first revocation.
  revokeGrant:
    'UPDATE oauth_grants SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL AND expires_at > ?',
  markScopeChallenge:
    'UPDATE oauth_grants SET challenged_until = ? WHERE grant_id = ? AND revoked_at IS NULL AND expires_at > ?',
  // Only a live mark is taken; an expired one stays until the next mark replaces it, harmless.
  takeScopeChallenge:
    'UPDATE oauth_grants SET challenged_until = NULL WHERE grant_id = ? AND challenged_until > ?',
  insertDevice: `INSERT INTO oauth_device_authorizations (device_code_hash, user_code_hash, client_id, scope, resource,
         expires_at, interval, status, user_id, grant_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  findDeviceByDeviceCode: 'SELECT * FROM oauth_device_authorizations WHERE device_code_hash = ?',
  findDeviceByUserCode: 'SELECT * FROM oauth_device_authorizations WHERE user_code_hash = ?',
  decideDevice: `UPDATE oauth_device_authorizations SET status = ?, user_id = ?, grant_id = ?
         WHERE device_code_hash = ? AND status = 'pending' AND expires_at > ?`,
  slowDownDevice:
    'UPDATE oauth_device_authorizations SET interval = max(interval, ?) WHERE device_code_hash = ?',
  claimDevice: `UPDATE oauth_device_authorizations SET status = 'redeemed'
         WHERE device_code_hash = ? AND status = 'approved' AND expires_at > ? RETURNING grant_id, client_id`,
  // An approval the device never redeemed made a grant nobody holds a token of: it ends with its request.
  revokeUnredeemed: `UPDATE oauth_grants SET revoked_at = ? WHERE revoked_at IS NULL AND grant_id IN
         (SELECT grant_id FROM oauth_device_authorizations WHERE status = 'approved' AND expires_at <= ?)`,
  purgeDevices: `DELETE FROM oauth_device_authorizations WHERE device_code_hash IN
         (SELECT device_code_hash FROM oauth_device_authorizations WHERE expires_at <= ? LIMIT ?)`,
  // A code exchange that issues a first refresh token marks the grant used, as a rotation does.
  markGrantUsed: 'UPDATE oauth_grants SET last_used_at = ? WHERE grant_id = ?',
  listGrants: `SELECT ${GRANT_COLUMNS('g')}, c.client_name FROM oauth_grants g JOIN oauth_clients c ON c.client_id = g.client_id
        WHERE g.user_id = ? AND g.expires_at > ? AND g.revoked_at IS NULL ORDER BY g.created_at DESC, g.grant_id DESC`,
  listClients: `SELECT c.*,
        (SELECT COUNT(*) FROM oauth_grants g WHERE g.client_id = c.client_id AND g.revoked_at IS NULL AND g.expires_at > ?)
          AS active_grants,
        (SELECT MAX(COALESCE(g.last_used_at, g.created_at)) FROM oauth_grants g WHERE g.client_id = c.client_id)
          AS grants_last_used_at
        FROM oauth_clients c WHERE c.client_id > ? ORDER BY c.client_id LIMIT ?`,
  setClientDisabled: 'UPDATE oauth_clients SET disabled_at = ? WHERE client_id = ?',
  revokeClientGrants: `UPDATE oauth_grants SET revoked_at = ? WHERE client_id = ? AND revoked_at IS NULL AND expires_at > ?
         RETURNING grant_id`,
  listAllGrants: `SELECT ${GRANT_COLUMNS('g')}, c.client_name FROM oauth_grants g JOIN oauth_clients c ON c.client_id = g.client_id
        WHERE g.grant_id < ? AND g.expires_at > ? AND g.revoked_at IS NULL ORDER BY g.grant_id DESC LIMIT ?`,
  insertCode: `INSERT INTO oauth_authorization_codes (code_hash, grant_id, client_id, user_id, redirect_uri, scope, resource,
         code_challenge, code_challenge_method, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  findCode: 'SELECT * FROM oauth_authorization_codes WHERE code_hash = ? AND expires_at > ?',
  // The atomic test-and-set of a code and its read in one statement: only one caller flips used_at from NULL.
  claimCode: `UPDATE oauth_authorization_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?
        RETURNING *`,
  insertToken: `INSERT INTO oauth_refresh_tokens (token_hash, grant_id, client_id, parent_hash, issued_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
  // A token and its grant in one statement (a consistent read), token columns under names of their own.
  findTokenWithGrant: `SELECT t.token_hash AS token_key, t.client_id AS token_client_id, t.parent_hash,
        t.issued_at AS token_issued_at, t.expires_at AS token_expires_at, g.latest_token_hash, g.latest_used_at,
        ${GRANT_COLUMNS('g')}
        FROM oauth_refresh_tokens t JOIN oauth_grants g ON g.grant_id = t.grant_id WHERE t.token_hash = ? AND t.expires_at > ?`,
  // The compare-and-set of a grant's rotation pointer (`IS ?` compares NULL as equal to NULL): moved on a first use,
  // only compared on a retry. Either way the grant must still be active.
  moveLatest: `UPDATE oauth_grants SET latest_token_hash = ?, latest_used_at = ?, last_used_at = ?
        WHERE grant_id = ? AND latest_token_hash IS ? AND revoked_at IS NULL AND expires_at > ?`,
  keepLatest: `UPDATE oauth_grants SET last_used_at = ?
        WHERE grant_id = ? AND latest_token_hash IS ? AND revoked_at IS NULL AND expires_at > ?`,
  purgeCodes: `DELETE FROM oauth_authorization_codes
        WHERE rowid IN (SELECT rowid FROM oauth_authorization_codes WHERE expires_at <= ? LIMIT ?)`,
  expiredGrants: 'SELECT grant_id FROM oauth_grants WHERE expires_at <= ? LIMIT ?',
  deleteGrantTokens:
    'DELETE FROM oauth_refresh_tokens WHERE token_hash > ? AND token_hash < ? AND grant_id = ?',
  deleteUnkeyedGrantTokens:
    "DELETE FROM oauth_refresh_tokens WHERE grant_id = ? AND instr(token_hash, '.') = 0",
  deleteGrant: 'DELETE FROM oauth_grants WHERE grant_id = ?',
  // A document client's copy no grant names (client ids of registered clients never hold a colon).
  purgeDocumentCopies: `DELETE FROM oauth_clients WHERE client_id IN (SELECT c.client_id FROM oauth_clients c
        WHERE lower(substr(c.client_id, 1, 8)) = 'https://'
          AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.client_id) LIMIT ?)`,
  // One statement, and SQLite has one writer: a grant is made before it (and keeps its client) or after (and fails).
  purgeIdleClients: `DELETE FROM oauth_clients WHERE client_id IN (SELECT c.client_id FROM oauth_clients c
        WHERE c.token_endpoint_auth_method = 'none' AND lower(substr(c.client_id, 1, 8)) <> 'https://'
          AND c.issued_at < ?
          AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.client_id)
          AND NOT EXISTS (SELECT 1 FROM oauth_device_authorizations d WHERE d.client_id = c.client_id AND d.expires_at > ?)
        LIMIT ?)`,
  listSigningKeys: 'SELECT * FROM oauth_signing_keys',
  isNextKey: "SELECT 1 FROM oauth_signing_keys WHERE kid = ? AND state = 'next'",
  // The partial unique index lets only one current key in; ON CONFLICT DO NOTHING turns the loser's insert into 0 rows.
  addSigningKey: `INSERT INTO oauth_signing_keys (kid, sealed_key, state, created_at, retired_at) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT DO NOTHING`,
  retireCurrentKey: "UPDATE oauth_signing_keys SET state = 'retired', retired_at = ? WHERE state = 'current'",
  promoteNextKey: "UPDATE oauth_signing_keys SET state = 'current' WHERE kid = ? AND state = 'next'",
  deleteRetiredKeys: "DELETE FROM oauth_signing_keys WHERE state = 'retired' AND retired_at < ?",
  // Users' upstream tokens (sqlite-upstream.ts): each atomic method is one conditional UPDATE, `@now` the store's clock.
  saveUpstream: `INSERT INTO oauth_upstream_tokens (id, provider, user_id, sealed, expires_at)
        VALUES (@id, @provider, @userId, @sealed, @expiresAt)`,
  // NOT EXISTS sees expired rows too, as the unique grant_id does: a grant never gets a second row.
  attachUpstream: `UPDATE oauth_upstream_tokens SET grant_id = @grantId, expires_at = @expiresAt
        WHERE id = @id AND grant_id IS NULL AND expires_at > @now
          AND NOT EXISTS (SELECT 1 FROM oauth_upstream_tokens WHERE grant_id = @grantId)`,
  findUpstream: 'SELECT * FROM oauth_upstream_tokens WHERE grant_id = ? AND expires_at > ?',
  // Only one caller finds the lease run out: the winner's write moves lease_until past now for the others.
  leaseUpstream: `UPDATE oauth_upstream_tokens SET lease_until = @until
        WHERE grant_id = @grantId AND version = @version AND lease_until <= @now AND expires_at > @now`,
  replaceUpstream: `UPDATE oauth_upstream_tokens SET sealed = @sealed, version = version + 1, lease_until = 0
        WHERE grant_id = @grantId AND version = @version AND expires_at > @now`,
  deleteUpstream: 'DELETE FROM oauth_upstream_tokens WHERE grant_id = ? RETURNING *',
  purgeUpstream: `DELETE FROM oauth_upstream_tokens
        WHERE rowid IN (SELECT rowid FROM oauth_upstream_tokens WHERE expires_at <= ? LIMIT ?)`,
};

/** Every statement of the SQLite store, prepared once when the store is created. */
export function prepareStatements(db: Database): Record<keyof typeof SQL, Statement> {
  const entries = Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)]);
  return Object.fromEntries(entries) as Record<keyof typeof SQL, Statement>;
}
