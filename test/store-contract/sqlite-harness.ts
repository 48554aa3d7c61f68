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

// The racing workers, started at the first race of a test file and kept until closeRacers: starting eight threads,
// each loading the store's code, for every race was most of the SQLite contract suite's time.
let racers: Worker[] | undefined;

/** Ends the racing workers (a test file's afterAll). */
export async function closeRacers(): Promise<void> {
  const running = racers ?? [];
  racers = undefined;
  await Promise.all(running.map((worker) => worker.terminate()));
}

/**
 * Sends a worker its share of a race; resolves with its results in order, rejects if the worker fails or exits
 * before answering.
 */
function runShare(worker: Worker, race: Record<string, unknown>): Promise<unknown[]> {
  return new Promise<unknown[]>((resolve, reject) => {
    const settle = () => {
      worker.off('message', done);
      worker.off('error', failed);
      worker.off('exit', exited);
    };
    const done = (results: unknown[]) => {
      settle();
      resolve(results);
    };
    const failed = (error: Error) => {
      settle();
      reject(error);
    };
    const exited = (code: number) =>
      failed(new Error(`a racing worker exited (code ${code}) before answering`));
    worker.once('message', done);
    worker.once('error', failed);
    worker.once('exit', exited);
    worker.postMessage(race);
  });
}

async function raceInWorkers(
  path: string,
  now: number,
  calls: StoreCall[],
  groupCommit: boolean,
): Promise<unknown[]> {
  racers ??= Array.from(
    { length: RACERS },
    () => new Worker(join(__dirname, '../helpers/sqlite-race-worker.js')),
  );
  // signal[0]: the starting gun; signal[1]: how many racers are ready.
  const signal = new Int32Array(new SharedArrayBuffer(8));
  let failure: unknown;
  const finished = racers.map((worker, racer) =>
    runShare(worker, {
      path,
      now,
      calls: calls.filter((_, index) => index % RACERS === racer),
      signal: signal.buffer,
      groupCommit,
    }).catch((error: unknown) => {
      failure ??= error;
      throw error;
    }),
  );
  try {
    // A worker that failed never reports ready: the wait ends with it, not never.
    while (Atomics.load(signal, 1) < RACERS && failure === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
    const perWorker = await Promise.all(finished);
    return calls.map((_, index) => perWorker[index % RACERS]![Math.floor(index / RACERS)]);
  } catch (error) {
    // The next race starts from new workers rather than posting to one that is gone.
    await Promise.allSettled(finished);
    await closeRacers();
    throw error;
  }
}
