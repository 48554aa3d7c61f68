// What the store contract suite needs from a store implementation under test.
import type { OAuthStore, SigningKeyStore, UpstreamTokenStore } from '../store/types';
import type { FakeClock } from './clock';

/** One store method call, as data, so that it can be sent to another thread or connection. */
export interface StoreCall {
  method: keyof OAuthStore | keyof SigningKeyStore | keyof UpstreamTokenStore;
  args: unknown[];
}

/** A fresh store under test, and what the suite may ask of it beyond the store contract. */
export interface StoreHarness {
  store: OAuthStore;
  /**
   * Runs the calls at the same time over several connections (or workers); results in call order. Default: all
   * at once on `store` itself, which proves atomicity only as far as one connection can race.
   */
  race?(calls: StoreCall[]): Promise<unknown[]>;
  /** Every byte the store persisted (files, or a dump of every row), for the plaintext scan; skipped if absent. */
  persistedBytes?(): Promise<Buffer>;
  /** How many refresh-token rows the store holds, expired or not (that a purge deletes them); skipped if absent. */
  refreshTokenRows?(): Promise<number>;
  /** Closes the store and removes what it made. */
  close(): Promise<void>;
}

/** Makes a fresh, empty store whose clock is `clock.now` (the suite moves time with the fake clock). */
export type StoreFactory = (clock: FakeClock) => Promise<StoreHarness>;
