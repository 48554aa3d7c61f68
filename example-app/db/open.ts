// Opens the app's database: SQLite at DATABASE_PATH (its folder created, the file readable by its owner only), or
// PostgreSQL at DATABASE_URL. The OAuth store and the business tables share it.
import { chmodSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'pg';
import { createPostgresStore, createSqliteStore, type OAuthStore } from '../../lib';
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
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path);
  // The file holds the signing key and the users' password hashes: readable by this user only. SQLite gives its
  // -wal and -shm files the same permissions.
  if (path !== ':memory:') chmodSync(path, 0o600);
  // The store sets WAL, foreign keys and the busy timeout on this connection, and adds its tables.
  const store = createSqliteStore(sqlite);
  const db = sqliteAppDb(sqlite);
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
