// The PostgreSQL store, for several instances behind a load balancer: every atomic operation is one conditional
// statement or one transaction that locks the grant row, so concurrent instances cannot both win.
import type { Pool, PoolClient, PoolConfig, QueryResultRow } from 'pg';
import { migratePostgres } from './schema';
import { postgresUpstreamTokens } from './upstream';
import {
  mapRow,
  toClient,
  toClientListing,
  toCode,
  toDeviceAuthorization,
  toGrant,
  toRefreshLookup,
  toSigningKey,
  type Row,
} from '../store/rows';
import type {
  ClientRecord,
  GrantRecord,
  RefreshTokenKey,
  GrantWithClient,
  OAuthStore,
  SigningKeyStore,
  UpstreamTokenStore,
} from '../store/types';

/** Saves a document's copy over the one stored before (documents change; the copy is the one last consented to). */
const UPSERT_DOCUMENT = `ON CONFLICT (client_id) DO UPDATE SET client_secret_hash = excluded.client_secret_hash,
  client_name = excluded.client_name, redirect_uris = excluded.redirect_uris, grant_types = excluded.grant_types,
  response_types = excluded.response_types, token_endpoint_auth_method = excluded.token_endpoint_auth_method,
  scope = excluded.scope, metadata = excluded.metadata, issued_at = excluded.issued_at`;

/** Options of createPostgresStore. */
export interface PostgresStoreOptions {
  /** The schema that holds the tables (created if missing). Default "public". */
  schema?: string;
  /** Pool settings when a connection string is given (max connections, timeouts, ssl). */
  pool?: Omit<PoolConfig, 'connectionString'>;
  /** The clock lifetimes are compared against, in milliseconds. Default Date.now. */
  now?: () => number;
  /**
   * Told when an idle connection of a pool the store created breaks (the server restarted, an administrator
   * ended it, the network dropped): the pool discards it and opens a new one on demand. Default: a console warning.
   */
  onConnectionError?: (error: Error) => void;
}

/**
 * The PostgreSQL store: the storage contract, its pool, the migration it ran, and a clean shutdown.
 * It keeps both optional capabilities of OAuthStore, so they are required here.
 */
export interface PostgresStore extends Required<OAuthStore>, SigningKeyStore, UpstreamTokenStore {
  readonly pool: Pool;
  /** Resolves once the schema is migrated; rejects (and so does every call) if the database cannot be reached. */
  readonly ready: Promise<void>;
  /** Waits for the calls under way, then closes the pool if the store created it. */
  close(): Promise<void>;
}

// BIGINT columns hold milliseconds, well within Number's exact range: read them as numbers, not strings.
const types = {
  getTypeParser: (oid: number, format?: string) =>
    oid === 20 ? Number : require('pg').types.getTypeParser(oid, format),
};

/**
 * Connects to PostgreSQL (a connection string, or a pg Pool the host app owns), migrates the schema and returns
 * the store. Requires the `pg` package.
 */
