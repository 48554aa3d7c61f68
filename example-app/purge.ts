// Expired codes, grants (with their refresh tokens) and assertion ids are deleted on a schedule, in bounded batches,
// so that the tables stop growing. Every instance may run it: the deletes are idempotent and each batch is short.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { OAuthStore } from 'express-mcp-oauth';

export interface PurgeSchedule {
  /** Runs one pass now (what the timer does), resolving with the rows deleted. */
  runOnce(): Promise<number>;
  stop(): void;
}

const BATCH_SIZE = 500;
/** At most this many batches per pass, so that a backlog is worked off over several passes, never in one long one. */
const MAX_BATCHES = 20;

export function schedulePurge(
  store: OAuthStore,
  intervalMs: number,
  onError: (error: unknown) => void = (error) =>
    console.warn(`Purge of expired rows failed: ${(error as Error).message}`),
  /** The app's own tables' purges (audit events), each one batch of at most `limit` rows, run after the store's. */
  alsoPurge: ReadonlyArray<(limit: number) => Promise<number>> = [],
): PurgeSchedule {
  const purges = [(limit: number) => store.purgeExpired(limit), ...alsoPurge];
  let running: Promise<number> | undefined;
  const runOnce = () => {
    // A pass still under way (a slow database) is not doubled by the next tick.
    running ??= (async () => {
      let total = 0;
      let batches = 0;
      for (const purgeBatch of purges) {
        for (let batch = 0; batch < MAX_BATCHES; batch += 1) {
          // A turn of the event loop before each batch but the pass's first: a synchronous store (SQLite) answers
          // without one, and the pass would then hold every request for all its batches at once.
          if (batches++ > 0) await nextTurn();
          const removed = await purgeBatch(BATCH_SIZE);
          total += removed;
          if (removed === 0) break;
        }
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

/**
 * The idle-registration part of a pass, now (the console's "Remove idle registrations", the admin API's purge-idle):
 * public registrations made more than `idleClientMs` ago that no grant names, in batches; how many went.
 */
export async function removeIdleRegistrations(store: OAuthStore, idleClientMs: number): Promise<number> {
  let removed = 0;
  for (let batch = 0; batch < MAX_BATCHES && store.purgeIdleClients; batch += 1) {
    if (batch > 0) await nextTurn();
    const once = await store.purgeIdleClients(Date.now() - idleClientMs, BATCH_SIZE);
    removed += once;
    if (once === 0) break;
  }
  return removed;
}
