// A grant's rotation history as schema version 3 recorded it (tokens marked used and superseded), and what the
// store must make of it after migrating to version 4 (the grant's latest-token pointer): the same decisions.
import { refreshTokenKey } from '../../lib/crypto/refresh-token';
import { randomSecret } from '../../lib/crypto/secrets';
import { rotateRefreshToken } from '../../lib/grants/rotation';
import { parseRefreshTokenReuse } from '../../lib/grants/reuse-options';
import type { OAuthStore, RefreshTokenKey } from '../../lib/store/types';
import { DAY, SECOND, type FakeClock } from './clock';

// The rule of version 3: a used token came back for a minute, and never after.
const POLICY = parseRefreshTokenReuse('strict', 30 * 86_400, Buffer.alloc(32, 3), (message) => {
  throw new TypeError(message);
});

// Version-3 tokens had no grant id in front: their keys are bare hashes.
function token(): { value: string; hash: RefreshTokenKey } {
  const value = randomSecret();
  return { value, hash: refreshTokenKey(value) };
}

/** The rows to insert into a version-3 database, as [sql with ? placeholders, values]. */
export function v3History(now: number) {
  const t = {
    first: token(),
    used: token(),
    retried: token(),
    stale: token(),
    other: token(),
    revoked: token(),
  };
  const grant = (id: string, revokedAt: number | null) => [
    `INSERT INTO oauth_grants (grant_id, client_id, user_id, scope, resource, created_at, expires_at, last_used_at, revoked_at)
     VALUES (?, 'c', 'u', 'invoices:read', NULL, ?, ?, NULL, ?)`,
    [id, now - 2 * DAY, now + 28 * DAY, revokedAt],
  ];
  const refresh = (
    { hash }: { hash: RefreshTokenKey },
    grantId: string,
    parent: { hash: RefreshTokenKey } | null,
    issuedAt: number,
    usedAt: number | null,
    supersededAt: number | null = null,
    revokedAt: number | null = null,
  ) => [
    `INSERT INTO oauth_refresh_tokens (token_hash, grant_id, client_id, parent_hash, issued_at, expires_at, used_at,
       superseded_at, revoked_at) VALUES (?, ?, 'c', ?, ?, ?, ?, ?, ?)`,
    [hash, grantId, parent?.hash ?? null, issuedAt, now + 28 * DAY, usedAt, supersededAt, revokedAt],
  ];
  const rows = [
    [
      `INSERT INTO oauth_clients (client_id, client_secret_hash, client_name, redirect_uris, grant_types, response_types,
         token_endpoint_auth_method, scope, metadata, issued_at)
       VALUES ('c', NULL, 'C', '[]', '["authorization_code","refresh_token"]', '["code"]', 'none', 'invoices:read', '{}', 0)`,
      [],
    ],
    grant('g-chain', null),
    // first was used an hour ago for `used` and `stale` (a parallel refresh); `used` was used first, ten seconds
    // ago, and nothing issued from it since: `used` is the latest, `stale` was superseded.
    refresh(t.first, 'g-chain', null, now - 2 * DAY, now - 3600 * SECOND),
    refresh(t.used, 'g-chain', t.first, now - 3600 * SECOND, now - 10 * SECOND),
    refresh(t.stale, 'g-chain', t.first, now - 3600 * SECOND, null, now - 10 * SECOND),
    refresh(t.retried, 'g-chain', t.used, now - 10 * SECOND, null),
    grant('g-fresh', null),
    refresh(t.other, 'g-fresh', null, now - DAY, null),
    grant('g-revoked', now - DAY),
    refresh(t.revoked, 'g-revoked', null, now - 2 * DAY, null, null, now - DAY),
  ] as Array<[string, unknown[]]>;
  return { rows, tokens: t };
}

/** After the migration, the store decides about those tokens exactly as version 3 would have. */
export async function expectV3HistoryMigrated(
  store: OAuthStore,
  clock: FakeClock,
  tokens: ReturnType<typeof v3History>['tokens'],
): Promise<void> {
  const rotate = async (presented: { value: string }) =>
    (
      await rotateRefreshToken(store, {
        presentedToken: presented.value,
        clientId: 'c',
        policy: POLICY,
        now: clock.now(),
      })
    ).status;
  const now = clock.now();
  expect((await store.findRefreshToken(tokens.revoked.hash))?.grant.revokedAt).toBe(now - DAY);
  expect(await store.findRefreshToken(tokens.used.hash)).toMatchObject({
    token: { grantId: 'g-chain', parentKey: tokens.first.hash },
    grant: { revokedAt: null },
    latestUsed: { key: tokens.used.hash, usedAt: now - 10 * SECOND },
  });
  expect((await store.findGrant('g-chain'))?.lastUsedAt).toBe(now - 10 * SECOND);
  expect(await rotate(tokens.revoked)).toBe('invalid');
  expect(await rotate(tokens.other)).toBe('rotated');
  // `used` is within its retry window and its successor unused: a retry.
  expect(await rotate(tokens.used)).toBe('rotated');
  // `stale` lost to its sibling: presenting it is reuse, and ends the grant.
  expect(await rotate(tokens.stale)).toBe('reused');
  expect(await store.isGrantActive('g-chain')).toBe(false);
}
