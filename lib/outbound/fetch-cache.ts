// A memory of fetched documents: each kept as long as its Cache-Control asks, within bounds; concurrent first
// requests for one URL share one fetch. A failure is remembered for a short while (`failureMs`): the URLs are chosen
// by strangers before anyone authenticates, and a host that fails or stalls must not be fetched again on every
// request. Failures the URL is not to blame for (`remember` says which) are not remembered. A failure that says
// the document was withdrawn (`withdrawn` says which) drops the copy it would have replaced; any other failure (the
// host or the network failing for now, which a stranger may be able to cause) leaves a copy still within its own
// lifetime in use, served in place of the remembered failure, so that one refetch that fails does not take a
// working copy away. Past its lifetime a copy is never served.

/** What a load brought: the validated value and the Cache-Control header it came with. */
interface Loaded<T> {
  value: T;
  cacheControl: string | undefined;
}

export interface FetchCacheOptions<T> {
  load: (url: string) => Promise<Loaded<T>>;
  now: () => number;
  minMs: number;
  maxMs: number;
  /** How many URLs are remembered at most, and as many failures; the oldest entry goes first. */
  maxEntries: number;
  /** How long a failed load is answered with its error before the URL is loaded again. */
  failureMs: number;
  /** Whether a failure is the URL's own and may be remembered (default: every failure). */
  remember?: (error: unknown) => boolean;
  /**
   * Whether a failure says the document itself is gone or no longer valid, so that its copy is dropped (default:
   * every failure). A copy past any other failure is served until its own lifetime ends.
   */
  withdrawn?: (error: unknown) => boolean;
}

export interface FetchCache<T> {
  /**
   * The value for `url`: remembered while fresh, else loaded; a recent failure is thrown again without loading. With
   * `maxAgeMs`, a copy older than that is loaded again even if still fresh (a key-rotation refetch).
   */
  get(url: string, options?: { maxAgeMs?: number }): Promise<{ value: T; fetchedAt: number }>;
}

/** How long a response may be kept: its max-age, raised to the floor and cut to the ceiling; no-store gets the floor. */
function cacheLifetimeMs(cacheControl: string | undefined, minMs: number, maxMs: number): number {
  const directives = (cacheControl ?? '')
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.some((directive) => directive === 'no-store' || directive === 'no-cache')) return minMs;
  const maxAge = directives.map((directive) => /^max-age=(\d+)$/.exec(directive)?.[1]).find(Boolean);
  if (maxAge === undefined) return minMs;
  return Math.min(maxMs, Math.max(minMs, Number(maxAge) * 1000));
}

export function createFetchCache<T>(options: FetchCacheOptions<T>): FetchCache<T> {
  const entries = new Map<string, { value: T; fetchedAt: number; freshUntil: number }>();
  const inFlight = new Map<string, Promise<{ value: T; fetchedAt: number }>>();
  const failures = new Map<string, { error: unknown; until: number }>();
  const remember = options.remember ?? (() => true);
  const withdrawn = options.withdrawn ?? (() => true);

  const fetchNow = (url: string) => {
    const fetchedAt = options.now();
    const pending = options
      .load(url)
      .then(({ value, cacheControl }) => {
        entries.delete(url);
        if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value as string);
        const freshUntil = fetchedAt + cacheLifetimeMs(cacheControl, options.minMs, options.maxMs);
        entries.set(url, { value, fetchedAt, freshUntil });
        return { value, fetchedAt };
      })
      .catch((error: unknown) => {
        if (withdrawn(error)) entries.delete(url);
        if (remember(error)) {
          failures.delete(url);
          if (failures.size >= options.maxEntries) failures.delete(failures.keys().next().value as string);
          failures.set(url, { error, until: options.now() + options.failureMs });
        }
        throw error;
      })
      .finally(() => inFlight.delete(url));
    inFlight.set(url, pending);
    return pending;
  };

  return {
    async get(url, { maxAgeMs } = {}) {
      const now = options.now();
      const entry = entries.get(url);
      const alive = entry !== undefined && entry.freshUntil > now;
      if (alive && (maxAgeMs === undefined || now - entry.fetchedAt < maxAgeMs))
        return { value: entry.value, fetchedAt: entry.fetchedAt };
      const pending = inFlight.get(url);
      if (pending) return pending;
      const failure = failures.get(url);
      if (failure && failure.until > now) {
        // A copy left by a failure of the moment (a refetch that failed) is still good until its own lifetime ends.
        if (alive) return { value: entry.value, fetchedAt: entry.fetchedAt };
        throw failure.error;
      }
      failures.delete(url);
      return fetchNow(url);
    },
  };
}
