// The client lifecycle's promise, as a property: whatever clients, grants and device authorizations exist, a purge of
// idle registrations never removes a client that a grant or a live device authorization names, nor one it must
// keep (confidential, a document copy, registered since), and removes every other public registration. On the memory
// and SQLite stores (PostgreSQL's concurrency is tested in test/unit/postgres/idle-clients.test.ts).
import fc from 'fast-check';
import { createMemoryStore } from '../../../lib/store/memory';
import { createSqliteStore } from '../../../lib/store/sqlite';
import type { ClientRecord, OAuthStore } from '../../../lib/store/types';
import { clientRecord, grantRecord, newSecret } from '../../../lib/testing/fixtures';
import { createFakeClock, DAY, MINUTE } from '../../helpers/clock';
import { inEditLoop } from '../../helpers/edit-loop';

interface Shape {
  public: boolean;
  document: boolean;
  old: boolean;
  grant: 'none' | 'active' | 'revoked' | 'expired';
  device: 'none' | 'live' | 'expired';
}

const shape: fc.Arbitrary<Shape> = fc.record({
  public: fc.boolean(),
  document: fc.boolean(),
  old: fc.boolean(),
  grant: fc.constantFrom('none', 'active', 'revoked', 'expired'),
  device: fc.constantFrom('none', 'live', 'expired'),
});

const STORES: Array<[string, (now: () => number) => OAuthStore & { close?: () => void }]> = [
  ['memory', (now) => createMemoryStore({ now })],
  ['SQLite', (now) => createSqliteStore(':memory:', { now })],
];

test.each(STORES)(
  'on the %s store, a purge never removes a named client, and removes every idle one',
  async (_name, make) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(shape, { maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        async (shapes, batch) => {
          const clock = createFakeClock(Date.UTC(2026, 10, 1));
          const store = make(clock.now);
          try {
            const start = clock.now();
            const threshold = start + DAY;
            const clients: Array<{ client: ClientRecord; shape: Shape }> = [];
            for (const [index, one] of shapes.entries()) {
              const client = clientRecord({
                clientId: one.document ? `https://app${index}.example/client.json` : `client-${index}`,
                clientSecretHash: one.public ? null : newSecret().hash,
                tokenEndpointAuthMethod: one.public ? 'none' : 'client_secret_basic',
                issuedAt: one.old ? start : threshold + MINUTE,
              });
              await store.registerClient(client);
              clients.push({ client, shape: one });
              if (one.grant !== 'none') {
                const grant = grantRecord(start, {
                  clientId: client.clientId,
                  expiresAt: one.grant === 'expired' ? start + MINUTE : start + 30 * DAY,
                });
                await store.createGrant(grant);
                if (one.grant === 'revoked') await store.revokeGrant(grant.grantId);
              }
              if (one.device !== 'none')
                await store.saveDeviceAuthorization!({
                  deviceCodeHash: newSecret().hash,
                  userCodeHash: newSecret().hash,
                  clientId: client.clientId,
                  scopes: ['notes:read'],
                  resource: null,
                  expiresAt: one.device === 'live' ? start + 3 * DAY : start + MINUTE,
                  interval: 5,
                  status: 'pending',
                  userId: null,
                  grantId: null,
                });
            }
            clock.advance(2 * DAY);
            let removed = 0;
            for (let once = -1; once !== 0;)
              removed += once = await store.purgeIdleClients!(threshold, batch);
            const idle = (one: Shape) =>
              one.public && !one.document && one.old && one.grant === 'none' && one.device !== 'live';
            for (const { client, shape: one } of clients)
              expect([client.clientId, (await store.findClient(client.clientId)) === undefined]).toEqual([
                client.clientId,
                idle(one),
              ]);
            expect(removed).toBe(clients.filter(({ shape: one }) => idle(one)).length);
          } finally {
            store.close?.();
          }
        },
      ),
      { numRuns: inEditLoop ? 25 : 100 },
    );
  },
);
