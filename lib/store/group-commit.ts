// Group commit for the SQLite store: the atomic writes of a grant (a code exchange, a rotation) that arrive in the same
// turn of the event loop share one transaction, each in a savepoint of its own, and every caller is answered only
// after the COMMIT. On SQLite a commit costs the pages it writes (WAL frames) and the locks it takes, not the rows:
// requests that touch neighbouring rows (time-ordered grant ids and codes) then write each page once instead of once
// each, and the locks are taken once per batch. Durability is unchanged: nothing is acknowledged before its commit.
import type { Database } from 'better-sqlite3';

/** Runs `work` inside the next shared transaction; settles once that transaction has committed (or failed). */
type GroupCommit = <T>(work: () => T) => Promise<T>;

export interface GroupCommitControl {
  run: GroupCommit;
  /** Commits what is waiting at once (before the connection closes). */
  flush(): void;
}

interface Pending {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

// A transaction the host app left open on the shared connection would take these writes in (and could roll them
// back after they were acknowledged), so a batch waits for it to end, as a busy database would, then gives up.
const WAIT_FOR_OPEN_TRANSACTION_MS = 5000;

export function createGroupCommit(db: Database, now: () => number = Date.now): GroupCommitControl {
  let queue: Pending[] = [];
  let scheduled = false;
  let waitingSince: number | undefined;
  // Each piece of work in its own savepoint (better-sqlite3 nests a transaction function as a savepoint), so one that
  // throws is undone alone and the others still commit.
  const savepoint = db.transaction((work: () => unknown) => work());
  const batch = db.transaction((items: Pending[]) =>
    items.map((item) => {
      try {
        return { ok: true as const, value: savepoint(item.work) };
      } catch (error) {
        return { ok: false as const, error };
      }
    }),
  );

  function flush(): void {
    scheduled = false;
    if (queue.length === 0) return;
    if (db.open && db.inTransaction) {
      waitingSince ??= now();
      if (now() - waitingSince < WAIT_FOR_OPEN_TRANSACTION_MS) return schedule();
      // Busy, as SQLite itself says of a lock held past busy_timeout: the request may be tried again (503).
      const error = Object.assign(
        new Error(
          'express-mcp-oauth: the SQLite connection stayed inside a transaction of the host app; the store could not write.',
        ),
        { code: 'SQLITE_BUSY' },
      );
      const failed = queue;
      queue = [];
      waitingSince = undefined;
      for (const item of failed) item.reject(error);
      return;
    }
    waitingSince = undefined;
    const items = queue;
    queue = [];
    let outcomes: ReturnType<typeof batch.immediate>;
    try {
      outcomes = batch.immediate(items);
    } catch (error) {
      // BEGIN or COMMIT failed (busy past the timeout, disk full, closed): nothing of the batch was written.
      for (const item of items) item.reject(error);
      return;
    }
    outcomes.forEach((outcome, i) =>
      outcome.ok ? items[i]!.resolve(outcome.value) : items[i]!.reject(outcome.error),
    );
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    // After the I/O callbacks of this turn: every request read in it has queued its write by then.
    setImmediate(flush);
  }

  return {
    run: <T>(work: () => T) =>
      new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      }),
    flush,
  };
}
