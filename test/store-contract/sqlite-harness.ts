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
 * Sends a worker its share of a race: `ready` once its connection is open and it waits for the starting gun, `done`
 * with its results in order. Both reject if the worker fails or exits first.
 */
function runShare(
  worker: Worker,
  race: Record<string, unknown>,
): { ready: Promise<void>; done: Promise<unknown[]> } {
  let markReady!: () => void;
  let failReady!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  const done = new Promise<unknown[]>((resolve, reject) => {
    const settle = () => {
      worker.off('message', heard);
      worker.off('error', failed);
      worker.off('exit', exited);
    };
    const heard = (message: { ready?: true; results?: unknown[] }) => {
      if (message.ready) return markReady();
      settle();
      resolve(message.results!);
    };
    const failed = (error: Error) => {
      settle();
      failReady(error);
      reject(error);
    };
    const exited = (code: number) =>
      failed(new Error(`a racing worker exited (code ${code}) before answering`));
    worker.on('message', heard);
    worker.once('error', failed);
    worker.once('exit', exited);
    worker.postMessage(race);
  });
  // A failure is reported once, through `done`.
  ready.catch(() => undefined);
  return { ready, done };
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
  // signal[0]: the starting gun, fired once every racer has said it is ready.
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const shares = racers.map((worker, racer) =>
    runShare(worker, {
      path,
      now,
      calls: calls.filter((_, index) => index % RACERS === racer),
      signal: signal.buffer,
      groupCommit,
    }),
  );
  const finished = shares.map((share) => share.done);
  try {
    // Every racer ready, or the first failure: a worker that failed never says it is ready.
    await Promise.race([Promise.all(shares.map((share) => share.ready)), Promise.all(finished)]);
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
    const perWorker = await Promise.all(finished);
    return calls.map((_, index) => perWorker[index % RACERS]![Math.floor(index / RACERS)]);
  } catch (error) {
    // The gun fires for any racer still waiting; the next race starts from new workers rather than posting to one
    // that is gone.
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
    await Promise.allSettled(finished);
    await closeRacers();
    throw error;
  }
}
