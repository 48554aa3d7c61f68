// What the in-memory store does beyond the shared contract (test/store-contract/memory.test.ts): its options.
import { createMemoryStore } from '../../../lib/store/memory';
import { clientRecord, grantRecord } from '../../helpers/fixtures';

const OPTIONAL = ['createGrantWithClient', 'useAssertionId'] as const;

test.each([
  [{}, ['createGrantWithClient', 'useAssertionId']],
  [{ clientDocuments: false }, ['useAssertionId']],
  [{ assertionIds: false }, ['createGrantWithClient']],
  [{ clientDocuments: false, assertionIds: false }, []],
])('created with %j it has the optional methods %j, and no others', (options, methods) => {
  const store = createMemoryStore(options);
  // Left out entirely, as a store written without the capability would be.
  expect(OPTIONAL.filter((method) => method in store)).toEqual(methods);
});

test('its clock is Date.now unless given one', async () => {
  const store = createMemoryStore();
  const client = clientRecord();
  await store.registerClient(client);
  const at = Date.now();
  const ended = grantRecord(at - 2000, { clientId: client.clientId, expiresAt: at - 1000 });
  const live = grantRecord(at, { clientId: client.clientId, expiresAt: at + 60_000 });
  await store.createGrant(ended);
  await store.createGrant(live);
  expect([await store.isGrantActive(ended.grantId), await store.isGrantActive(live.grantId)]).toEqual([
    false,
    true,
  ]);
});
