// The store contract for Client ID Metadata Documents: a document's copy is stored with the grant a user consents
// to, in the same step, replaced by the next one, and purged once no grant names it, never from under a grant
// being made. Nothing else stores one: documents are fetched for strangers, and their rows must not pile up.
import type { ClientRecord } from '../store/types';
import { DAY, MINUTE, SECOND } from './clock';
import { outcomeOf, type ContractEnv } from './contract-env';
import { expect } from './expect';
import { clientRecord, grantRecord } from './fixtures';

/** A document client's validated copy, as the library builds it: no secret, its URL as its id. */
function documentRecord(url: string, overrides: Partial<ClientRecord> = {}): ClientRecord {
  return clientRecord({
    clientId: url,
    clientSecretHash: null,
    tokenEndpointAuthMethod: 'none',
    metadata: { client_uri: new URL(url).origin },
    ...overrides,
  });
}

export function describeClientDocumentContract(env: ContractEnv): void {
  const { describe } = env;
  const test = env.testWith('createGrantWithClient');
  const url = 'https://app.example/oauth/client.json';

  describe('client metadata documents', () => {
    test('a grant made with a document saves the copy as its client in the same step', async () => {
      const { store, clock } = env;
      const copy = documentRecord(url);
      const grant = grantRecord(clock.now(), { clientId: url });
      await store.createGrantWithClient!(grant, copy);
      expect(await store.findClient(url)).toEqual(copy);
      expect(await store.findGrant(grant.grantId)).toEqual(grant);
      expect((await store.listActiveGrants(grant.userId))[0]).toMatchObject({ clientName: copy.clientName });
    });

    test('both or neither: a grant refused (its id taken) leaves the stored copy as it was', async () => {
      const { store, clock } = env;
      const grant = grantRecord(clock.now(), { clientId: url });
      const copy = documentRecord(url);
      await store.createGrantWithClient!(grant, copy);
      const renamed = documentRecord(url, { clientName: 'Renamed' });
      const again = { ...grant, userId: 'someone-else' };
      expect(await outcomeOf(() => store.createGrantWithClient!(again, renamed))).toBe('refused');
      expect(await store.findClient(url)).toEqual(copy);
      expect(await store.findGrant(grant.grantId)).toEqual(grant);
    });

    test('the next grant replaces the copy, and every grant of the client names the newest', async () => {
      const { store, clock } = env;
      const first = grantRecord(clock.now(), { clientId: url });
      await store.createGrantWithClient!(first, documentRecord(url));
      clock.advance(SECOND);
      const renamed = documentRecord(url, {
        clientName: 'Renamed',
        redirectUris: ['http://127.0.0.1/callback'],
        tokenEndpointAuthMethod: 'private_key_jwt',
        metadata: { jwks_uri: 'https://app.example/jwks.json' },
        issuedAt: 5,
      });
      const second = grantRecord(clock.now(), { clientId: url, userId: first.userId });
      await store.createGrantWithClient!(second, renamed);
      expect(await store.findClient(url)).toEqual(renamed);
      expect(await store.isGrantActive(first.grantId)).toBe(true);
      const listed = await store.listActiveGrants(first.userId);
      expect(listed.map((grant) => [grant.grantId, grant.clientName])).toEqual([
        [second.grantId, 'Renamed'],
        [first.grantId, 'Renamed'],
      ]);
    });

    test('a copy goes with the last grant that names it; registered clients and copies in use stay', async () => {
      const { store, clock } = env;
      const registered = clientRecord();
      await store.registerClient(registered);
      const shortLived = { expiresAt: clock.now() + MINUTE };
      const gone = ['https://gone.example/client.json', 'HTTPS://Shouting.example/client.json'];
      for (const id of gone)
        await store.createGrantWithClient!(
          grantRecord(clock.now(), { clientId: id, ...shortLived }),
          documentRecord(id),
        );
      const kept = 'https://kept.example/client.json';
      await store.createGrantWithClient!(
        grantRecord(clock.now(), { clientId: kept, ...shortLived }),
        documentRecord(kept),
      );
      await store.createGrantWithClient!(
        grantRecord(clock.now(), { clientId: kept, expiresAt: clock.now() + DAY }),
        documentRecord(kept),
      );
      // A revoked grant still names its client until it expires (its tokens are still recognised as revoked).
      const revokedUrl = 'https://revoked.example/client.json';
      const revoked = grantRecord(clock.now(), { clientId: revokedUrl });
      await store.createGrantWithClient!(revoked, documentRecord(revokedUrl));
      await store.revokeGrant(revoked.grantId);
      clock.advance(MINUTE);
      let total = 0;
      for (let removed = -1; removed !== 0;) total += removed = await store.purgeExpired(1);
      // Three expired grants and two copies.
      expect(total).toBe(5);
      for (const id of gone) expect(await store.findClient(id)).toBeUndefined();
      for (const id of [kept, revokedUrl, registered.clientId])
        expect((await store.findClient(id))?.clientId).toBe(id);
    });

    test('purges racing consents never take a copy from under its new grant', async () => {
      const { store, clock } = env;
      const urls = Array.from({ length: 8 }, (_, i) => `https://app${i}.example/client.json`);
      // Copies whose grants have expired: each one the purge would delete, unless a new consent comes first.
      for (const id of urls)
        await store.createGrantWithClient!(
          grantRecord(clock.now(), { clientId: id, expiresAt: clock.now() + MINUTE }),
          documentRecord(id),
        );
      clock.advance(MINUTE);
      const grants = urls.map((id) => grantRecord(clock.now(), { clientId: id, userId: 'racer' }));
      const outcomes = await env.race(
        grants.flatMap((grant) => [
          { method: 'purgeExpired' as const, args: [2] },
          { method: 'createGrantWithClient' as const, args: [grant, documentRecord(grant.clientId)] },
        ]),
      );
      // No call failed (a grant whose copy was deleted under it would fail its foreign key, or vanish).
      expect(outcomes.filter((outcome) => typeof outcome === 'object' && outcome !== null)).toEqual([]);
      const listed = await store.listActiveGrants('racer');
      expect(listed.map((grant) => grant.grantId).sort()).toEqual(
        grants.map((grant) => grant.grantId).sort(),
      );
      for (const id of urls) expect((await store.findClient(id))?.clientId).toBe(id);
    });
  });
}