export function createPostgresStore(
  poolOrConnectionString: Pool | string,
  options: PostgresStoreOptions = {},
): PostgresStore {
  const schema = options.schema ?? 'public';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new TypeError(
      `createPostgresStore: schema "${schema}" must be a lower-case SQL identifier, e.g. "oauth".`,
    );
  }
  const ownsPool = typeof poolOrConnectionString === 'string';
  let pool: Pool;
  if (ownsPool) {
    let pg: typeof import('pg');
    try {
      pg = require('pg');
    } catch {
      throw new Error('createPostgresStore needs the "pg" package: npm install pg');
    }
    pool = new pg.Pool({
      max: 10,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: 5_000,
      ...options.pool,
      connectionString: poolOrConnectionString,
    });
    // pg emits an idle connection's failure on the pool; with no listener that 'error' event would crash the
    // process, for a fault the pool recovers from by itself. A pool the host app passes in is the app's to watch.
    const onConnectionError =
      options.onConnectionError ??
      ((error: Error) =>
        console.warn(`express-mcp-oauth: a PostgreSQL connection broke while idle: ${error.message}`));
    pool.on('error', onConnectionError);
  } else if (
    poolOrConnectionString &&
    typeof poolOrConnectionString.query === 'function' &&
    typeof poolOrConnectionString.connect === 'function'
  ) {
    pool = poolOrConnectionString;
  } else {
    throw new TypeError('createPostgresStore: pass a postgres:// connection string or a pg Pool.');
  }
  const now = options.now ?? Date.now;
  const t = (table: string) => `${schema}.${table}`;

  const ready = withClient(pool, (client) => migratePostgres(client, schema));
  // Reported through `ready` and every call; not an unhandled rejection meanwhile.
  ready.catch(() => undefined);

  async function query<R extends QueryResultRow = Row>(
    text: string,
    values: unknown[] = [],
    on: Pool | PoolClient = pool,
  ) {
    await ready;
    return on.query<R>({ text, values, types });
  }
  const one = async (text: string, values: unknown[]) => (await query(text, values)).rows[0];

  async function transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    await ready;
    return withClient(pool, async (client) => {
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  /**
   * In a transaction that just claimed a code or a device approval: its grant, locked, while it is active, with its
   * first refresh token inserted and its last use set (consumeAuthorizationCode, redeemDeviceAuthorization).
   */
  async function grantWithFirstToken(
    sql: (text: string, values: unknown[]) => Promise<Row | undefined>,
    grantId: string,
    clientId: string,
    at: number,
    firstRefreshToken: { key: RefreshTokenKey } | undefined,
  ): Promise<GrantRecord | undefined> {
    const grantRow = await sql(
      `SELECT * FROM ${t('oauth_grants')} WHERE grant_id = $1 AND expires_at > $2 FOR UPDATE`,
      [grantId, at],
    );
    if (!grantRow || grantRow.revoked_at !== null) return undefined;
    if (!firstRefreshToken) return toGrant(grantRow);
    await sql(
      `INSERT INTO ${t('oauth_refresh_tokens')} (token_hash, grant_id, client_id, parent_hash, issued_at, expires_at) VALUES ($1, $2, $3, NULL, $4, $5)`,
      [firstRefreshToken.key, grantId, clientId, at, grantRow.expires_at],
    );
    // The grant's last use is its newest refresh token's issuance, written with it (as a rotation does).
    await sql(`UPDATE ${t('oauth_grants')} SET last_used_at = $2 WHERE grant_id = $1`, [grantId, at]);
    return { ...toGrant(grantRow), lastUsedAt: at };
  }

  const grantColumns = `g.grant_id, g.client_id, g.user_id, g.scope, g.resource, g.created_at, g.expires_at,
    g.last_used_at, g.revoked_at`;

  // A grant's refresh tokens are revoked with it: every read of a token goes through its grant. Only an active grant
  // is revoked: a revoked one keeps the time of its first revocation.
  const revokeGrantSql = `WITH g AS (UPDATE ${t('oauth_grants')} SET revoked_at = $2
      WHERE grant_id = $1 AND revoked_at IS NULL AND expires_at > $2 RETURNING grant_id)
    SELECT count(*)::int AS revoked FROM g`;

  const saveClient = async (c: ClientRecord, onConflict: string, on: Pool | PoolClient = pool) => {
    await query(
      `INSERT INTO ${t('oauth_clients')} (client_id, client_secret_hash, client_name, redirect_uris, grant_types, response_types,
         token_endpoint_auth_method, scope, metadata, issued_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ${onConflict}`,
      [
        c.clientId,
        c.clientSecretHash,
        c.clientName,
        JSON.stringify(c.redirectUris),
        JSON.stringify(c.grantTypes),
        JSON.stringify(c.responseTypes),
        c.tokenEndpointAuthMethod,
        c.scope,
        JSON.stringify(c.metadata ?? {}),
        c.issuedAt,
      ],
      on,
    );
  };

  const insertGrant = async (g: GrantRecord, on: Pool | PoolClient = pool) => {
    await query(
      `INSERT INTO ${t('oauth_grants')} (grant_id, client_id, user_id, scope, resource, created_at, expires_at, last_used_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        g.grantId,
        g.clientId,
        g.userId,
        g.scopes.join(' '),
        g.resource,
        g.createdAt,
        g.expiresAt,
        g.lastUsedAt,
        g.revokedAt,
      ],
      on,
    );
  };

  /** The advisory lock that orders consents (shared) and the purge of document copies (exclusive). */
  const documentCopiesLock = `express-mcp-oauth:document-copies:${schema}`;

  return {
    pool,
    ready,
    async close() {
      await ready.catch(() => undefined);
      if (ownsPool) await pool.end();
    },

    registerClient: (client) => saveClient(client, ''),
    findClient: async (clientId) =>
      mapRow(await one(`SELECT * FROM ${t('oauth_clients')} WHERE client_id = $1`, [clientId]), toClient),
    // One statement: the primary key decides between concurrent callers on every instance. An expired entry may be
    // taken over, as its assertion can no longer be accepted anyway.
    useAssertionId: async (clientId, jti, expiresAt) =>
      (await one(
        `INSERT INTO ${t('oauth_client_assertions')} (client_id, jti, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (client_id, jti) DO UPDATE SET expires_at = excluded.expires_at
         WHERE ${t('oauth_client_assertions')}.expires_at <= $4 RETURNING 1`,
        [clientId, jti, expiresAt, now()],
      )) !== undefined,

    createGrant: (g) => insertGrant(g),
    async createGrantWithClient(g, clientDocument) {
      if (clientDocument.clientId !== g.clientId)
        throw new TypeError("createGrantWithClient: the client is not the grant's client.");
      // Shared with every other consent, exclusive with the purge of copies: a purge on any instance either ran
      // before (the copy is saved anew here) or waits until this grant names the copy.
      await transaction(async (client) => {
        await client.query('SELECT pg_advisory_xact_lock_shared(hashtext($1))', [documentCopiesLock]);
        await saveClient(clientDocument, UPSERT_DOCUMENT, client);
        await insertGrant(g, client);
      });
    },
    findGrant: async (grantId) =>
      mapRow(
        await one(
          `SELECT ${grantColumns} FROM ${t('oauth_grants')} g WHERE g.grant_id = $1 AND g.expires_at > $2`,
          [grantId, now()],
        ),
        toGrant,
      ),
    isGrantActive: async (grantId) =>
      (await one(
        `SELECT 1 FROM ${t('oauth_grants')} WHERE grant_id = $1 AND expires_at > $2 AND revoked_at IS NULL`,
        [grantId, now()],
      )) !== undefined,
    revokeGrant: async (grantId) =>
      ((await one(revokeGrantSql, [grantId, now()])) as { revoked: number }).revoked > 0,
    async saveDeviceAuthorization(record) {
      await query(
        `INSERT INTO ${t('oauth_device_authorizations')} (device_code_hash, user_code_hash, client_id, scope, resource,
          expires_at, interval, status, user_id, grant_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          record.deviceCodeHash,
          record.userCodeHash,
          record.clientId,
          record.scopes.join(' '),
          record.resource,
          record.expiresAt,
          record.interval,
          record.status,
          record.userId,
          record.grantId,
        ],
      );
    },
    findDeviceAuthorization: async (hash, by) =>
      mapRow(
        await one(
          `SELECT * FROM ${t('oauth_device_authorizations')} WHERE ${by === 'device_code' ? 'device_code_hash' : 'user_code_hash'} = $1`,
          [hash],
        ),
        toDeviceAuthorization,
      ),
    decideDeviceAuthorization: async (deviceCodeHash, { approved, userId, grantId }) =>
      (await one(
        `UPDATE ${t('oauth_device_authorizations')} SET status = $2, user_id = $3, grant_id = $4
          WHERE device_code_hash = $1 AND status = 'pending' AND expires_at > $5 RETURNING 1`,
        [deviceCodeHash, approved ? 'approved' : 'denied', userId, approved ? grantId : null, now()],
      )) !== undefined,
    slowDownDeviceAuthorization: async (deviceCodeHash, interval) => {
      await query(
        `UPDATE ${t('oauth_device_authorizations')} SET interval = GREATEST(interval, $2) WHERE device_code_hash = $1`,
        [deviceCodeHash, interval],
      );
    },
    redeemDeviceAuthorization: (deviceCodeHash, firstRefreshToken) =>
      transaction(async (client) => {
        const at = now();
        const sql = (text: string, values: unknown[]) =>
          query(text, values, client).then((result) => result.rows[0]);
        // The conditional UPDATE is the atomic test-and-set, as consumeAuthorizationCode's.
        const won = await sql(
          `UPDATE ${t('oauth_device_authorizations')} SET status = 'redeemed'
            WHERE device_code_hash = $1 AND status = 'approved' AND expires_at > $2 RETURNING grant_id, client_id`,
          [deviceCodeHash, at],
        );
        if (!won) return { status: 'not_redeemed' } as const;
        const grant = await grantWithFirstToken(
          sql,
          won.grant_id as string,
          won.client_id as string,
          at,
          firstRefreshToken,
        );
        return { status: 'redeemed', grant } as const;
      }),
    async markScopeChallenge(grantId, until) {
      await query(
        `UPDATE ${t('oauth_grants')} SET challenged_until = $2
          WHERE grant_id = $1 AND revoked_at IS NULL AND expires_at > $3`,
        [grantId, until, now()],
      );
    },
    // One UPDATE: of two instances taking the same mark, the second finds it cleared once the first's row lock goes.
    takeScopeChallenge: async (grantId) =>
      (await one(
        `UPDATE ${t('oauth_grants')} SET challenged_until = NULL
          WHERE grant_id = $1 AND challenged_until > $2 RETURNING 1`,
        [grantId, now()],
      )) !== undefined,
    setClientDisabled: async (clientId, disabled) =>
      (await one(`UPDATE ${t('oauth_clients')} SET disabled_at = $2 WHERE client_id = $1 RETURNING 1`, [
        clientId,
        disabled ? now() : null,
      ])) !== undefined,
    async revokeClientGrants(clientId) {
      const at = now();
      const { rows } = await query(
        `UPDATE ${t('oauth_grants')} SET revoked_at = $2
          WHERE client_id = $1 AND revoked_at IS NULL AND expires_at > $2 RETURNING grant_id`,
        [clientId, at],
      );
      return rows.map((row) => row.grant_id as string);
    },
    async listClients({ after, limit }) {
      const { rows } = await query(
        `SELECT c.*,
            (SELECT COUNT(*) FROM ${t('oauth_grants')} g
              WHERE g.client_id = c.client_id AND g.revoked_at IS NULL AND g.expires_at > $3) AS active_grants,
            (SELECT MAX(COALESCE(g.last_used_at, g.created_at)) FROM ${t('oauth_grants')} g
              WHERE g.client_id = c.client_id) AS grants_last_used_at
          FROM ${t('oauth_clients')} c WHERE ($1::text IS NULL OR c.client_id COLLATE "C" > $1)
          ORDER BY c.client_id COLLATE "C" LIMIT $2`,
        [after ?? null, limit, now()],
      );
      return rows.map(toClientListing);
    },
    async listGrants({ before, limit }) {
      const { rows } = await query(
        `SELECT ${grantColumns}, c.client_name FROM ${t('oauth_grants')} g JOIN ${t('oauth_clients')} c ON c.client_id = g.client_id
          WHERE ($1::text IS NULL OR g.grant_id COLLATE "C" < $1) AND g.expires_at > $2 AND g.revoked_at IS NULL
          ORDER BY g.grant_id COLLATE "C" DESC LIMIT $3`,
        [before ?? null, now(), limit],
      );
      return rows.map((row): GrantWithClient => ({
        ...toGrant(row),
        clientName: row.client_name as string | null,
      }));
    },
    // The candidates are locked first (FOR UPDATE), then checked again by a statement of its own, which sees every
    // grant committed by then: a grant whose insert checked its client before the lock has committed (its key share
    // holds the lock back until then); one that comes after waits, and fails for want of its client. Without this the
    // DELETE could cascade to a grant made meanwhile.
    purgeIdleClients: (registeredBefore, batchSize = 500) =>
      transaction(async (client) => {
        const at = now();
        const idle = (c: string) =>
          `NOT EXISTS (SELECT 1 FROM ${t('oauth_grants')} g WHERE g.client_id = ${c}.client_id)
            AND NOT EXISTS (SELECT 1 FROM ${t('oauth_device_authorizations')} d
              WHERE d.client_id = ${c}.client_id AND d.expires_at > $2)`;
        const candidates = await client.query<{ client_id: string }>(
          `SELECT c.client_id FROM ${t('oauth_clients')} c
            WHERE c.token_endpoint_auth_method = 'none' AND lower(left(c.client_id, 8)) <> 'https://'
              AND c.issued_at < $1 AND ${idle('c')}
            ORDER BY c.client_id LIMIT $3 FOR UPDATE SKIP LOCKED`,
          [registeredBefore, at, batchSize],
        );
        if (candidates.rows.length === 0) return 0;
        const deleted = await client.query(
          `DELETE FROM ${t('oauth_clients')} c WHERE c.client_id = ANY($1::text[]) AND ${idle('c')}`,
          [candidates.rows.map((row) => row.client_id), at],
        );
        return deleted.rowCount ?? 0;
      }),
    async listActiveGrants(userId) {
      const { rows } = await query(
        `SELECT ${grantColumns}, c.client_name FROM ${t('oauth_grants')} g JOIN ${t('oauth_clients')} c ON c.client_id = g.client_id
          WHERE g.user_id = $1 AND g.expires_at > $2 AND g.revoked_at IS NULL ORDER BY g.created_at DESC, g.grant_id DESC`,
        [userId, now()],
      );
      return rows.map((row): GrantWithClient => ({
        ...toGrant(row),
        clientName: row.client_name as string | null,
      }));
    },

    async saveAuthorizationCode(c) {
      await query(
        `INSERT INTO ${t('oauth_authorization_codes')} (code_hash, grant_id, client_id, user_id, redirect_uri, scope, resource, code_challenge,
           code_challenge_method, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          c.codeHash,
          c.grantId,
          c.clientId,
          c.userId,
          c.redirectUri,
          c.scopes.join(' '),
          c.resource,
          c.codeChallenge,
          c.codeChallengeMethod,
          c.expiresAt,
        ],
      );
    },
    findAuthorizationCode: async (codeHash) =>
      mapRow(
        await one(
          `SELECT * FROM ${t('oauth_authorization_codes')} WHERE code_hash = $1 AND expires_at > $2`,
          [codeHash, now()],
        ),
        toCode,
      ),
    consumeAuthorizationCode: (codeHash, firstRefreshToken) =>
      transaction(async (client) => {
        const at = now();
        const sql = (text: string, values: unknown[]) =>
          query(text, values, client).then((result) => result.rows[0]);
        // The conditional UPDATE is the atomic test-and-set: only one caller, on any instance, flips used_at.
        const won = await sql(
          `UPDATE ${t('oauth_authorization_codes')} SET used_at = $2 WHERE code_hash = $1 AND expires_at > $2 AND used_at IS NULL RETURNING *`,
          [codeHash, at],
        );
        if (!won) {
          const seen = await sql(
            `SELECT * FROM ${t('oauth_authorization_codes')} WHERE code_hash = $1 AND expires_at > $2`,
            [codeHash, at],
          );
          return seen
            ? ({ status: 'replayed', code: toCode(seen) } as const)
            : ({ status: 'not_found' } as const);
        }
        const code = toCode(won);
        const grant = await grantWithFirstToken(sql, code.grantId, code.clientId, at, firstRefreshToken);
        return { status: 'consumed', code, grant } as const;
      }),

    // One statement: a token and its grant with its rotation pointer, as the rotation rule reads them.
    findRefreshToken: async (key) =>
      mapRow(
        await one(
          `SELECT r.token_hash AS token_key, r.client_id AS token_client_id, r.parent_hash, r.issued_at AS token_issued_at,
             r.expires_at AS token_expires_at, g.latest_token_hash, g.latest_used_at, ${grantColumns}
             FROM ${t('oauth_refresh_tokens')} r JOIN ${t('oauth_grants')} g ON g.grant_id = r.grant_id
            WHERE r.token_hash = $1 AND r.expires_at > $2`,
          [key, now()],
        ),
        toRefreshLookup,
      ),
    // One statement: the conditional UPDATE is the compare-and-set (under READ COMMITTED a concurrent caller waits
    // for the row lock, then re-checks the condition against the committed pointer), and the successor is inserted
    // only if it matched.
    advanceRefreshToken: async ({ grantId, expectedLatestUsed, latestUsed, successor }) =>
      (await one(
        `WITH g AS (
           UPDATE ${t('oauth_grants')}
              SET latest_token_hash = CASE WHEN $3::boolean THEN $4 ELSE latest_token_hash END,
                  latest_used_at = CASE WHEN $3::boolean THEN $5::bigint ELSE latest_used_at END,
                  last_used_at = $6
            WHERE grant_id = $1 AND latest_token_hash IS NOT DISTINCT FROM $2::text AND revoked_at IS NULL
              AND expires_at > $7
           RETURNING grant_id)
         INSERT INTO ${t('oauth_refresh_tokens')} (token_hash, grant_id, client_id, parent_hash, issued_at, expires_at)
           SELECT $8, grant_id, $9, $10, $6, $11 FROM g RETURNING 1`,
        [
          grantId,
          expectedLatestUsed,
          latestUsed !== undefined,
          latestUsed?.key ?? null,
          latestUsed?.usedAt ?? null,
          successor.issuedAt,
          now(),
          successor.key,
          successor.clientId,
          successor.parentKey,
          successor.expiresAt,
        ],
      )) !== undefined,

    listSigningKeys: async () =>
      (await query(`SELECT * FROM ${t('oauth_signing_keys')}`)).rows.map(toSigningKey),
    // The partial unique index admits one current key; the loser of a race inserts nothing.
    addSigningKey: async (key) =>
      (await one(
        `INSERT INTO ${t('oauth_signing_keys')} (kid, sealed_key, state, created_at, retired_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING RETURNING 1`,
        [key.kid, key.sealedKey, key.state, key.createdAt, key.retiredAt],
      )) !== undefined,
    // One transaction, serialised with every other promotion by a lock, retiring before promoting so that the
    // unique index of the current key holds at every row.
    promoteSigningKey: (kid, at) =>
      transaction(async (client) => {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
          `express-mcp-oauth:keys:${schema}`,
        ]);
        const next = await client.query(
          `SELECT 1 FROM ${t('oauth_signing_keys')} WHERE kid = $1 AND state = 'next'`,
          [kid],
        );
        if (next.rowCount === 0) return false;
        await client.query(
          `UPDATE ${t('oauth_signing_keys')} SET state = 'retired', retired_at = $1 WHERE state = 'current'`,
          [at],
        );
        await client.query(`UPDATE ${t('oauth_signing_keys')} SET state = 'current' WHERE kid = $1`, [kid]);
        return true;
      }),
    deleteRetiredSigningKeys: async (before) =>
      (
        await query(`DELETE FROM ${t('oauth_signing_keys')} WHERE state = 'retired' AND retired_at < $1`, [
          before,
        ])
      ).rowCount ?? 0,

    ...postgresUpstreamTokens(one, t('oauth_upstream_tokens'), now),

    async purgeExpired(batchSize = 500) {
      const at = now();
      let removed = 0;
      // An approval the device never redeemed made a grant nobody holds a token of: it ends with its request.
      await query(
        `UPDATE ${t('oauth_grants')} SET revoked_at = $1 WHERE revoked_at IS NULL AND grant_id IN
          (SELECT grant_id FROM ${t('oauth_device_authorizations')} WHERE status = 'approved' AND expires_at <= $1)`,
        [at],
      );
      // Upstream tokens go by their own expires_at, not their grant's.
      const tables = [
        'oauth_authorization_codes',
        'oauth_grants',
        'oauth_client_assertions',
        'oauth_upstream_tokens',
        'oauth_device_authorizations',
      ];
      for (const table of tables) {
        const result = await query(
          `DELETE FROM ${t(table)} WHERE ctid IN (SELECT ctid FROM ${t(table)} WHERE expires_at <= $1 LIMIT $2)`,
          [at, batchSize],
        );
        removed += result.rowCount ?? 0;
      }
      // The copies no grant names. Under the exclusive lock, the DELETE's snapshot (taken after the lock, READ
      // COMMITTED) sees every grant a consent has committed, and no consent is half done: a grant and its copy are
      // written under the shared lock. Without it, a copy re-saved by a consent meanwhile could be deleted, and its
      // new grant with it (ON DELETE CASCADE).
      removed += await transaction(async (client) => {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [documentCopiesLock]);
        const result = await client.query(
          `DELETE FROM ${t('oauth_clients')} WHERE client_id IN (SELECT c.client_id FROM ${t('oauth_clients')} c
            WHERE lower(left(c.client_id, 8)) = 'https://'
              AND NOT EXISTS (SELECT 1 FROM ${t('oauth_grants')} g WHERE g.client_id = c.client_id) LIMIT $1)`,
          [batchSize],
        );
        return result.rowCount ?? 0;
      });
      return removed;
    },
  };
}

/**
 * A client of the pool, for `work`. A connection that dies while checked out is reported on the client as an
 * 'error' event (the query under way fails with it too): without a listener that event would crash the process. The
 * broken client is destroyed on release instead of going back to the pool.
 */
async function withClient<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onBroken = (error: Error) => {
    broken = error;
  };
  client.on('error', onBroken);
  try {
    return await work(client);
  } finally {
    client.off('error', onBroken);
    client.release(broken);
  }
}
