// What the PostgreSQL store does beyond the shared contract: options, concurrent migrations, shutdown, failures.
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { createPostgresStore } from '../../../lib/postgres';
import { migratePostgres, POSTGRES_SCHEMA_VERSION } from '../../../lib/postgres/schema';
import { createFakeClock } from '../../helpers/clock';
import { expectV3HistoryMigrated, v3History } from '../../helpers/v3-rotation-history';
import { clientRecord, codeRecord, grantRecord } from '../../helpers/fixtures';
import { startTcpProxy } from '../../helpers/tcp-proxy';
import { useThrowawaySchema, waitUntilBlockedBy } from '../../helpers/postgres-database';
import { DATABASE_URL, describeWith } from '../../helpers/services';
import { waitUntil } from '../../helpers/wait';

test.each([
  [
    'a schema name that is not an identifier',
    () => createPostgresStore('postgres://x', { schema: 'oauth; DROP TABLE x' }),
    /lower-case SQL identifier/,
  ],
  [
    'something that is neither a URL nor a pool',
    () => createPostgresStore(42 as never),
    /connection string or a pg Pool/,
  ],
])('refuses %s', (_name, create, message) => {
  expect(create).toThrow(message);
});

test('an unreachable database rejects ready and every call, with the driver’s reason', async () => {
  const store = createPostgresStore('postgres://nobody@127.0.0.1:1/none', {
    pool: { connectionTimeoutMillis: 500 },
  });
  await expect(store.ready).rejects.toThrow(/ECONNREFUSED|connect/);
  await expect(store.findClient('x')).rejects.toThrow();
  await store.close();
});

describeWith('PostgreSQL store setup', { postgres: true }, () => {
  const postgres = useThrowawaySchema('setup');
  const { schema } = postgres;

  test('instances starting at once on a new schema migrate it exactly once, and share its data', async () => {
    const stores = Array.from({ length: 4 }, () => createPostgresStore(DATABASE_URL!, { schema }));
    await Promise.all(stores.map((store) => store.ready));
    const { rows } = await postgres.admin.query(
      `SELECT version FROM ${schema}.oauth_schema_migrations ORDER BY version`,
    );
    expect(rows.map((row) => row.version)).toEqual(
      Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1),
    );
    const client = clientRecord();
    await stores[0]!.registerClient(client);
    expect(await stores[3]!.findClient(client.clientId)).toEqual(client);
    await Promise.all(stores.map((store) => store.close()));
  });

  // Without a listener on the pool it created, pg's report of a broken idle connection would crash the process.
  test.each([
    ['the onConnectionError option', true],
    ['a console warning by default', false],
  ])('an idle connection ended by the server is reported to %s and replaced', async (_name, withOption) => {
    const applicationName = `idle_${randomBytes(6).toString('hex')}`;
    const reported: string[] = [];
    const warn = jest.spyOn(console, 'warn').mockImplementation((message) => reported.push(String(message)));
    try {
      const store = createPostgresStore(DATABASE_URL!, {
        schema,
        pool: { application_name: applicationName },
        onConnectionError: withOption ? (error) => reported.push(error.message) : undefined,
      });
      await store.ready;
      expect(store.pool.idleCount).toBeGreaterThan(0);
      const { rows } = await postgres.admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [applicationName],
      );
      expect(rows.length).toBeGreaterThan(0);
      await waitUntil(() => reported.length > 0);
      expect(reported[0]).toMatch(
        withOption ? /^terminating connection/ : /PostgreSQL connection broke while idle: terminating/,
      );
      const client = clientRecord();
      await store.registerClient(client);
      expect(await store.findClient(client.clientId)).toEqual(client);
      await store.close();
    } finally {
      warn.mockRestore();
    }
  });

  test('a pool the host app owns is left open by close()', async () => {
    const pool = new Pool({ connectionString: DATABASE_URL });
    const store = createPostgresStore(pool, { schema });
    await store.ready;
    await store.close();
    expect((await pool.query('SELECT 1 AS ok')).rows[0].ok).toBe(1);
    await pool.end();
  });

  test('a version-3 schema keeps its rotation history through the move to the latest-token pointer', async () => {
    const v3 = `${schema}_v3`;
    const clock = createFakeClock();
    const client = await postgres.admin.connect();
    try {
      await migratePostgres(client, v3, 3);
      await client.query(`SET search_path TO ${v3}`);
      const { rows, tokens } = v3History(clock.now());
      for (const [sql, values] of rows) {
        let n = 0;
        await client.query(
          sql.replace(/\?/g, () => `$${(n += 1)}`),
          values,
        );
      }
      await client.query('SET search_path TO DEFAULT');
      const store = createPostgresStore(DATABASE_URL!, { schema: v3, now: clock.now });
      await store.ready;
      await expectV3HistoryMigrated(store, clock, tokens);
      await store.close();
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${v3} CASCADE`);
      client.release();
    }
  });

  test('a schema from a newer version is refused with a message that says what to do', async () => {
    const newer = `${schema}_newer`;
    await postgres.admin.query(`CREATE SCHEMA ${newer}`);
    await postgres.admin.query(
      `CREATE TABLE ${newer}.oauth_schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`,
    );
    await postgres.admin.query(
      `INSERT INTO ${newer}.oauth_schema_migrations VALUES (${POSTGRES_SCHEMA_VERSION + 1}, 0)`,
    );
    const store = createPostgresStore(DATABASE_URL!, { schema: newer });
    await expect(store.ready).rejects.toThrow(/newer than this package knows .* upgrade express-mcp-oauth/);
    await store.close();
    await postgres.admin.query(`DROP SCHEMA ${newer} CASCADE`);
  });

  test('a connection that dies inside a transaction fails that call, does not crash the process, and is replaced', async () => {
    const proxy = await startTcpProxy(Number(new URL(DATABASE_URL!).port || 5432));
    const url = new URL(DATABASE_URL!);
    url.host = `127.0.0.1:${proxy.port}`;
    const clock = createFakeClock();
    const store = createPostgresStore(url.href, {
      schema,
      now: clock.now,
      onConnectionError: () => undefined,
    });
    await store.ready;
    const client = clientRecord();
    await store.registerClient(client);
    const grant = grantRecord(clock.now(), { clientId: client.clientId });
    await store.createGrant(grant);
    const code = codeRecord(clock.now(), grant);
    await store.saveAuthorizationCode(code);
    // Another session holds the code's row, so the store's transaction waits inside its UPDATE, checked out.
    const blocker = await postgres.admin.connect();
    await blocker.query('BEGIN');
    await blocker.query(`SELECT 1 FROM ${schema}.oauth_authorization_codes WHERE code_hash = $1 FOR UPDATE`, [
      code.codeHash,
    ]);
    try {
      const pending = Promise.resolve(store.consumeAuthorizationCode(code.codeHash));
      pending.catch(() => undefined);
      await waitUntilBlockedBy(blocker, postgres.admin);
      await proxy.cut();
      await expect(pending).rejects.toThrow(/terminated|ECONNRESET|closed/i);
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    await proxy.restore();
    expect(await store.consumeAuthorizationCode(code.codeHash)).toMatchObject({ status: 'consumed' });
    await store.close();
    await proxy.stop();
  });
});
