// The shipped store contract suite (express-mcp-oauth/testing) against the in-memory store: with both optional
// capabilities, and without them (their cases then register as skipped). Races run on the store itself: each of
// its methods is atomic because it never awaits between its check and its write.
import { createMemoryStore, type MemoryStoreOptions } from '../../lib/store/memory';
import { describeStoreContract, type FakeClock, type StoreFactory } from '../../lib/testing';

const memoryHarness =
  (options: MemoryStoreOptions = {}): StoreFactory =>
  async (clock: FakeClock) => ({
    store: createMemoryStore({ ...options, now: clock.now }),
    close: async () => undefined,
  });

describeStoreContract({ name: 'memory', factory: memoryHarness(), describe, test });
describeStoreContract({
  name: 'memory, without client documents, assertion ids, scope challenges or device authorizations',
  factory: memoryHarness({
    clientDocuments: false,
    assertionIds: false,
    scopeChallenges: false,
    deviceAuthorizations: false,
  }),
  describe,
  test,
  without: [
    'createGrantWithClient',
    'useAssertionId',
    'markScopeChallenge',
    'takeScopeChallenge',
    'saveDeviceAuthorization',
    'findDeviceAuthorization',
    'decideDeviceAuthorization',
    'redeemDeviceAuthorization',
    'slowDownDeviceAuthorization',
  ],
});
