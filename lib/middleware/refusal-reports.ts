// Which rate-limit refusals become events: the first of each key (an address, or an account and an address) in a
// window, with the refusals held back since that key's previous event counted into it. A limit is there to bound
// what a flood costs, and a host app that writes each event (a log line, an audit row kept for months) would
// otherwise write once per refused request: 30 refusals, 30 rows.
//
// The memory of keys is bounded (maxKeys): an attacker who rotates addresses pushes out the oldest keys, and a key
// pushed out is reported again on its next refusal (with the count it held lost). That costs at most one event per
// refused key and window, which the limit itself already bounds: each new key must spend its allowance first.

export interface RefusalReports {
  /**
   * A refusal for `key`: the count to report with an event (this refusal and those held back since the key's
   * previous event), or undefined when the key was already reported in its current window.
   */
  refused(key: string): number | undefined;
  /** How many keys are remembered (never more than maxKeys). */
  size(): number;
}

/** The default bound of remembered keys, per limit: about 1 MB at most. */
const MAX_REPORTED_KEYS = 10_000;

export function createRefusalReports(
  windowMs: number,
  now: () => number,
  maxKeys = MAX_REPORTED_KEYS,
): RefusalReports {
  /** key -> until when its refusals are held back, and how many were. Insertion order is expiry order. */
  const keys = new Map<string, { until: number; held: number }>();
  return {
    refused(key) {
      const at = now();
      const known = keys.get(key);
      if (known && at < known.until) {
        known.held += 1;
        return undefined;
      }
      // Re-inserted at the end, so that the oldest key (the first to be pushed out) is always first.
      keys.delete(key);
      if (keys.size >= maxKeys) keys.delete(keys.keys().next().value as string);
      keys.set(key, { until: at + windowMs, held: 0 });
      return 1 + (known?.held ?? 0);
    },
    size: () => keys.size,
  };
}
