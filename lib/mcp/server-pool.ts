// Ready MCP servers, each serving one request at a time. The SDK's Protocol holds one transport at a time
// (connect() throws while connected) and a stateless transport serves one request (handleRequest() throws on a
// second), so a server is borrowed for a request, connected to that request's transport, closed, and given back.

/** What the pool needs of a server: the SDK's McpServer and its low-level Server both qualify. */
export interface McpServerLike {
  connect(transport: object): Promise<void>;
  close(): Promise<void>;
}

export interface ServerPool<S> {
  /** A ready server: an idle one, a new one while fewer than `max` exist, or the next one given back. */
  acquire(): Promise<S>;
  /** Gives a server back; one that may still be busy (its request was cut off) is dropped and replaced. */
  release(server: S, reusable: boolean): void;
  /** How many servers exist (idle and busy), for tests and metrics. */
  size(): number;
}

/** A pool of at most `max` servers made by `create`, starting with `first` when given. */
export function createServerPool<S>(create: () => S, max: number, first?: S): ServerPool<S> {
  const idle: S[] = first === undefined ? [] : [first];
  const waiting: Array<{ resolve(server: S): void; reject(error: unknown): void }> = [];
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

  return {
    acquire() {
      const ready = idle.pop();
      if (ready !== undefined) return Promise.resolve(ready);
      if (count < max) {
        try {
          return Promise.resolve(build());
        } catch (error) {
          return Promise.reject(error);
        }
      }
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
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
