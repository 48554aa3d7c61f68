// What the SQLite store does beyond the shared contract: pragmas, migrations, adopting a host app's database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../../../lib/store/sqlite';
import { migrateSqlite, SQLITE_SCHEMA_VERSION } from '../../../lib/store/sqlite-schema';
import { rotateRefreshToken } from '../../../lib/grants/rotation';
import { parseRefreshTokenReuse } from '../../../lib/grants/reuse-options';
import { createFakeClock, DAY, SECOND } from '../../helpers/clock';
import { clientRecord, newRefreshToken } from '../../helpers/fixtures';
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

  // Refresh tokens from before version 4 are keyed by their bare hash, outside their grant's key range: the store
  // still rotates them (above) and deletes them with their grant, by the partial index that holds them.
  test('a version-3 database: its bare-hash refresh tokens and their successors go with their grant', async () => {
    const clock = createFakeClock();
    const db = new Database(join(dir, 'v3-purge.db'));
    migrateSqlite(db, 3);
    const { rows, tokens } = v3History(clock.now());
    for (const [sql, values] of rows) db.prepare(sql).run(...values);
    const store = createSqliteStore(db, { now: clock.now });
    const rotated = await rotateRefreshToken(store, {
      presentedToken: tokens.other.value,
      clientId: 'c',
      policy: parseRefreshTokenReuse('strict', 30 * DAY, Buffer.alloc(32, 3), () => {
        throw new Error('unreachable');
      }),
      now: clock.now(),
    });
    expect(rotated.status).toBe('rotated');
    const count = (table: string) =>
      (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    expect(count('oauth_refresh_tokens')).toBe(Object.keys(tokens).length + 1);
    clock.advance(28 * DAY);
    while ((await store.purgeExpired(1)) > 0);
    expect([count('oauth_grants'), count('oauth_refresh_tokens')]).toEqual([0, 0]);
    db.close();
  });

  test('a version-6 database: a grant whose newest refresh token came from a code reports it as its last use', async () => {
    const clock = createFakeClock();
    const path = join(dir, 'v6.db');
    const db = new Database(path);
    migrateSqlite(db, 6);
    const insert = (sql: string, ...values: unknown[]) => db.prepare(sql).run(...values);
    insert(`INSERT INTO oauth_clients (client_id, client_secret_hash, client_name, redirect_uris, grant_types,
      response_types, token_endpoint_auth_method, scope, metadata, issued_at)
      VALUES ('c', NULL, 'C', '[]', '[]', '[]', 'none', '', '{}', 0)`);
    // As version 6 wrote them: a code exchange inserted a first token and left last_used_at as it was (NULL, or
    // the time of the last rotation).
    const grants: Array<[string, number | null, number | null]> = [
      ['first-only', null, clock.now() - 3 * SECOND],
      ['code-after-rotation', clock.now() - 2 * SECOND, clock.now() - SECOND],
      ['unused', null, null],
    ];
    for (const [grantId, lastUsedAt, tokenIssuedAt] of grants) {
      insert(
        `INSERT INTO oauth_grants (grant_id, client_id, user_id, scope, resource, created_at, expires_at,
           last_used_at, revoked_at) VALUES (?, 'c', 'u', '', NULL, ?, ?, ?, NULL)`,
        grantId,
        clock.now() - DAY,
        clock.now() + DAY,
        lastUsedAt,
      );
      if (tokenIssuedAt === null) continue;
      insert(
        `INSERT INTO oauth_refresh_tokens (token_hash, grant_id, client_id, parent_hash, issued_at, expires_at)
         VALUES (?, ?, 'c', NULL, ?, ?)`,
        newRefreshToken(grantId).hash,
        grantId,
        tokenIssuedAt,
        clock.now() + DAY,
      );
    }
    db.close();
    const store = createSqliteStore(path, { now: clock.now });
    expect(store.database.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    const lastUses = await Promise.all(
      grants.map(async ([grantId]) => (await store.findGrant(grantId))?.lastUsedAt),
    );
    expect(lastUses).toEqual([clock.now() - 3 * SECOND, clock.now() - SECOND, null]);
    store.close();
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
