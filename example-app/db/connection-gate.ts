// One SQLite connection, shared by the business tables and the OAuth store, used by many requests at once. A
// transaction that awaits anything (an await is enough: it lets other requests' continuations run) would take in
// whatever those requests execute on the connection meanwhile, and roll it back with its own work. So the connection
// is a queue: a transaction runs alone, and every statement from outside it (app queries, every OAuth store call)
// takes its turn after it. The transaction's own statements go through the handle it is given (database.ts), which
// runs them at once: there is no async context to recognise them by, because an AsyncLocalStorage in Node 20 turns
// on promise hooks for the whole process, and every promise of every request then pays for them.

export interface ConnectionGate {
  /**
   * Runs `work` alone on the connection: no statement through `turn` runs until it settles. Its own statements must
   * not go through `turn` (they would wait for it): the transaction's handle runs them directly.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Runs a statement in its turn: after any transaction under way or waiting. */
  turn<T>(work: () => T): Promise<T>;
  /** Whether no transaction is under way or waiting: a statement may run now, without a turn. */
  idle(): boolean;
}

export function createConnectionGate(): ConnectionGate {
  let tail: Promise<void> = Promise.resolve();
  /** Transactions running or waiting their turn. */
  let queued = 0;

  async function exclusive<T>(work: () => Promise<T>): Promise<T> {
    queued += 1;
    const previous = tail;
    let release!: () => void;
    tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      return await work();
    } finally {
      queued -= 1;
      release();
    }
  }

  return {
    exclusive,
    idle: () => queued === 0,
    turn(work) {
      if (queued > 0) return exclusive(async () => work());
      // Nothing holds the connection or waits for it: a statement runs at once (it is synchronous, so nothing can
      // slip in), without the promises of a turn in the queue; a tool's read costs no more.
      try {
        return Promise.resolve(work());
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}
