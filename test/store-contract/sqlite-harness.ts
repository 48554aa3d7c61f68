// The SQLite store under the contract suite: a temp file per store, and races run in worker threads.
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createSqliteStore } from '../../lib/store/sqlite';
import type { FakeClock } from '../../lib/testing';
import type { StoreCall, StoreHarness } from '../../lib/testing';

const RACERS = 8;

/** A harness factory; `groupCommit` as in createSqliteStore (the store and every racing connection alike). */
export const sqliteHarness =
  ({ groupCommit }: { groupCommit: boolean }) =>
  (clock: FakeClock): Promise<StoreHarness> =>
    createSqliteHarness(clock, groupCommit);

async function createSqliteHarness(clock: FakeClock, groupCommit: boolean): Promise<StoreHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-store-'));
  const path = join(dir, 'oauth.db');
  const store = createSqliteStore(path, { now: clock.now, groupCommit });
  return {
    store,
    race: (calls) => raceInWorkers(path, clock.now(), calls, groupCommit),
    async persistedBytes() {
      return Buffer.concat(
        ['', '-wal', '-shm', '-journal']
          .map((suffix) => path + suffix)
          .filter((file) => existsSync(file))
          .map((file) => readFileSync(file)),
      );
    },
    async refreshTokenRows() {
      return (store.database.prepare('SELECT count(*) AS n FROM oauth_refresh_tokens').get() as { n: number })
        .n;
    },
    async close() {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function raceInWorkers(
  path: string,
  now: number,
  calls: StoreCall[],
  groupCommit: boolean,
): Promise<unknown[]> {
  // signal[0]: the starting gun; signal[1]: how many racers are ready.
  const signal = new Int32Array(new SharedArrayBuffer(8));
  const shares = Array.from({ length: RACERS }, (_, racer) =>
    calls.filter((_, index) => index % RACERS === racer),
  );
  const workers = shares.map(
    (share) =>
      new Worker(join(__dirname, '../helpers/sqlite-race-worker.js'), {
        workerData: { path, now, calls: share, signal: signal.buffer, groupCommit },
      }),
  );
  const finished = workers.map(
    (worker) =>
      new Promise<unknown[]>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      }),
  );
  while (Atomics.load(signal, 1) < RACERS) await new Promise((resolve) => setTimeout(resolve, 5));
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
  const perWorker = await Promise.all(finished);
  await Promise.all(workers.map((worker) => worker.terminate()));
  return calls.map((_, index) => perWorker[index % RACERS]![Math.floor(index / RACERS)]);
}
