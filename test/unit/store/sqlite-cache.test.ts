// The purge's page cache: a sweep over cold rows runs under a small limit and leaves the host's limit as it was, so
// that the first pass over a large database does not keep 16 MB of its pages for the life of the process.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SWEEP_CACHE_KIB, withSweepCache } from '../../../lib/store/sqlite-cache';
import { createSqliteStore } from '../../../lib/store/sqlite';
import { migrateSqlite } from '../../../lib/store/sqlite-schema';

const ROOT = join(__dirname, '../../..');
const limitOf = (db: Database.Database) => db.pragma('cache_size', { simple: true }) as number;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-sqlite-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('withSweepCache', () => {
  // cache_size: negative is KiB, positive is pages (4 KiB each here).
  test.each([
    ["better-sqlite3's default, 16 MB", undefined, -SWEEP_CACHE_KIB],
    ['a host limit of 64 MB', -64_000, -SWEEP_CACHE_KIB],
    ['a host limit of 10,000 pages (40 MB)', 10_000, -SWEEP_CACHE_KIB],
    ['a host limit of 1 MB, already under it', -1_000, -1_000],
    ['a host limit of 100 pages (400 KiB), already under it', 100, 100],
    ['a host limit just at it', -SWEEP_CACHE_KIB, -SWEEP_CACHE_KIB],
  ])('%s: the limit during the work, then the host limit back', (_name, host, during) => {
    const db = new Database(join(dir, 'a.db'));
    if (host !== undefined) db.pragma(`cache_size = ${host}`);
    const before = limitOf(db);
    expect(withSweepCache(db, () => limitOf(db))).toBe(during);
    expect(limitOf(db)).toBe(before);
    db.close();
  });

  test('a host connection that reads integers as BigInt', () => {
    const db = new Database(join(dir, 'a.db'));
    db.defaultSafeIntegers(true);
    db.pragma('cache_size = 10000');
    expect(withSweepCache(db, () => limitOf(db))).toBe(BigInt(-SWEEP_CACHE_KIB));
    expect(limitOf(db)).toBe(10_000n);
    db.close();
  });

  test('the host limit comes back when the work throws', () => {
    const db = new Database(join(dir, 'a.db'));
    const before = limitOf(db);
    expect(() =>
      withSweepCache(db, () => {
        throw new Error('the purge failed');
      }),
    ).toThrow('the purge failed');
    expect(limitOf(db)).toBe(before);
    db.close();
  });

  test("the store's purge leaves a host database's limit as it was", async () => {
    const db = new Database(join(dir, 'a.db'));
    db.pragma('cache_size = -32000');
    const store = createSqliteStore(db);
    await store.purgeExpired(500);
    expect(limitOf(db)).toBe(-32_000);
    store.close();
    db.close();
  });
});

/**
 * A file with `count` expired codes, each of a grant of its own, as the bench's database has after its code rows: the
 * purge deletes them by expiry, and each delete reaches a random page of the code-hash index.
 */
function seedExpiredCodes(path: string, count: number): void {
  const db = new Database(path);
  migrateSqlite(db);
  db.exec(`
    INSERT INTO oauth_clients (client_id, redirect_uris, grant_types, response_types, token_endpoint_auth_method, scope, issued_at)
      VALUES ('c', '[]', '[]', '[]', 'none', '', 0);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
      INSERT INTO oauth_grants (grant_id, client_id, user_id, scope, created_at, expires_at)
      SELECT 'g' || i, 'c', 'u', 'read', 0, 9e15 FROM n;
    INSERT INTO oauth_authorization_codes
      (code_hash, grant_id, client_id, user_id, redirect_uri, scope, code_challenge, code_challenge_method, expires_at)
      SELECT hex(randomblob(32)), grant_id, 'c', 'u', 'http://127.0.0.1/cb', 'read', 'x', 'S256', 1 FROM oauth_grants;
  `);
  db.close();
}

// In a process of its own, so that nothing else this process did moves its resident memory: the growth, in MB, of
// memory outside V8's heap over one pass of the purge as the reference app runs it (20 batches of 500).
const measurePass = `
  const { createSqliteStore } = require(${JSON.stringify(join(ROOT, 'dist/lib/store/sqlite.js'))});
  const store = createSqliteStore(process.env.DB, { groupCommit: false });
  const outsideHeap = () => { gc(); gc(); const m = process.memoryUsage(); return (m.rss - m.heapTotal) / 1048576; };
  const before = outsideHeap();
  let removed = 0;
  for (let batch = 0; batch < 20; batch += 1) removed += store.purgeExpired(500);
  process.stdout.write(JSON.stringify({ removed, growth: outsideHeap() - before }));
  store.close();
`;

test('one purge pass over 200,000 expired codes keeps no more than a few MB of memory', () => {
  const path = join(dir, 'codes.db');
  seedExpiredCodes(path, 200_000);
  const { removed, growth } = JSON.parse(
    execFileSync(process.execPath, ['--expose-gc', '-e', measurePass], {
      env: { ...process.env, DB: path },
      encoding: 'utf8',
      timeout: 60_000,
    }),
  ) as { removed: number; growth: number };
  expect(removed).toBe(10_000);
  // Without the small cache the pass keeps about 15 MB (the cache filled to better-sqlite3's 16 MB); with it, 2 MB
  // of cache and what the allocator holds around it.
  expect(growth).toBeLessThan(6);
}, 90_000);
