// Expired codes, grants (with their refresh tokens) and assertion ids are deleted on a schedule, in bounded batches,
// so that the tables stop growing. Every instance may run it: the deletes are idempotent and each batch is short.
import type { OAuthStore } from 'express-mcp-oauth';

export interface PurgeSchedule {
  /** Runs one pass now (what the timer does), resolving with the rows deleted. */
  runOnce(): Promise<number>;
  stop(): void;
}

const BATCH_SIZE = 500;
/** At most this many batches per pass, so that a backlog is worked off over several passes, never in one long one. */
const MAX_BATCHES = 20;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function schedulePurge(
  store: OAuthStore,
  intervalMs: number,
  onError: (error: unknown) => void = (error) =>
    console.warn(`Purge of expired rows failed: ${(error as Error).message}`),
  /** The app's own tables' purges (audit events), run after the store's in each pass. */
  alsoPurge: ReadonlyArray<() => Promise<number>> = [],
): PurgeSchedule {
  let running: Promise<number> | undefined;
  const runOnce = () => {
    // A pass still under way (a slow database) is not doubled by the next tick.
    running ??= (async () => {
      let total = 0;
      for (let batch = 0; batch < MAX_BATCHES; batch += 1) {
        // A turn of the event loop before each batch but the first: a synchronous store (SQLite) answers without one,
        // and the pass would then hold every request for all its batches at once instead of one batch at a time.
        if (batch > 0) await nextTurn();
        const removed = await store.purgeExpired(BATCH_SIZE);
        total += removed;
        if (removed === 0) break;
      }
      for (const purgeMore of alsoPurge) {
        await nextTurn();
        total += await purgeMore();
      }
      return total;
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => void runOnce().catch(onError), intervalMs);
  // The schedule never keeps the process alive on its own.
  timer.unref();
  return { runOnce, stop: () => clearInterval(timer) };
}
