// Users' upstream tokens in the SQLite store (UpstreamTokenStore), table oauth_upstream_tokens (see sqlite-schema.ts).
// Each atomic method is one conditional statement (see sqlite-statements.ts): SQLite runs one writer at a time, so
// the check in its WHERE clause and its write are one step for every connection and process on the file.
import { mapRow, toUpstreamTokens } from './rows';
import type { prepareStatements } from './sqlite-statements';
import type { UpstreamTokenStore } from './types';

/** Whether a conditional write changed its row: the caller won. */
const changed = (result: { changes: number }) => result.changes === 1;

/** The upstream-token methods of the SQLite store, on its prepared statements; `now` is the store's clock. */
export function sqliteUpstreamTokens(
  sql: ReturnType<typeof prepareStatements>,
  now: () => number,
): UpstreamTokenStore {
  return {
    saveUpstreamTokens: ({ id, provider, userId, sealed, expiresAt }) => {
      sql.saveUpstream.run({ id, provider, userId, sealed, expiresAt });
    },
    attachUpstreamTokens: (id, grantId, expiresAt) =>
      changed(sql.attachUpstream.run({ id, grantId, expiresAt, now: now() })),
    findUpstreamTokens: (grantId) => mapRow(sql.findUpstream.get(grantId, now()), toUpstreamTokens),
    leaseUpstreamTokens: (grantId, version, until) =>
      changed(sql.leaseUpstream.run({ grantId, version, until, now: now() })),
    replaceUpstreamTokens: (grantId, version, sealed) =>
      changed(sql.replaceUpstream.run({ grantId, version, sealed, now: now() })),
    // Expired or not: the row's last state comes back with its deletion, in the same statement.
    deleteUpstreamTokens: (grantId) => mapRow(sql.deleteUpstream.get(grantId), toUpstreamTokens),
  };
}
