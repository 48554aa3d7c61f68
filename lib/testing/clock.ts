// A fake clock for lifetimes: tests move time explicitly instead of waiting for it.

export interface FakeClock {
  /** Milliseconds since the epoch, as Date.now() would return. */
  now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export function createFakeClock(start = Date.UTC(2026, 0, 1)): FakeClock {
  let current = start;
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
    set: (ms) => {
      current = ms;
    },
  };
}
