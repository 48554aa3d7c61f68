// Which earlier grants a step-up's redeemed code ends (grants/replace-earlier.ts), each rule on its own: the same
// user, client and resource, older than the new grant, never a metadata-document client's (one id on every device),
// never one holding the user's upstream tokens.
import { replaceEarlierGrants } from '../../../lib/grants/replace-earlier';
import type { GrantDeps } from '../../../lib/grants/grant-type';
import { createMemoryStore } from '../../../lib/store/memory';
import { clientRecord, grantRecord } from '../../../lib/testing/fixtures';
import type { GrantRecord } from '../../../lib/store/types';

const NOW = 1_800_000_000_000;
const CLIENT = 'client-a';
const DOCUMENT_CLIENT = 'https://app.example/oauth/client.json';

function setUp(options: { keepsUpstreamTokens?: boolean; upstreamHeldBy?: string[] } = {}) {
  const store = createMemoryStore({ now: () => NOW });
  const revoked: Array<{ grantId: string; by: string }> = [];
  const held = new Set(options.upstreamHeldBy ?? []);
  const ctx = {
    store: Object.assign(Object.create(store) as typeof store, {
      findUpstreamTokens: async (grantId: string) => (held.has(grantId) ? { grantId } : undefined),
    }),
    config: { upstream: options.keepsUpstreamTokens ? { keepsTokens: true } : undefined },
    revokeGrant: async (grantId: string, cause?: { by: string }) => {
      revoked.push({ grantId, by: cause!.by });
      return Boolean(await store.revokeGrant(grantId));
    },
  } as unknown as GrantDeps;
  const grant = async (overrides: Partial<GrantRecord> & { clientId: string }) => {
    const record = grantRecord(NOW, overrides);
    if (!store.findClient(record.clientId)) store.registerClient(clientRecord({ clientId: record.clientId }));
    await store.createGrant(record);
    return record;
  };
  return { ctx, grant, revoked };
}

const req = {} as never;

test('the same user, client and resource, older: ended, as replaced', async () => {
  const { ctx, grant, revoked } = setUp();
  const earlier = await grant({ clientId: CLIENT, createdAt: NOW - 10 });
  const current = await grant({ clientId: CLIENT });
  await replaceEarlierGrants(ctx, req, current);
  expect(revoked).toEqual([{ grantId: earlier.grantId, by: 'replaced' }]);
});

test.each([
  ['another client', { clientId: 'client-b', createdAt: NOW - 10 }],
  ['another user', { clientId: CLIENT, userId: 'user-2', createdAt: NOW - 10 }],
  ['another resource', { clientId: CLIENT, resource: 'https://api.example/files', createdAt: NOW - 10 }],
  ['a newer one (a later consent whose code still waits)', { clientId: CLIENT, createdAt: NOW + 10 }],
])('%s: kept', async (_name, overrides) => {
  const { ctx, grant, revoked } = setUp();
  await grant(overrides);
  const current = await grant({ clientId: CLIENT });
  await replaceEarlierGrants(ctx, req, current);
  expect(revoked).toEqual([]);
});

test('a metadata-document client keeps every grant: its id is the same on all the person’s devices', async () => {
  const { ctx, grant, revoked } = setUp();
  await grant({ clientId: DOCUMENT_CLIENT, createdAt: NOW - 10 });
  const current = await grant({ clientId: DOCUMENT_CLIENT });
  await replaceEarlierGrants(ctx, req, current);
  expect(revoked).toEqual([]);
});

test('a grant holding upstream tokens is kept when the router keeps them; one without is ended', async () => {
  const { ctx, grant, revoked } = setUp({ keepsUpstreamTokens: true, upstreamHeldBy: ['held'] });
  await grant({ clientId: CLIENT, grantId: 'held', createdAt: NOW - 20 });
  const plain = await grant({ clientId: CLIENT, createdAt: NOW - 10 });
  const current = await grant({ clientId: CLIENT });
  await replaceEarlierGrants(ctx, req, current);
  expect(revoked).toEqual([{ grantId: plain.grantId, by: 'replaced' }]);
});

test('when the router keeps no upstream tokens, an earlier grant ends whatever the store holds', async () => {
  const { ctx, grant, revoked } = setUp({ upstreamHeldBy: ['held'] });
  await grant({ clientId: CLIENT, grantId: 'held', createdAt: NOW - 20 });
  const current = await grant({ clientId: CLIENT });
  await replaceEarlierGrants(ctx, req, current);
  expect(revoked).toEqual([{ grantId: 'held', by: 'replaced' }]);
});
