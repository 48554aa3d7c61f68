// The app's one way to reach its business tables, on SQLite (default) or PostgreSQL (DATABASE_URL): SQL written
// once, with `?` placeholders, in the subset both understand; every call is async so both fit.
//
// On SQLite every statement and transaction takes its turn through the connection gate (connection-gate.ts): a
// transaction may await anything, real I/O included, and no other request's statement lands inside it.
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import type { ConnectionGate } from './connection-gate';
import type { Pool, PoolClient } from 'pg';

type Params = ReadonlyArray<unknown>;

export interface AppDb {
  readonly dialect: 'sqlite' | 'postgres';
  all<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T | undefined>;
  run(sql: string, params?: Params): Promise<number>;
  /** Runs an INSERT ... RETURNING id and gives the id. */
  insert(sql: string, params?: Params): Promise<number>;
  /** Runs `work` in one transaction (BEGIN IMMEDIATE on SQLite); nested calls join the outer one. */
  transaction<T>(work: (tx: AppDb) => Promise<T>): Promise<T>;
  /**
   * Runs one statement for each list of parameters, all or none: on SQLite in a single turn of the connection (one
   * synchronous transaction, so no request's statement waits behind it while it awaits), on PostgreSQL in a
   * transaction.
   */
  runMany(sql: string, rows: ReadonlyArray<Params>): Promise<void>;
}

/** Prepared statements kept per connection: the services' SQL is a few dozen strings, built from constants. */
const MAX_STATEMENTS = 500;

export function sqliteAppDb(db: SqliteDatabase, gate: ConnectionGate): AppDb {
  // Compiling a statement costs more than running a small one, so each SQL text is compiled once. The bound only
  // guards against a caller that builds SQL from data (none does): past it, statements are compiled per call.
  const statements = new Map<string, Statement>();
  const prepare = (sql: string): Statement => {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      if (statements.size < MAX_STATEMENTS) statements.set(sql, statement);
    }
    return statement;
  };
  const appDb: AppDb = {
    dialect: 'sqlite',
    all: (sql, params = []) => gate.turn(() => prepare(sql).all(...params) as never),
    get: (sql, params = []) => gate.turn(() => prepare(sql).get(...params) as never),
    run: (sql, params = []) => gate.turn(() => prepare(sql).run(...params).changes),
    insert: (sql, params = []) => gate.turn(() => Number((prepare(sql).get(...params) as { id: number }).id)),
    runMany: (sql, rows) =>
      gate.turn(() => {
        const statement = prepare(sql);
        db.transaction(() => {
          for (const params of rows) statement.run(...params);
        })();
      }),
    transaction: (work) =>
      gate.exclusive(async () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const result = await work(inside);
          db.exec('COMMIT');
          return result;
        } catch (error) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw error;
        }
      }),
  };
  // The transaction's handle: it holds the connection, so its statements run at once, and a nested transaction
  // joins it. A statement through `appDb` from inside it would wait for it to end: a transaction uses its handle.
  const inside: AppDb = {
    dialect: 'sqlite',
    all: async (sql, params = []) => prepare(sql).all(...params) as never,
    get: async (sql, params = []) => prepare(sql).get(...params) as never,
    run: async (sql, params = []) => prepare(sql).run(...params).changes,
    insert: async (sql, params = []) => Number((prepare(sql).get(...params) as { id: number }).id),
    runMany: async (sql, rows) => {
      const statement = prepare(sql);
      for (const params of rows) statement.run(...params);
    },
    transaction: (work) => work(inside),
  };
  return appDb;
}

// BIGINT (int8) holds money and ids well within Number's exact range.
const types = {
  getTypeParser: (oid: number, format?: string) =>
    oid === 20 ? Number : require('pg').types.getTypeParser(oid, format),
};

/** `?` to `$1, $2, ...` (the services' SQL has no `?` inside string literals). */
function numbered(sql: string): string {
  let index = 0;
  return sql.replace(/\?/g, () => `$${++index}`);
}

export function postgresAppDb(pool: Pool): AppDb {
  const on = (target: Pool | PoolClient): AppDb => {
    const query = async (sql: string, params: Params = []) =>
      target.query({ text: numbered(sql), values: [...params], types });
    const self: AppDb = {
      dialect: 'postgres',
      all: async (sql, params) => (await query(sql, params)).rows as never,
      get: async (sql, params) => (await query(sql, params)).rows[0] as never,
      run: async (sql, params) => (await query(sql, params)).rowCount ?? 0,
      insert: async (sql, params) => Number((await query(sql, params)).rows[0].id),
      runMany: (sql, rows) =>
        self.transaction(async (tx) => {
          for (const params of rows) await tx.run(sql, params);
        }),
      async transaction(work) {
        if (target !== pool) return work(self);
        const client = await pool.connect();
        // A connection that dies while checked out emits 'error' on the client: without a listener that would
        // crash the app. The broken client is destroyed on release, not returned to the pool.
        let broken: Error | undefined;
        const onBroken = (error: Error) => {
          broken = error;
        };
        client.on('error', onBroken);
        try {
          await client.query('BEGIN');
          const result = await work(on(client));
          await client.query('COMMIT');
          return result;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        } finally {
          client.off('error', onBroken);
          client.release(broken);
        }
      },
    };
    return self;
  };
  return on(pool);
}
