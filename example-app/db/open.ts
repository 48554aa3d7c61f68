// Opens the app's database: SQLite at DATABASE_PATH (its folder created, the file readable by its owner only), or
// PostgreSQL at DATABASE_URL. The OAuth store and the business tables share it.
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { createSqliteStore, type OAuthStore } from 'express-mcp-oauth';
import { createPostgresStore } from 'express-mcp-oauth/postgres';
import { createConnectionGate, type ConnectionGate } from './connection-gate';
import { postgresAppDb, sqliteAppDb, type AppDb } from './database';
import { migrateAppSchema } from './schema';

export interface AppDatabase {
  db: AppDb;
  store: OAuthStore;
  /** Where the data lives, for the start-up line (never with a password). */
  description: string;
  close(): Promise<void>;
}

export async function openAppDatabase(target: {
  databaseUrl?: string;
  databasePath: string;
}): Promise<AppDatabase> {
  if (target.databaseUrl) {
    // Loaded only for PostgreSQL: a SQLite app does not carry the driver's code in its heap.
    const { Pool } = require('pg') as typeof import('pg');
    const pool = new Pool({ connectionString: target.databaseUrl, max: 10, connectionTimeoutMillis: 5_000 });
    // An idle connection that breaks (a database restart or failover) is reported on the pool, which replaces it;
    // without a listener that report would crash the app.
    pool.on('error', (error) => console.warn(`PostgreSQL connection lost while idle: ${error.message}`));
    const store = createPostgresStore(pool);
    try {
      await store.ready;
      const db = postgresAppDb(pool);
      await migrateAppSchema(db);
      const url = new URL(target.databaseUrl);
      return { db, store, description: `PostgreSQL ${url.host}${url.pathname}`, close: () => pool.end() };
    } catch (error) {
      await pool.end();
      throw error;
    }
  }
  const path = target.databasePath;
  if (path !== ':memory:') makeFolder(dirname(path));
  const sqlite = new Database(path);
  // The file holds the signing key and the users' password hashes: readable by this user only. SQLite gives its
  // -wal and -shm files the same permissions.
  if (path !== ':memory:') chmodSync(path, 0o600);
  // The store sets WAL, foreign keys and the busy timeout on this connection, and adds its tables. Its calls and the
  // app's statements take turns through one gate, so that none lands inside another request's transaction.
  const gate = createConnectionGate();
  const store = inTurn(createSqliteStore(sqlite), gate);
  const db = sqliteAppDb(sqlite, gate);
  await migrateAppSchema(db);
  return {
    db,
    store,
    description: `SQLite ${path}`,
    close: async () => {
      if (sqlite.open) sqlite.close();
    },
  };
}

/**
 * Creates a folder and its missing parents, one level at a time. Not mkdirSync's `recursive`: under /proc or /sys, or
 * a dangling symlink, the kernel answers ENOENT for a child of a parent that exists, and Node's recursive walk then
 * retries forever at full CPU (the app never started and never said why). Here that ENOENT is final.
 */
function makeFolder(folder: string): void {
  const missing: string[] = [];
  for (let current = resolve(folder); !existsSync(current); current = dirname(current)) {
    missing.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/**
 * The store with every method taking its turn through the gate. The turn covers the call itself, not the promise a
 * group-committed write returns: that write is committed in a batch of its own after the turn, which waits for any
 * app transaction to end rather than join it, so the gate need not be held meanwhile. Holding it would let one token
 * request at a time reach the store, one turn of the event loop each.
 */
function inTurn(store: OAuthStore, gate: ConnectionGate): OAuthStore {
  const gated = {} as Record<string, unknown>;
  for (const [name, value] of Object.entries(store)) {
    gated[name] =
      typeof value === 'function'
        ? (...args: unknown[]) =>
            // With no transaction under way or waiting the call runs now, as the store's own (the router awaits a
            // value or a promise alike). Otherwise it is boxed, so that its turn ends when the call returns rather
            // than when its promise settles.
            gate.idle()
              ? value.apply(store, args)
              : gate
                  .turn(() => ({ result: value.apply(store, args) as unknown }))
                  .then(({ result }) => result)
        : value;
  }
  return gated as unknown as OAuthStore;
}
