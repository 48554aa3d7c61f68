// The store contract for a key set (SigningKeyStore), run when the store under test has one: one current key
// whatever the races, promotion as one step, and deletion of retired keys only.
import type { SigningKeyRecord, SigningKeyStore } from '../store/types';
import { SECOND } from './clock';
import type { ContractEnv, ContractTest } from './contract-env';
import { expect } from './expect';

const key = (kid: string, state: SigningKeyRecord['state'], at: number): SigningKeyRecord => ({
  kid,
  sealedKey: `sealed-${kid}`,
  state,
  createdAt: at,
  retiredAt: null,
});

/** The key set's cases, registered with `test` (the suite's, or one that skips them for a store without a key set). */
export function describeSigningKeyContract(env: ContractEnv, test: ContractTest): void {
  const { describe } = env;
  const keys = () => env.store as unknown as SigningKeyStore;
  const states = async () =>
    Object.fromEntries((await keys().listSigningKeys()).map((row) => [row.kid, row.state]));

  describe('signing keys (SigningKeyStore)', () => {
    test('8 instances racing to create the first current key: exactly one wins', async () => {
      const at = env.clock.now();
      const calls = Array.from({ length: 8 }, (_, index) => ({
        method: 'addSigningKey' as const,
        args: [key(`k${index}`, 'current', at)],
      }));
      const outcomes = await env.race(calls);
      expect(outcomes.filter((outcome) => outcome === true)).toHaveLength(1);
      const rows = await keys().listSigningKeys();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toEqual(key(`k${outcomes.indexOf(true)}`, 'current', at));
    });

    test('a kid is unique', async () => {
      const at = env.clock.now();
      expect(await keys().addSigningKey(key('a', 'next', at))).toBe(true);
      expect(await keys().addSigningKey({ ...key('a', 'next', at), sealedKey: 'other' })).toBe(false);
      expect((await keys().listSigningKeys())[0]?.sealedKey).toBe('sealed-a');
    });

    test('promotion retires the current key and makes the next one current, in one step', async () => {
      const at = env.clock.now();
      await keys().addSigningKey(key('old', 'current', at));
      await keys().addSigningKey(key('new', 'next', at));
      env.clock.advance(SECOND);
      expect(await keys().promoteSigningKey('new', env.clock.now())).toBe(true);
      const rows = await keys().listSigningKeys();
      expect(rows.find((row) => row.kid === 'old')).toMatchObject({
        state: 'retired',
        retiredAt: env.clock.now(),
      });
      expect(rows.find((row) => row.kid === 'new')).toMatchObject({ state: 'current', retiredAt: null });
    });

    test.each([
      ['the current key', 'old'],
      ['a retired key', 'gone'],
      ['an unknown kid', 'nobody'],
    ])('promoting %s changes nothing', async (_name, kid) => {
      const at = env.clock.now();
      await keys().addSigningKey(key('old', 'current', at));
      await keys().addSigningKey({ ...key('gone', 'retired', at), retiredAt: at });
      const before = await states();
      expect(await keys().promoteSigningKey(kid, at)).toBe(false);
      expect(await states()).toEqual(before);
    });

    test('racing promotions of two next keys leave exactly one current key', async () => {
      const at = env.clock.now();
      await keys().addSigningKey(key('old', 'current', at));
      await keys().addSigningKey(key('n1', 'next', at));
      await keys().addSigningKey(key('n2', 'next', at));
      await env.race([
        { method: 'promoteSigningKey' as const, args: ['n1', at] },
        { method: 'promoteSigningKey' as const, args: ['n2', at] },
      ]);
      const current = Object.values(await states()).filter((state) => state === 'current');
      expect(current).toHaveLength(1);
    });

    test('deleting retired keys takes those retired before the bound, and nothing else', async () => {
      const at = env.clock.now();
      await keys().addSigningKey(key('now', 'current', at));
      await keys().addSigningKey(key('next', 'next', at));
      await keys().addSigningKey({ ...key('early', 'retired', at), retiredAt: at - 10 * SECOND });
      await keys().addSigningKey({ ...key('late', 'retired', at), retiredAt: at });
      expect(await keys().deleteRetiredSigningKeys(at - SECOND)).toBe(1);
      expect(Object.keys(await states()).sort()).toEqual(['late', 'next', 'now']);
    });
  });
}
