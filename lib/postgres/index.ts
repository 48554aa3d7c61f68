// express-mcp-oauth/postgres: the PostgreSQL store, for several instances sharing one database. Needs `pg` (an
// optional peer dependency). Named re-exports only.

/** Connects to PostgreSQL (a connection string or a pg Pool), migrates its schema and returns the store. */
export { createPostgresStore } from './store';
/** The PostgreSQL store and its options. */
export type { PostgresStore, PostgresStoreOptions } from './store';
