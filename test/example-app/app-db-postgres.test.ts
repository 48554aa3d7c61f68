// The app's PostgreSQL access (db/database.ts) when a connection dies inside a transaction: that call fails, the
// process does not crash on pg's 'error' event, and the next transaction gets a fresh connection.
import { Pool } from 'pg';
import { postgresAppDb } from '../../example-app/db/database';
import { createTestDatabase, waitUntilBlockedBy, type TestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';
import { startTcpProxy } from '../helpers/tcp-proxy';

describeWith('app database on PostgreSQL', { postgres: true }, () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  test('a connection that dies inside a transaction fails that call only', async () => {
    const direct = new Pool({ connectionString: database.url });
    await direct.query('CREATE TABLE counters (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
    await direct.query('INSERT INTO counters VALUES (1, 0)');
    const proxy = await startTcpProxy(Number(new URL(database.url).port || 5432));
    const url = new URL(database.url);
    url.host = `127.0.0.1:${proxy.port}`;
    const pool = new Pool({ connectionString: url.href });
    pool.on('error', () => undefined);
    const db = postgresAppDb(pool);
    const blocker = await direct.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM counters WHERE id = 1 FOR UPDATE');
    try {
      const pending = db.transaction((tx) => tx.run('UPDATE counters SET n = n + 1 WHERE id = 1'));
      pending.catch(() => undefined);
      await waitUntilBlockedBy(blocker, direct);
      await proxy.cut();
      await expect(pending).rejects.toThrow(/terminated|ECONNRESET|closed/i);
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    await proxy.restore();
    expect(await db.transaction((tx) => tx.run('UPDATE counters SET n = n + 1 WHERE id = 1'))).toBe(1);
    expect((await direct.query('SELECT n FROM counters')).rows[0].n).toBe(1);
    await pool.end();
    await direct.end();
    await proxy.stop();
  });
});
