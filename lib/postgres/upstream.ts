// Users' upstream tokens in the PostgreSQL store (UpstreamTokenStore), table oauth_upstream_tokens (see postgres-schema.ts).
// Each atomic method is one conditional statement: under READ COMMITTED a concurrent caller waits for the winner's
// row lock, then re-checks the WHERE clause against the committed row, so on every instance at most one wins.
import { mapRow, toUpstreamTokens, type Row } from '../store/rows';
import type { UpstreamTokenStore } from '../store/types';

/** Runs one statement and resolves with its first row (the store's own `one`, which waits for the migration). */
export type QueryOne = (text: string, values: unknown[]) => Promise<Row | undefined>;

/** PostgreSQL's unique_violation (SQLSTATE 23505). */
const UNIQUE_VIOLATION = '23505';

/** The upstream-token methods of the PostgreSQL store; `table` is the schema-qualified table name. */
export function postgresUpstreamTokens(one: QueryOne, table: string, now: () => number): UpstreamTokenStore {
  const won = async (text: string, values: unknown[]) => (await one(text, values)) !== undefined;

  return {
    async saveUpstreamTokens({ id, provider, userId, sealed, expiresAt }) {
      await one(
        `INSERT INTO ${table} (id, provider, user_id, sealed, expires_at) VALUES ($1, $2, $3, $4, $5)`,
        [id, provider, userId, sealed, expiresAt],
      );
    },
    // NOT EXISTS sees expired rows too, as the unique grant_id does. Two rows attached to one grant at once both pass
    // it (neither sees the other's uncommitted write); the unique index then refuses the second: it lost.
    attachUpstreamTokens: (id, grantId, expiresAt) =>
      won(
        `UPDATE ${table} SET grant_id = $2, expires_at = $3
          WHERE id = $1 AND grant_id IS NULL AND expires_at > $4
            AND NOT EXISTS (SELECT 1 FROM ${table} WHERE grant_id = $2) RETURNING 1`,
        [id, grantId, expiresAt, now()],
      ).catch((error: { code?: string }) => {
        if (error?.code === UNIQUE_VIOLATION) return false;
        throw error;
      }),
    findUpstreamTokens: async (grantId) =>
      mapRow(
        await one(`SELECT * FROM ${table} WHERE grant_id = $1 AND expires_at > $2`, [grantId, now()]),
        toUpstreamTokens,
      ),
    // The winner's lease_until is past now when a waiting caller re-checks the row: only one refreshes.
    leaseUpstreamTokens: (grantId, version, until) =>
      won(
        `UPDATE ${table} SET lease_until = $3
          WHERE grant_id = $1 AND version = $2 AND lease_until <= $4 AND expires_at > $4 RETURNING 1`,
        [grantId, version, until, now()],
      ),
    replaceUpstreamTokens: (grantId, version, sealed) =>
      won(
        `UPDATE ${table} SET sealed = $3, version = version + 1, lease_until = 0
          WHERE grant_id = $1 AND version = $2 AND expires_at > $4 RETURNING 1`,
        [grantId, version, sealed, now()],
      ),
    // Expired or not: the row's last state comes back with its deletion, in the same statement.
    deleteUpstreamTokens: async (grantId) =>
      mapRow(await one(`DELETE FROM ${table} WHERE grant_id = $1 RETURNING *`, [grantId]), toUpstreamTokens),
  };
}
