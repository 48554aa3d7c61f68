// SQLite keeps the pages a connection reads in that connection's page cache up to a limit; a full cache reuses its
// least recently used pages rather than free them, so it stays that large until the limit is lowered or the cache is
// reset (another connection's commit). better-sqlite3 builds SQLite with a limit of 16 MB
// (SQLITE_DEFAULT_CACHE_SIZE=-16000; SQLite's own default is 2 MB). A purge pass reads cold pages all over the tables
// and their indexes (expired codes are found by expiry and deleted by rowid, code hash and grant), so its first pass
// over a large database fills the cache to that limit, with pages no request reads, in place of those requests do read.
// Where requests read few pages (one service, few users) that is 16 MB the process did not need, kept; where they read
// more than 16 MB, the cache fills anyway. So a sweep runs under SQLite's own default limit and the host's limit is put
// back after it, as PostgreSQL's VACUUM reuses a small ring of its shared buffers instead of passing through all of
// them.
import type { Database } from 'better-sqlite3';

/** The page cache a sweep may fill, in KiB: SQLite's own default (https://sqlite.org/pragma.html#pragma_cache_size). */
export const SWEEP_CACHE_KIB = 2000;

/**
 * Runs `work` with the connection's page cache limited to SWEEP_CACHE_KIB, or to the host's limit where that is lower,
 * and puts the host's limit back afterwards, also when `work` throws. Lowering the limit drops the cached pages above
 * it; SQLite reads them again from the file (the operating system's cache) when a request needs them.
 */
export function withSweepCache<T>(db: Database, work: () => T): T {
  // cache_size is a number of pages when positive, of KiB when negative.
  const limit = Number(db.pragma('cache_size', { simple: true }));
  const kib = limit < 0 ? -limit : (limit * Number(db.pragma('page_size', { simple: true }))) / 1024;
  if (kib <= SWEEP_CACHE_KIB) return work();
  db.pragma(`cache_size = -${SWEEP_CACHE_KIB}`);
  try {
    return work();
  } finally {
    db.pragma(`cache_size = ${limit}`);
  }
}
