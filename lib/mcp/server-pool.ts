// Ready MCP servers, each serving one request at a time. The SDK's Protocol holds one transport at a time
// (connect() throws while connected) and a stateless transport serves one request (handleRequest() throws on a
// second), so a server is borrowed for a request, connected to that request's transport, closed, and given back.

/** What the pool needs of a server: the SDK's McpServer and its low-level Server both qualify. */
export interface McpServerLike {
  connect(transport: object): Promise<void>;
  close(): Promise<void>;
}

/** No server was free within the deadline of `acquire`. */
export class PoolBusyError extends Error {
  override readonly name = 'PoolBusyError';
}

export interface ServerPool<S> {
  /** An idle server, or a new one while fewer than `max` exist; undefined when every server is busy. */
  take(): S | undefined;
  /**
   * A ready server: an idle one, a new one while fewer than `max` exist, or the next one given back within
   * `timeoutMs` (else PoolBusyError). A waiter whose `signal` aborts leaves the queue and rejects with its reason.
   */
  acquire(timeoutMs: number, signal?: AbortSignal): Promise<S>;
  /** Gives a server back; one that may still be busy (its request was cut off) is dropped and replaced. */
  release(server: S, reusable: boolean): void;
  /** How many servers exist (idle and busy), for tests and metrics. */
  size(): number;
}

/**
 * A pool of at most `max` servers made by `create`, starting with `first` when given; at most `maxWaiting` requests
 * (default four per server) wait for one, and any more are refused at once.
 */
export function createServerPool<S>(
  create: () => S,
  max: number,
  first?: S,
  maxWaiting = 4 * max,
): ServerPool<S> {
  const idle: S[] = first === undefined ? [] : [first];
  interface Waiter {
    resolve(server: S): void;
    reject(error: unknown): void;
  }
  const waiting: Waiter[] = [];
  let count = idle.length;

  const build = (): S => {
    count += 1;
    try {
      return create();
    } catch (error) {
      count -= 1;
      throw error;
    }
  };

  const take = (): S | undefined => {
    const ready = idle.pop();
    if (ready !== undefined) return ready;
    return count < max ? build() : undefined;
  };

  return {
    take,
    acquire(timeoutMs, signal) {
      let ready: S | undefined;
      try {
        ready = take();
      } catch (error) {
        return Promise.reject(error);
      }
      if (ready !== undefined) return Promise.resolve(ready);
      // Every server is busy: wait in line, but not forever (a stuck tool must not freeze every other caller), and
      // not in a line without end (each waiter holds its request's body).
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (waiting.length >= maxWaiting)
        return Promise.reject(new PoolBusyError(`${maxWaiting} requests already wait for an MCP server.`));
      return new Promise((resolve, reject) => {
        const leave = (error: unknown) => {
          const at = waiting.indexOf(waiter);
          if (at !== -1) waiting.splice(at, 1);
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        };
        const onAbort = () => leave(signal!.reason);
        const waiter: Waiter = {
          resolve(server) {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            resolve(server);
          },
          reject: leave,
        };
        const timer = setTimeout(
          () => leave(new PoolBusyError(`No MCP server was free within ${timeoutMs} ms.`)),
          timeoutMs,
        );
        signal?.addEventListener('abort', onAbort, { once: true });
        waiting.push(waiter);
      });
    },
    release(server, reusable) {
      if (!reusable) {
        count -= 1;
        const next = waiting.shift();
        if (!next) return;
        try {
          next.resolve(build());
        } catch (error) {
          next.reject(error);
        }
        return;
      }
      const next = waiting.shift();
      if (next) next.resolve(server);
      else idle.push(server);
    },
    size: () => count,
  };
}
