// A fresh PostgreSQL database for one test file, dropped afterwards: instances of the app share it as they would
// share a production database.
import { randomBytes } from 'node:crypto';
import { Client, Pool as PgPool, type Pool, type PoolClient } from 'pg';
import { DATABASE_URL } from './services';
import { waitUntil } from './wait';

export interface TestDatabase {
  url: string;
  /** Ends every connection to this database from the server side, as a restart or failover would; returns how many. */
  endConnections(): Promise<number>;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `mcp_oauth_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(DATABASE_URL!);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async endConnections() {
      const admin = new Client({ connectionString: DATABASE_URL });
      await admin.connect();
      const { rows } = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
      await admin.end();
      return rows.length;
    },
    async drop() {
      const cleanup = new Client({ connectionString: DATABASE_URL });
      await cleanup.connect();
      // pg's pool.end() resolves before its sockets have closed: give them a moment, so that FORCE (for a test
      // that failed half-way) does not cut connections that were already leaving.
      for (let i = 0; i < 100; i += 1) {
        const { rows } = await cleanup.query(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
          [name],
        );
        if (rows[0].n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}

/**
 * Resolves once another session waits for a lock `blocker` holds (pg_blocking_pids): the moment a test knows a
 * transaction is inside its statement, to cut its connection there. Asked on `observer`, another connection, since
 * pg_stat_activity does not change within a transaction.
 */
export async function waitUntilBlockedBy(
  blocker: PoolClient | Client,
  observer: Pool | Client,
): Promise<void> {
  const { rows } = await blocker.query('SELECT pg_backend_pid() AS pid');
  const pid = rows[0].pid as number;
  await waitUntil(
    async () =>
      (
        await observer.query(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
          [pid],
        )
      ).rows[0].n > 0,
    10_000,
    `a session waiting for the lock of backend ${pid}`,
  );
}

/**
 * A schema name of its own for one describe block, and a pool to inspect it with; registers the hooks that open the
 * pool before the block's tests and, after them, drop the schema (and any `<schema>_...` sibling a test made) and
 * end the pool.
 */
export function useThrowawaySchema(prefix: string): { readonly schema: string; readonly admin: Pool } {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  let admin: Pool | undefined;
  beforeAll(() => {
    admin = new PgPool({ connectionString: DATABASE_URL });
  });
  afterAll(async () => {
    if (!admin) return;
    const { rows } = await admin.query<{ name: string }>(
      `SELECT nspname AS name FROM pg_namespace WHERE nspname = $1 OR nspname LIKE $1 || '\\_%'`,
      [schema],
    );
    for (const { name } of rows) await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    await admin.end();
  });
  return {
    schema,
    get admin() {
      if (!admin) throw new Error('useThrowawaySchema: the pool opens in beforeAll.');
      return admin;
    },
  };
}
