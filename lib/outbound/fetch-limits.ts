// How many outbound fetches run at once. Documents and jwks_uri are fetched for whoever sends a client_id, before
// anyone has authenticated, so strangers choose how many fetches start: without a bound they could pile up sockets,
// lookups (dns.lookup holds one of libuv's four threads each) and slow hosts, or aim many fetches at one host. At most
// `perHost` run to one host name and `total` in all; a fetch past a limit waits its turn for a bounded time, and
// is refused at once when `maxWaiting` fetches already wait.

/**
 * One host however it is spelt: DNS names compare without regard to case (RFC 4343 §3), and "a.example." is the
 * same host as "a.example", written as an absolute name (RFC 1034 §3.1). Counted apart, each spelling got a set of
 * slots of its own, and the per-host bound multiplied.
 */
const hostKey = (host: string) => host.toLowerCase().replace(/\.$/, '');

export interface FetchLimits {
  perHost: number;
  total: number;
  maxWaiting: number;
}

/** What the server allows by default: 4 fetches to one host, 32 in all, 64 waiting. */
export const DEFAULT_FETCH_LIMITS: Readonly<FetchLimits> = Object.freeze({
  perHost: 4,
  total: 32,
  maxWaiting: 64,
});

export interface FetchLimiter {
  /**
   * A slot for one fetch to `host`: its release function (call it once the fetch is over), or undefined when the line
   * is full or `signal` aborted before a slot came free.
   */
  acquire(host: string, signal: AbortSignal): Promise<(() => void) | undefined>;
}

export function createFetchLimiter(limits: FetchLimits = DEFAULT_FETCH_LIMITS): FetchLimiter {
  const perHost = new Map<string, number>();
  let running = 0;
  const waiting: Array<{ host: string; start(): void }> = [];

  const fits = (host: string) => running < limits.total && (perHost.get(host) ?? 0) < limits.perHost;

  const take = (host: string) => {
    running += 1;
    perHost.set(host, (perHost.get(host) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      running -= 1;
      const left = perHost.get(host)! - 1;
      if (left === 0) perHost.delete(host);
      else perHost.set(host, left);
      wake();
    };
  };

  // Oldest first, skipping those whose host is still full: after this no waiter fits, so a newcomer that fits may
  // go straight ahead without overtaking anyone who could have run.
  function wake(): void {
    for (let i = 0; i < waiting.length && running < limits.total;) {
      const waiter = waiting[i]!;
      if (fits(waiter.host)) {
        waiting.splice(i, 1);
        waiter.start();
      } else {
        i += 1;
      }
    }
  }

  return {
    acquire(hostname, signal) {
      const host = hostKey(hostname);
      if (signal.aborted) return Promise.resolve(undefined);
      if (fits(host)) return Promise.resolve(take(host));
      if (waiting.length >= limits.maxWaiting) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        const waiter = {
          host,
          start() {
            signal.removeEventListener('abort', giveUp);
            resolve(take(host));
          },
        };
        function giveUp() {
          const index = waiting.indexOf(waiter);
          if (index !== -1) waiting.splice(index, 1);
          resolve(undefined);
        }
        signal.addEventListener('abort', giveUp, { once: true });
        waiting.push(waiter);
      });
    },
  };
}
