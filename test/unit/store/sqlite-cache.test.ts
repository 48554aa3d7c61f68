// The purge's page cache: a sweep over cold rows runs under a small limit and leaves the host's limit as it was. What
// that saves in memory is measured in a process of its own: test/memory/sqlite-purge.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SWEEP_CACHE_KIB, withSweepCache } from '../../../lib/store/sqlite-cache';
import { createSqliteStore } from '../../../lib/store/sqlite';

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

  test("the store's purge runs under the sweep limit and leaves a host database's limit as it was", async () => {
    const db = new Database(join(dir, 'a.db'));
    db.pragma('cache_size = -32000');
    // The store reads its clock inside the purge's work: what the limit is then is what the purge runs under.
    let during: number | undefined;
    let purging = false;
    const store = createSqliteStore(db, {
      now: () => {
        if (purging) during = limitOf(db);
        return Date.now();
      },
    });
    purging = true;
    await store.purgeExpired(500);
    purging = false;
    expect(during).toBe(-SWEEP_CACHE_KIB);
    expect(limitOf(db)).toBe(-32_000);
    store.close();
    db.close();
  });
});
