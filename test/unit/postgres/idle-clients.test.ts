// The client lifecycle on PostgreSQL under concurrency: a purge of idle registrations racing a grant being made for
// one of them, from another instance, never ends with the grant gone while its insert succeeded. Either the grant is
// made and keeps its client, or its insert fails for want of its client.
import { createPostgresStore } from '../../../lib/postgres';
import { clientRecord, grantRecord } from '../../../lib/testing/fixtures';
import { useThrowawaySchema } from '../../helpers/postgres-database';
import { DATABASE_URL, describeWith } from '../../helpers/services';

describeWith('idle registrations on PostgreSQL', { postgres: true }, () => {
  const { schema } = useThrowawaySchema('idle_clients');

  test('a purge racing a grant never takes the grant with it', async () => {
    const purger = createPostgresStore(DATABASE_URL!, { schema });
    const consenter = createPostgresStore(DATABASE_URL!, { schema });
    try {
      await Promise.all([purger.ready, consenter.ready]);
      const outcomes = { kept: 0, refused: 0 };
      for (let round = 0; round < 40; round += 1) {
        const client = clientRecord({ clientSecretHash: null, tokenEndpointAuthMethod: 'none', issuedAt: 0 });
        await purger.registerClient(client);
        const grant = grantRecord(Date.now(), { clientId: client.clientId });
        const [, made] = await Promise.all([
          purger.purgeIdleClients(Date.now()),
          Promise.resolve(consenter.createGrant(grant)).then(
            () => true,
            () => false,
          ),
        ]);
        const stored = await consenter.findGrant(grant.grantId);
        const stillThere = await consenter.findClient(client.clientId);
        if (made) {
          expect(stored).toEqual(grant);
          expect(stillThere).toEqual(client);
          outcomes.kept += 1;
        } else {
          expect(stored).toBeUndefined();
          expect(stillThere).toBeUndefined();
          outcomes.refused += 1;
        }
      }
      expect(outcomes.kept + outcomes.refused).toBe(40);
    } finally {
      await Promise.all([purger.close(), consenter.close()]);
    }
  }, 60_000);
});
