// The rotation rule on its own: every case of a token against its grant's rotation pointer, then the rule's
// compare-and-set loop against a scripted store (the real stores run it in the store contract suite).
import { decideRotation, rotateRefreshToken } from '../../../lib/grants/rotation';
import type { OAuthStore, RefreshTokenKey, RefreshTokenLookup } from '../../../lib/store/types';
import { grantRecord } from '../../helpers/fixtures';

const WINDOW = 60_000;
const NOW = 1_000_000;
const k = (name: string) => name as RefreshTokenKey;

test.each([
  ['a first token while nothing was used', ['a', null], null, 'first-use'],
  ['a successor of the latest token', ['b', 'a'], ['a'], 'first-use'],
  ['the latest token again within the window', ['a', null], ['a'], 'retry'],
  ['the latest token again at the edge of the window', ['a', null], ['a', NOW - WINDOW], 'retry'],
  ['the latest token again after the window', ['a', null], ['a', NOW - WINDOW - 1], 'reuse'],
  ['a token older than the latest', ['a', null], ['b'], 'reuse'],
  ['a sibling of the latest token', ['c', 'a'], ['b'], 'reuse'],
  ['a second first token once one was used', ['z', null], ['a'], 'reuse'],
] as const)('%s', (_name, [key, parent], pointer, expected) => {
  const token = { key: k(key), parentKey: parent === null ? null : k(parent) };
  const latestUsed = pointer === null ? null : { key: k(pointer[0]), usedAt: pointer[1] ?? NOW - 1_000 };
  expect(decideRotation({ token: token as RefreshTokenLookup['token'], latestUsed }, NOW, WINDOW)).toBe(
    expected,
  );
});

describe('rotateRefreshToken against a scripted store', () => {
  const grant = grantRecord(NOW - 1_000, { clientId: 'c' });
  const lookup = (latest: string | null): RefreshTokenLookup => ({
    token: {
      key: k('p'),
      grantId: grant.grantId,
      clientId: 'c',
      parentKey: k('a'),
      issuedAt: 0,
      expiresAt: grant.expiresAt,
    },
    grant,
    latestUsed: latest === null ? null : { key: k(latest), usedAt: NOW - 1_000 },
  });
  /** A store whose reads give the pointers in turn and whose swaps answer in turn; calls are recorded. */
  function scripted(pointers: Array<string | null>, swaps: boolean[]) {
    const advances: unknown[] = [];
    const revoked: string[] = [];
    const store = {
      // The last pointer given stays the pointer.
      findRefreshToken: () => lookup(pointers.length > 1 ? pointers.shift()! : pointers[0]!),
      advanceRefreshToken: (input: unknown) => {
        advances.push(input);
        return swaps.shift() ?? false;
      },
      revokeGrant: (grantId: string) => (revoked.push(grantId), true),
    } as unknown as OAuthStore;
    return { store, advances, revoked };
  }
  const input = { presentedKey: k('p'), clientId: 'c', retryWindowMs: WINDOW, now: NOW };

  test('a lost swap is decided again: the pointer moved to this token, so the second try is a retry', async () => {
    const { store, advances } = scripted(['a', 'p'], [false, true]);
    const outcome = await rotateRefreshToken(store, input);
    expect(outcome.status).toBe('rotated');
    expect(advances).toEqual([
      expect.objectContaining({ expectedLatestUsed: 'a', latestUsed: { key: 'p', usedAt: NOW } }),
      expect.not.objectContaining({ latestUsed: expect.anything() }),
    ]);
    expect(advances[1]).toMatchObject({ expectedLatestUsed: 'p', successor: { parentKey: 'p' } });
  });

  test('a lost swap to a sibling is reuse: the grant is revoked and nothing is issued', async () => {
    const { store, advances, revoked } = scripted(['a', 'q'], [false]);
    expect(await rotateRefreshToken(store, input)).toEqual({ status: 'reused', grantId: grant.grantId });
    expect(advances).toHaveLength(1);
    expect(revoked).toEqual([grant.grantId]);
  });

  test('a store that refuses every swap while its pointer stays put is reported, not looped on', async () => {
    const { store, advances } = scripted(['a'], []);
    // The message names the contract the store breaks, so its author knows what to fix.
    await expect(rotateRefreshToken(store, input)).rejects.toThrow(
      /kept refusing advanceRefreshToken .*check that it compares the pointer as OAuthStore documents\.$/,
    );
    expect(advances).toHaveLength(4);
  });

  test.each([
    ['another client', { clientId: 'other' }, {}],
    ['a revoked grant', {}, { revokedAt: NOW - 1 }],
    ['an expired grant', {}, { expiresAt: NOW }],
  ])('a token of %s is invalid, and nothing is written', async (_name, tokenChange, grantChange) => {
    const advances: unknown[] = [];
    const store = {
      findRefreshToken: () => {
        const found = lookup('a');
        return {
          ...found,
          token: { ...found.token, ...tokenChange },
          grant: { ...found.grant, ...grantChange },
        };
      },
      advanceRefreshToken: (value: unknown) => advances.push(value),
      revokeGrant: () => true,
    } as unknown as OAuthStore;
    expect(await rotateRefreshToken(store, input)).toEqual({ status: 'invalid' });
    expect(advances).toEqual([]);
  });
});
