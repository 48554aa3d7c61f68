// The fake clock and time units, shipped with the package (express-mcp-oauth/testing) and shared by the tests.
export { createFakeClock, DAY, HOUR, MINUTE, SECOND, type FakeClock } from '../../lib/testing/clock';

/**
 * A clock that keeps running with the wall clock and that a test moves forward: for a server in another part of the
 * test that also waits on real I/O, where a frozen clock would stop its sessions and caches from ageing at all.
 */
export interface MovableClock {
  now: () => number;
  advance(ms: number): void;
}

export function createMovableClock(): MovableClock {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance: (ms) => {
      offset += ms;
    },
  };
}
