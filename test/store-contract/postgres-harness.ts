// The PostgreSQL store under the contract suite: a schema of its own per store, races over the pool's connections.
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { createPostgresStore } from '../../lib/postgres';
import type { FakeClock } from '../../lib/testing';
import { DATABASE_URL } from '../helpers/services';
import type { StoreHarness } from '../../lib/testing';

const TABLES = [
  'oauth_clients',
  'oauth_grants',
  'oauth_authorization_codes',
  'oauth_refresh_tokens',
  'oauth_client_assertions',
  'oauth_upstream_tokens',
];

export async function createPostgresHarness(clock: FakeClock): Promise<StoreHarness> {
  const schema = `contract_${randomBytes(6).toString('hex')}`;
  const pool = new Pool({ connectionString: DATABASE_URL, max: 12 });
  const store = createPostgresStore(pool, { schema, now: clock.now });
  await store.ready;
  return {
    store,
    race: (calls) =>
      Promise.all(calls.map(({ method, args }) => (store[method] as (...a: unknown[]) => unknown)(...args))),
    async persistedBytes() {
      const dumps = await Promise.all(
        TABLES.map((table) => pool.query(`SELECT row_to_json(x)::text AS row FROM ${schema}.${table} x`)),
      );
      return Buffer.from(dumps.flatMap((dump) => dump.rows.map((row) => row.row as string)).join('\n'));
    },
    async refreshTokenRows() {
      return (await pool.query(`SELECT count(*)::int AS n FROM ${schema}.oauth_refresh_tokens`)).rows[0].n;
    },
    async close() {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    },
  };
}
