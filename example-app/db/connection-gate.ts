// One SQLite connection, shared by the business tables and the OAuth store, used by many requests at once. A
// transaction that awaits anything (an await is enough: it lets other requests' continuations run) would take in
// whatever those requests execute on the connection meanwhile, and roll it back with its own work. So the connection
// is a queue: a transaction runs alone, and every statement from outside it (app queries, every OAuth store call)
// takes its turn after it. The transaction's own statements, nested calls included, are recognised by their async
// context and run at once (waiting for itself would never end).
import { AsyncLocalStorage } from 'node:async_hooks';

export interface ConnectionGate {
  /** Runs `work` alone on the connection: no statement from outside its async context runs until it settles. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Runs a statement in its turn: after any transaction under way (at once from inside that transaction). */
  turn<T>(work: () => T): Promise<T>;
}

export function createConnectionGate(): ConnectionGate {
  const context = new AsyncLocalStorage<symbol>();
  let holder: symbol | undefined;
  let tail: Promise<void> = Promise.resolve();
  /** Transactions running or waiting their turn. */
  let queued = 0;
  const inside = () => holder !== undefined && context.getStore() === holder;

  async function exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (inside()) return work();
    queued += 1;
    const previous = tail;
    let release!: () => void;
    tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    const token = Symbol('turn');
    holder = token;
    try {
      return await context.run(token, work);
    } finally {
      holder = undefined;
      queued -= 1;
      release();
    }
  }

  return {
    exclusive,
    turn(work) {
      if (inside()) return Promise.resolve().then(work);
      if (queued > 0) return exclusive(async () => work());
      // Nothing holds the connection or waits for it: a statement runs at once (it is synchronous, so nothing can
      // slip in), without the async context and promises of a turn in the queue; a tool's read costs no more.
      try {
        return Promise.resolve(work());
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}
