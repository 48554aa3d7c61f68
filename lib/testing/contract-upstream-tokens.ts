// The store contract for users' upstream tokens (UpstreamTokenStore), run when the store under test keeps them: a
// row attached once to one grant, lifetimes by the store's clock, one refresher per lease whatever the races, and
// replacement as a compare-and-set on the version.
import { randomUUID } from 'node:crypto';
import type { UpstreamTokenStore, UpstreamTokensRecord } from '../store/types';
import { DAY, MINUTE, SECOND } from './clock';
import { outcomeOf, type ContractEnv, type ContractTest } from './contract-env';
import { expect } from './expect';
import { newSecret } from './fixtures';

/** What saveUpstreamTokens takes. */
type NewRow = Parameters<UpstreamTokenStore['saveUpstreamTokens']>[0];
/** A row attached to a grant. */
type AttachedRow = UpstreamTokensRecord & { grantId: string };

/** The upstream tokens' cases, registered with `test` (the suite's, or one that skips them). */
export function describeUpstreamTokenContract(env: ContractEnv, test: ContractTest): void {
  const { describe } = env;
  const tokens = () => env.store as unknown as UpstreamTokenStore;

  /** A new row as the upstream callback saves it: unattached, for ten minutes. */
  const newRow = (overrides: Partial<NewRow> = {}): NewRow => ({
    id: newSecret().hash,
    provider: 'github',
    userId: 'user-1',
    sealed: `sealed-${randomUUID()}`,
    expiresAt: env.clock.now() + 10 * MINUTE,
    ...overrides,
  });

  /** A row saved and attached to a new grant id for `lifetime`; the record as the store should now hold it. */
  const attached = async (lifetime = DAY, overrides: Partial<NewRow> = {}): Promise<AttachedRow> => {
    const row = newRow(overrides);
    await tokens().saveUpstreamTokens(row);
    const grantId = `grant-${randomUUID()}`;
    const expiresAt = env.clock.now() + lifetime;
    expect(await tokens().attachUpstreamTokens(row.id, grantId, expiresAt)).toBe(true);
    return { ...row, grantId, expiresAt, version: 0, leaseUntil: 0 };
  };

  describe('upstream tokens (UpstreamTokenStore)', () => {
    test('a saved row is found once attached, as saved, through copies', async () => {
      const row = newRow();
      await tokens().saveUpstreamTokens(row);
      const saved = structuredClone(row);
      row.sealed = 'changed after saving';
      expect(await tokens().findUpstreamTokens('grant-1')).toBeUndefined();
      const expiresAt = env.clock.now() + DAY;
      expect(await tokens().attachUpstreamTokens(row.id, 'grant-1', expiresAt)).toBe(true);
      const expected = { ...saved, grantId: 'grant-1', version: 0, leaseUntil: 0, expiresAt };
      const read = (await tokens().findUpstreamTokens('grant-1'))!;
      expect(read).toEqual(expected);
      Object.assign(read, { sealed: 'changed after reading', version: 7, leaseUntil: expiresAt });
      expect(await tokens().findUpstreamTokens('grant-1')).toEqual(expected);
    });

    test('a taken id is refused, and the stored row stays as it was', async () => {
      const row = newRow();
      await tokens().saveUpstreamTokens(row);
      expect(await outcomeOf(() => tokens().saveUpstreamTokens({ ...row, sealed: 'impostor' }))).toBe(
        'refused',
      );
      await tokens().attachUpstreamTokens(row.id, 'grant-1', row.expiresAt);
      expect((await tokens().findUpstreamTokens('grant-1'))?.sealed).toBe(row.sealed);
    });

    test('a row is attached once, a grant gets one row, and an unknown id none', async () => {
      const first = await attached();
      const other = newRow();
      await tokens().saveUpstreamTokens(other);
      const expiresAt = env.clock.now() + DAY;
      // The same row again, to another grant; and another row to the same grant.
      expect(await tokens().attachUpstreamTokens(first.id, 'grant-other', expiresAt)).toBe(false);
      expect(await tokens().attachUpstreamTokens(other.id, first.grantId, expiresAt)).toBe(false);
      expect(await tokens().findUpstreamTokens(first.grantId)).toEqual(first);
      expect(await tokens().findUpstreamTokens('grant-other')).toBeUndefined();
      // The refused row changed nothing: it is still free for a grant of its own.
      expect(await tokens().attachUpstreamTokens(other.id, 'grant-other', expiresAt)).toBe(true);
      expect(await tokens().attachUpstreamTokens(newSecret().hash, 'grant-unknown', expiresAt)).toBe(false);
    });

    test.each<[string, number]>([
      ['an expired row', MINUTE],
      ['a row a millisecond before it expires', MINUTE - 1],
    ])('attaching %s: refused only once it has expired', async (_name, elapsed) => {
      const row = newRow({ expiresAt: env.clock.now() + MINUTE });
      await tokens().saveUpstreamTokens(row);
      env.clock.advance(elapsed);
      const attachedNow = await tokens().attachUpstreamTokens(row.id, 'grant-1', env.clock.now() + DAY);
      expect(attachedNow).toBe(elapsed < MINUTE);
    });

    test('a row lives while now < expiresAt: then it is neither found, leased nor replaced', async () => {
      const row = await attached(DAY);
      env.clock.advance(DAY - 1);
      expect(await tokens().findUpstreamTokens(row.grantId)).toEqual(row);
      env.clock.advance(1);
      const { grantId } = row;
      expect(await tokens().findUpstreamTokens(grantId)).toBeUndefined();
      expect(await tokens().leaseUpstreamTokens(grantId, 0, env.clock.now() + MINUTE)).toBe(false);
      expect(await tokens().replaceUpstreamTokens(grantId, 0, 'refreshed')).toBe(false);
    });

    test('8 instances racing to lease the same version: exactly one wins', async () => {
      const row = await attached();
      const until = env.clock.now() + MINUTE;
      const calls = Array.from({ length: 8 }, () => ({
        method: 'leaseUpstreamTokens' as const,
        args: [row.grantId, 0, until],
      }));
      const outcomes = await env.race(calls);
      expect(outcomes.filter((outcome) => outcome === true)).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome === false)).toHaveLength(7);
      expect(await tokens().findUpstreamTokens(row.grantId)).toEqual({ ...row, leaseUntil: until });
    });

    test.each<[string, number]>([
      ['a stale version', 0],
      ['a version ahead', 2],
    ])('a lease at %s is refused', async (_name, version) => {
      const row = await attached();
      expect(await tokens().replaceUpstreamTokens(row.grantId, 0, 'refreshed')).toBe(true);
      expect(await tokens().leaseUpstreamTokens(row.grantId, version, env.clock.now() + MINUTE)).toBe(false);
      expect(await tokens().leaseUpstreamTokens(row.grantId, 1, env.clock.now() + MINUTE)).toBe(true);
    });

    test("a held lease refuses others until it runs out by the store's clock", async () => {
      const { grantId } = await attached();
      const until = env.clock.now() + MINUTE;
      expect(await tokens().leaseUpstreamTokens(grantId, 0, until)).toBe(true);
      expect(await tokens().leaseUpstreamTokens(grantId, 0, until + SECOND)).toBe(false);
      env.clock.advance(MINUTE - 1);
      expect(await tokens().leaseUpstreamTokens(grantId, 0, until + SECOND)).toBe(false);
      env.clock.advance(1);
      // At `until` the lease has run out: the next caller gets one of its own.
      const next = env.clock.now() + MINUTE;
      expect(await tokens().leaseUpstreamTokens(grantId, 0, next)).toBe(true);
      expect((await tokens().findUpstreamTokens(grantId))?.leaseUntil).toBe(next);
    });

    test('8 instances racing to replace the same version: exactly one wins, and the lease is cleared', async () => {
      const row = await attached();
      await tokens().leaseUpstreamTokens(row.grantId, 0, env.clock.now() + MINUTE);
      const calls = Array.from({ length: 8 }, (_, index) => ({
        method: 'replaceUpstreamTokens' as const,
        args: [row.grantId, 0, `refreshed-${index}`],
      }));
      const outcomes = await env.race(calls);
      expect(outcomes.filter((outcome) => outcome === true)).toHaveLength(1);
      const winner = `refreshed-${outcomes.indexOf(true)}`;
      expect(await tokens().findUpstreamTokens(row.grantId)).toEqual({ ...row, sealed: winner, version: 1 });
      // Compare-and-set: the old version no longer matches; the new one does.
      expect(await tokens().replaceUpstreamTokens(row.grantId, 0, 'late')).toBe(false);
      expect(await tokens().replaceUpstreamTokens(row.grantId, 1, 'again')).toBe(true);
      expect((await tokens().findUpstreamTokens(row.grantId))?.version).toBe(2);
    });

    test.each<[string, number]>([
      ['a live row', 0],
      ['an expired row', DAY],
    ])('deleting %s returns what it held; afterwards nothing is found', async (_name, elapsed) => {
      const row = await attached(DAY);
      await tokens().replaceUpstreamTokens(row.grantId, 0, 'refreshed');
      env.clock.advance(elapsed);
      const held = { ...row, sealed: 'refreshed', version: 1 };
      expect(await tokens().deleteUpstreamTokens(row.grantId)).toEqual(held);
      expect(await tokens().findUpstreamTokens(row.grantId)).toBeUndefined();
      expect(await tokens().deleteUpstreamTokens(row.grantId)).toBeUndefined();
    });

    test('expired rows are purged in batches, attached or not; live rows stay', async () => {
      const free = newRow({ expiresAt: env.clock.now() + MINUTE });
      await tokens().saveUpstreamTokens(free);
      await tokens().saveUpstreamTokens(newRow({ expiresAt: env.clock.now() + MINUTE }));
      const expiring = await attached(MINUTE);
      const live = await attached(DAY);
      env.clock.advance(MINUTE);
      const batches: number[] = [];
      for (let removed = -1; removed !== 0;) batches.push((removed = await env.store.purgeExpired(2)));
      expect(batches).toEqual([2, 1, 0]);
      // Gone, not just expired: deleting returns expired rows, and their ids are free again.
      expect(await tokens().deleteUpstreamTokens(expiring.grantId)).toBeUndefined();
      expect(
        await outcomeOf(() => tokens().saveUpstreamTokens({ ...free, expiresAt: env.clock.now() + MINUTE })),
      ).toBe('stored');
      expect(await tokens().findUpstreamTokens(live.grantId)).toEqual(live);
    });
  });
}
