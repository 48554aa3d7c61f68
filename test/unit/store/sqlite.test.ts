// What the SQLite store does beyond the shared contract: pragmas, migrations, adopting a host app's database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../../../lib/store/sqlite';
import { migrateSqlite, SQLITE_SCHEMA_VERSION } from '../../../lib/store/sqlite-schema';
import { createFakeClock } from '../../helpers/clock';
import { clientRecord } from '../../helpers/fixtures';
import { expectV3HistoryMigrated, v3History } from '../../helpers/v3-rotation-history';

describe('createSqliteStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-sqlite-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('opens a file in WAL mode with foreign keys on, at the current schema version', () => {
    const store = createSqliteStore(join(dir, 'a.db'));
    const db = store.database;
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    store.close();
    store.close(); // closing twice is harmless
    expect(db.open).toBe(false);
  });

  test('reopening keeps the data and does not migrate again', () => {
    const path = join(dir, 'b.db');
    const client = clientRecord();
    const first = createSqliteStore(path);
    first.registerClient(client);
    first.close();
    const second = createSqliteStore(path);
    expect(second.findClient(client.clientId)).toEqual(client);
    second.close();
  });

  test('adopts an open Database without closing it', () => {
    const db = new Database(join(dir, 'c.db'));
    const store = createSqliteStore(db);
    store.close();
    expect(db.open).toBe(true);
    db.close();
  });

  test('two connections migrating a new file at once apply each step once', () => {
    const path = join(dir, 'd.db');
    const a = new Database(path);
    const b = new Database(path);
    migrateSqlite(a);
    expect(() => migrateSqlite(b)).not.toThrow();
    expect(b.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    a.close();
    b.close();
  });

  test('a version-3 database keeps its rotation history through the move to the latest-token pointer', async () => {
    const clock = createFakeClock();
    const db = new Database(join(dir, 'v3.db'));
    migrateSqlite(db, 3);
    const { rows, tokens } = v3History(clock.now());
    for (const [sql, values] of rows) db.prepare(sql).run(...values);
    const store = createSqliteStore(db, { now: clock.now });
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    await expectV3HistoryMigrated(store, clock, tokens);
    db.close();
  });

  test('refuses a database written by a newer version, with a message that says what to do', () => {
    const db = new Database(join(dir, 'e.db'));
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    expect(() => createSqliteStore(db)).toThrow(/newer than this package knows .* upgrade express-mcp-oauth/);
    db.close();
  });

  test('refuses something that is neither a path nor a Database', () => {
    expect(() => createSqliteStore(42 as never)).toThrow(/pass a file path or a better-sqlite3 Database/);
  });
});
