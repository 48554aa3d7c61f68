// What the store contract suite needs from each store implementation under test.
import type { OAuthStore } from '../../lib/store/types';
import type { FakeClock } from '../helpers/clock';

/** One store method call, as data, so it can be sent to another thread or connection. */
export interface StoreCall {
  method: keyof OAuthStore;
  args: unknown[];
}

export interface StoreHarness {
  store: OAuthStore;
  /** Runs the calls at the same time over several connections; results come back in call order. */
  race(calls: StoreCall[]): Promise<unknown[]>;
  /** Every byte the store has persisted (files, or a dump of every row), for the plaintext scan. */
  persistedBytes(): Promise<Buffer>;
  /** How many refresh-token rows the store holds, expired or not (to see that a purge really deletes them). */
  refreshTokenRows(): Promise<number>;
  close(): Promise<void>;
}

/** Makes a fresh, empty store whose clock is `clock`. */
export type StoreFactory = (clock: FakeClock) => Promise<StoreHarness>;
