// The store contract for the lists an operator's console reads: every stored client, and every user's active grants,
// a page at a time, in an order that a next page continues without a gap or a repeat while rows come and go.
import { DAY, MINUTE } from './clock';
import type { ContractEnv } from './contract-env';
import { expect } from './expect';
import { clientRecord, grantRecord, newSecret } from './fixtures';

export function describeOperatorListContract(env: ContractEnv): void {
  const { describe } = env;
  const test = env.testWith('listClients');

  describe('operator lists', () => {
    test('clients come a page at a time, by id, each page after the last one’s last id', async () => {
      const { store } = env;
      const ids = ['client-c', 'client-a', 'client-e', 'client-b', 'client-d'];
      for (const clientId of ids)
        await store.registerClient(clientRecord({ clientId, clientName: clientId }));
      const pages: string[][] = [];
      let after: string | undefined;
      for (;;) {
        const page = await store.listClients!({ limit: 2, ...(after === undefined ? {} : { after }) });
        if (page.length === 0) break;
        pages.push(page.map((client) => client.clientId));
        after = page.at(-1)!.clientId;
      }
      expect(pages).toEqual([['client-a', 'client-b'], ['client-c', 'client-d'], ['client-e']]);
      // Each as stored, as findClient reads it, with no grant yet.
      expect((await store.listClients!({ limit: 1 }))[0]).toEqual({
        ...(await store.findClient('client-a')),
        activeGrants: 0,
        lastUsedAt: null,
      });
    });

    test('each client with its active grants counted and its grants’ latest use, or making', async () => {
      const { store, clock } = env;
      const busy = clientRecord({ clientId: 'client-busy' });
      const other = clientRecord({ clientId: 'client-other' });
      const fresh = clientRecord({ clientId: 'client-fresh' });
      await store.registerClient(busy);
      await store.registerClient(other);
      await store.registerClient(fresh);
      const start = clock.now();
      const grants = [
        // Counted: active.
        grantRecord(start, { clientId: busy.clientId, grantId: 'grant-a', lastUsedAt: start + 5 }),
        grantRecord(start, { clientId: busy.clientId, grantId: 'grant-b', userId: 'user-2' }),
        // Not counted, but its use is the latest: revoked below.
        grantRecord(start, { clientId: busy.clientId, grantId: 'grant-c', lastUsedAt: start + 9 }),
        // Not counted: expired by the time of the list.
        grantRecord(start, { clientId: busy.clientId, grantId: 'grant-d', expiresAt: start + MINUTE }),
        // Another client's.
        grantRecord(start, { clientId: other.clientId, grantId: 'grant-e', lastUsedAt: start + 99 }),
        // Never used since it was made (a machine client's token is such a grant): made is its last use.
        grantRecord(start + 50, { clientId: fresh.clientId, grantId: 'grant-f' }),
      ];
      for (const grant of grants) await store.createGrant(grant);
      await store.revokeGrant('grant-c');
      clock.advance(2 * MINUTE);
      const listed = await store.listClients!({ limit: 10 });
      const byId = new Map(listed.map((client) => [client.clientId, client]));
      expect(byId.get('client-busy')).toMatchObject({ activeGrants: 2, lastUsedAt: start + 9 });
      expect(byId.get('client-other')).toMatchObject({ activeGrants: 1, lastUsedAt: start + 99 });
      expect(byId.get('client-fresh')).toMatchObject({ activeGrants: 1, lastUsedAt: start + 50 });
    });

    test('grants of every user, active only, newest id first, a page before the last one’s id', async () => {
      const { store, clock } = env;
      const client = clientRecord({ clientName: 'Listed' });
      await store.registerClient(client);
      const made = [];
      for (const [index, userId] of ['user-1', 'user-2', 'user-1', 'user-3'].entries()) {
        const grant = grantRecord(clock.now(), {
          clientId: client.clientId,
          userId,
          grantId: `grant-${index}`,
        });
        await store.createGrant(grant);
        made.push(grant);
      }
      await store.revokeGrant('grant-1');
      const short = grantRecord(clock.now(), {
        clientId: client.clientId,
        grantId: 'grant-9',
        expiresAt: clock.now() + MINUTE,
      });
      await store.createGrant(short);
      clock.advance(MINUTE);
      const first = await store.listGrants!({ limit: 2 });
      expect(first.map((grant) => grant.grantId)).toEqual(['grant-3', 'grant-2']);
      expect(first[0]).toEqual({ ...made[3], clientName: 'Listed' });
      const second = await store.listGrants!({ limit: 2, before: 'grant-2' });
      expect(second.map((grant) => grant.grantId)).toEqual(['grant-0']);
    });
  });

  describe('client lifecycle', () => {
    const test = env.testWith('purgeIdleClients');

    test('only old public registrations that nothing names are purged, in batches', async () => {
      const { store, clock } = env;
      const old = clock.now();
      const registration = (clientId: string, overrides = {}) =>
        clientRecord({
          clientId,
          clientSecretHash: null,
          tokenEndpointAuthMethod: 'none',
          issuedAt: old,
          ...overrides,
        });
      const kept = {
        recent: registration('recent', { issuedAt: old + 2 * DAY }),
        confidential: clientRecord({ clientId: 'confidential', issuedAt: old }),
        document: registration('https://app.example/client.json'),
        active: registration('active'),
        revoked: registration('revoked'),
        expired: registration('expired'),
        device: registration('device'),
      };
      const idle = [registration('idle-1'), registration('idle-2'), registration('idle-3')];
      for (const client of [...Object.values(kept), ...idle]) await store.registerClient(client);
      await store.createGrant(grantRecord(old, { clientId: 'active' }));
      const revoked = grantRecord(old, { clientId: 'revoked' });
      await store.createGrant(revoked);
      await store.revokeGrant(revoked.grantId);
      await store.createGrant(grantRecord(old, { clientId: 'expired', expiresAt: old + DAY }));
      clock.advance(2 * DAY);
      if (store.saveDeviceAuthorization)
        await store.saveDeviceAuthorization({
          deviceCodeHash: newSecret().hash,
          userCodeHash: newSecret().hash,
          clientId: 'device',
          scopes: ['notes:read'],
          resource: null,
          expiresAt: clock.now() + 10 * MINUTE,
          interval: 5,
          status: 'pending',
          userId: null,
          grantId: null,
        });
      else await store.createGrant(grantRecord(clock.now(), { clientId: 'device' }));
      const before = old + DAY;
      expect(await store.purgeIdleClients!(before, 2)).toBe(2);
      expect(await store.purgeIdleClients!(before, 2)).toBe(1);
      expect(await store.purgeIdleClients!(before, 2)).toBe(0);
      for (const client of idle) expect(await store.findClient(client.clientId)).toBeUndefined();
      for (const client of Object.values(kept))
        expect(await store.findClient(client.clientId)).toEqual(client);
    });
  });

  describe('disabled clients', () => {
    const test = env.testWith('setClientDisabled');

    test('a client disabled reads back so, enabled again reads back as registered', async () => {
      const { store } = env;
      const client = clientRecord();
      await store.registerClient(client);
      expect(await store.setClientDisabled!(client.clientId, true)).toBe(true);
      expect(await store.findClient(client.clientId)).toEqual({ ...client, disabled: true });
      expect((await store.listClients!({ limit: 10 }))[0]).toEqual({
        ...client,
        disabled: true,
        activeGrants: 0,
        lastUsedAt: null,
      });
      expect(await store.setClientDisabled!(client.clientId, false)).toBe(true);
      expect(await store.findClient(client.clientId)).toEqual(client);
      expect(await store.setClientDisabled!('no-such-client', true)).toBe(false);
    });

    test('revoking a client’s grants ends its active ones only, and names them', async () => {
      const { store, clock } = env;
      const client = clientRecord();
      const other = clientRecord();
      await store.registerClient(client);
      await store.registerClient(other);
      const active = [
        grantRecord(clock.now(), { clientId: client.clientId }),
        grantRecord(clock.now(), { clientId: client.clientId }),
      ];
      for (const grant of active) await store.createGrant(grant);
      const revoked = grantRecord(clock.now(), { clientId: client.clientId });
      await store.createGrant(revoked);
      await store.revokeGrant(revoked.grantId);
      const others = grantRecord(clock.now(), { clientId: other.clientId });
      await store.createGrant(others);
      expect((await store.revokeClientGrants!(client.clientId)).sort()).toEqual(
        active.map((grant) => grant.grantId).sort(),
      );
      for (const grant of active) expect(await store.isGrantActive(grant.grantId)).toBe(false);
      expect(await store.isGrantActive(others.grantId)).toBe(true);
      expect(await store.revokeClientGrants!(client.clientId)).toEqual([]);
    });
  });
}
