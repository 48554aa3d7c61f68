// PostgreSQL migrations that change what the store reports for rows an older version wrote.
import { createPostgresStore } from '../../../lib/postgres';
import { migratePostgres } from '../../../lib/postgres/schema';
import { createFakeClock, DAY, SECOND } from '../../helpers/clock';
import { newRefreshToken } from '../../helpers/fixtures';
import { useThrowawaySchema } from '../../helpers/postgres-database';
import { DATABASE_URL, describeWith } from '../../helpers/services';

describeWith('PostgreSQL store migrations', { postgres: true }, () => {
  const postgres = useThrowawaySchema('migrate');
  const { schema } = postgres;

  test('version 6: a grant whose newest refresh token came from a code reports it as its last use', async () => {
    const clock = createFakeClock();
    const client = await postgres.admin.connect();
    try {
      await migratePostgres(client, schema, 6);
    } finally {
      client.release();
    }
    const insert = (sql: string, values: unknown[] = []) => postgres.admin.query(sql, values);
    await insert(`INSERT INTO ${schema}.oauth_clients (client_id, client_secret_hash, client_name, redirect_uris,
      grant_types, response_types, token_endpoint_auth_method, scope, metadata, issued_at)
      VALUES ('c', NULL, 'C', '[]', '[]', '[]', 'none', '', '{}', 0)`);
    // As version 6 wrote them: a code exchange inserted a first token and left last_used_at as it was (NULL, or
    // the time of the last rotation), and reads took the newest token's issued_at instead.
    const grants: Array<[string, number | null, number | null]> = [
      ['first-only', null, clock.now() - 3 * SECOND],
      ['code-after-rotation', clock.now() - 2 * SECOND, clock.now() - SECOND],
      ['unused', null, null],
    ];
    for (const [grantId, lastUsedAt, tokenIssuedAt] of grants) {
      await insert(
        `INSERT INTO ${schema}.oauth_grants (grant_id, client_id, user_id, scope, resource, created_at, expires_at,
           last_used_at, revoked_at) VALUES ($1, 'c', 'u', '', NULL, $2, $3, $4, NULL)`,
        [grantId, clock.now() - DAY, clock.now() + DAY, lastUsedAt],
      );
      if (tokenIssuedAt === null) continue;
      await insert(
        `INSERT INTO ${schema}.oauth_refresh_tokens (token_hash, grant_id, client_id, parent_hash, issued_at,
           expires_at) VALUES ($1, $2, 'c', NULL, $3, $4)`,
        [newRefreshToken(grantId).hash, grantId, tokenIssuedAt, clock.now() + DAY],
      );
    }
    const store = createPostgresStore(DATABASE_URL!, { schema, now: clock.now });
    await store.ready;
    const lastUses = await Promise.all(grants.map(async ([id]) => (await store.findGrant(id))?.lastUsedAt));
    expect(lastUses).toEqual([clock.now() - 3 * SECOND, clock.now() - SECOND, null]);
    await store.close();
  });
});
