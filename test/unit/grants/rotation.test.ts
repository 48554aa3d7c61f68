// The rotation rule on its own: every case of a token against its grant's rotation pointer and its successor, then
// the rule's compare-and-set loop against a scripted store (the real stores run it in the store contract suite).
import { successorOf } from '../../../lib/crypto/refresh-token';
import { classifyPresentation, rotateRefreshToken } from '../../../lib/grants/rotation';
import { parseRefreshTokenReuse } from '../../../lib/grants/reuse-options';
import type { OAuthStore, RefreshTokenKey, RefreshTokenLookup } from '../../../lib/store/types';
import { grantRecord } from '../../helpers/fixtures';

const WINDOW = 60_000;
const NOW = 1_000_000_000;
const k = (name: string) => name as RefreshTokenKey;
const policy = (untilSuccessorUsed: boolean) => ({ windowMs: WINDOW, untilSuccessorUsed });

// Tokens a..e; `stored` is the successor the store holds for the presented token (its parent and issue time).
test.each([
  ['a first token while nothing was used', ['a', null], null, null, true, { kind: 'first-use' }],
  ['a successor of the latest token', ['b', 'a'], ['a'], null, true, { kind: 'first-use' }],
  [
    'the latest token again within the window',
    ['a', null],
    ['a', NOW - 1_000],
    NOW - 1_000,
    false,
    { kind: 'repeat', firstUsedAt: NOW - 1_000, successorStored: true },
  ],
  [
    'the latest token at the edge of the window',
    ['a', null],
    ['a', NOW - WINDOW],
    NOW - WINDOW,
    false,
    { kind: 'repeat', firstUsedAt: NOW - WINDOW, successorStored: true },
  ],
  [
    'the latest token after the window, strict',
    ['a', null],
    ['a', NOW - WINDOW - 1],
    NOW - WINDOW - 1,
    false,
    { kind: 'reuse', reason: 'after_window', firstUsedAt: NOW - WINDOW - 1 },
  ],
  [
    'the latest token days later, while its successor is unused, lenient',
    ['a', null],
    ['a', NOW - 3 * 86_400_000],
    NOW - 3 * 86_400_000,
    true,
    { kind: 'repeat', firstUsedAt: NOW - 3 * 86_400_000, successorStored: true },
  ],
  [
    'the latest token whose successor was issued before successors were derived',
    ['a', null],
    ['a', NOW - 1_000],
    null,
    false,
    { kind: 'repeat', firstUsedAt: NOW - 1_000, successorStored: false },
  ],
  [
    'an older token within its window (a process that kept it)',
    ['a', null],
    ['c', NOW - 10],
    NOW - 1_000,
    false,
    { kind: 'repeat', firstUsedAt: NOW - 1_000, successorStored: true },
  ],
  [
    'an older token after its window, even lenient: its successor was used',
    ['a', null],
    ['c', NOW - 10],
    NOW - WINDOW - 1,
    true,
    { kind: 'reuse', reason: 'after_window', firstUsedAt: NOW - WINDOW - 1 },
  ],
  [
    'a sibling of the latest token (a branch before successors were derived)',
    ['c', 'a'],
    ['b'],
    null,
    true,
    { kind: 'reuse', reason: 'superseded', firstUsedAt: null },
  ],
  [
    'a second first token once one was used',
    ['z', null],
    ['a'],
    null,
    true,
    { kind: 'reuse', reason: 'superseded', firstUsedAt: null },
  ],
] as const)('%s', async (_name, [key, parent], pointer, storedAt, lenient, expected) => {
  const token = { key: k(key), parentKey: parent === null ? null : k(parent) } as RefreshTokenLookup['token'];
  const latestUsed = pointer === null ? null : { key: k(pointer[0]), usedAt: pointer[1] ?? NOW - 1_000 };
  const successor = { parentKey: k(key), issuedAt: storedAt };
  const store = {
    findRefreshToken: (found: RefreshTokenKey) =>
      found === k('next') && storedAt !== null ? { token: successor } : undefined,
  } as unknown as OAuthStore;
  const found = { token, latestUsed, grant: grantRecord(0, { clientId: 'c' }) };
  expect(await classifyPresentation(store, found, k('next'), policy(lenient), NOW)).toEqual(expected);
});

test('a successor found under the derived key but of another parent proves nothing: superseded', async () => {
  const store = {
    findRefreshToken: () => ({ token: { parentKey: k('other'), issuedAt: NOW - 1 } }),
  } as unknown as OAuthStore;
  const found = { token: { key: k('a'), parentKey: null }, latestUsed: { key: k('b'), usedAt: NOW - 1 } };
  expect(
    await classifyPresentation(store, found as RefreshTokenLookup, k('next'), policy(true), NOW),
  ).toEqual({ kind: 'reuse', reason: 'superseded', firstUsedAt: null });
});

describe('successors', () => {
  const key = Buffer.alloc(32, 9);
  test('one token has one successor under one key, in the token format, and another under another key', () => {
    const first = successorOf('g1.secret', 'g1', key);
    expect(successorOf('g1.secret', 'g1', key)).toEqual(first);
    expect(first.token).toMatch(/^g1\.[A-Za-z0-9_-]{43}$/);
    expect(successorOf('g1.secret', 'g1', Buffer.alloc(32, 8)).token).not.toBe(first.token);
    expect(successorOf('g1.secreT', 'g1', key).token).not.toBe(first.token);
  });
  test('the successor key is made from the router secret, not the secret itself', () => {
    const fail = (message: string): never => {
      throw new TypeError(message);
    };
    const policyOf = (secret: Buffer) => parseRefreshTokenReuse(undefined, 30 * 86_400, secret, fail);
    const made = policyOf(Buffer.alloc(32, 1));
    expect(made.successorKey.equals(Buffer.alloc(32, 1))).toBe(false);
    expect(made.successorKey.equals(policyOf(Buffer.alloc(32, 1)).successorKey)).toBe(true);
    // The default window: twice the access-token lifetime (an hour unless told), docs/security.md.
    expect(made).toMatchObject({ windowMs: 7_200_000, untilSuccessorUsed: true });
    expect(parseRefreshTokenReuse(undefined, 30 * 86_400, Buffer.alloc(32), fail, 900).windowMs).toBe(
      1_800_000,
    );
    expect(parseRefreshTokenReuse('strict', 3600, Buffer.alloc(32), fail)).toMatchObject({
      windowMs: 60_000,
      untilSuccessorUsed: false,
    });
    // A refresh token lifetime under the default caps it.
    expect(parseRefreshTokenReuse({}, 3600, Buffer.alloc(32), fail).windowMs).toBe(3_600_000);
    // The bounds: none, and the whole refresh token lifetime.
    expect(parseRefreshTokenReuse({ window: 0 }, 3600, Buffer.alloc(32), fail).windowMs).toBe(0);
    expect(parseRefreshTokenReuse({ window: 3600 }, 3600, Buffer.alloc(32), fail).windowMs).toBe(3_600_000);
  });

  test.each([
    [
      'a word other than strict',
      'lenient',
      "refreshTokenReuse must be 'strict' or { window, untilSuccessorUsed }.",
    ],
    ['0', 0, "refreshTokenReuse must be 'strict' or { window, untilSuccessorUsed }."],
    ['a number', 5, "refreshTokenReuse must be 'strict' or { window, untilSuccessorUsed }."],
    ...[-1, 1.5, 3601, '60'].map((window): [string, unknown, string] => [
      `a window of ${JSON.stringify(window)}`,
      { window },
      `refreshTokenReuse.window must be a whole number of seconds from 0 to the refresh token lifetime (3600), got ${String(window)}.`,
    ]),
    [
      'untilSuccessorUsed that is no boolean',
      { untilSuccessorUsed: 'yes' },
      'refreshTokenReuse.untilSuccessorUsed must be true or false.',
    ],
  ])('refreshTokenReuse with %s fails at start, saying what to give', (_name, given, message) => {
    const fail = (text: string): never => {
      throw new TypeError(text);
    };
    expect(() => parseRefreshTokenReuse(given as never, 3600, Buffer.alloc(32), fail)).toThrow(message);
  });
});

describe('rotateRefreshToken against a scripted store', () => {
  const grant = grantRecord(NOW - 1_000, { clientId: 'c' });
  const reuse = { ...policy(false), successorKey: Buffer.alloc(32, 5) };
  const presented = `${grant.grantId}.presented`;
  const next = successorOf(presented, grant.grantId, reuse.successorKey);
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
  /**
   * A store whose reads of the presented token give the pointers in turn and whose swaps answer in turn; the
   * successor is found once a swap stored it. Calls are recorded.
   */
  function scripted(pointers: Array<string | null>, swaps: Array<boolean | Error>) {
    const advances: unknown[] = [];
    const revoked: string[] = [];
    let successorStored = false;
    const store = {
      findRefreshToken: (key: RefreshTokenKey) => {
        if (key === next.key) {
          return successorStored ? { token: { parentKey: k('p'), issuedAt: NOW - 1_000 } } : undefined;
        }
        // The last pointer given stays the pointer.
        return lookup(pointers.length > 1 ? pointers.shift()! : pointers[0]!);
      },
      advanceRefreshToken: (input: unknown) => {
        advances.push(input);
        const answer = swaps.shift() ?? false;
        if (answer instanceof Error) {
          successorStored = true; // another request stored it first
          throw answer;
        }
        return answer;
      },
      revokeGrant: (grantId: string) => (revoked.push(grantId), true),
    } as unknown as OAuthStore;
    return { store, advances, revoked };
  }
  const input = { presentedToken: presented, clientId: 'c', policy: reuse, now: NOW };

  test('a first use stores the derived successor and moves the pointer', async () => {
    const { store, advances } = scripted(['a'], [true]);
    expect(await rotateRefreshToken(store, input)).toMatchObject({
      status: 'rotated',
      successor: next,
      firstUsedAt: null,
      grant: { lastUsedAt: NOW },
    });
    expect(advances).toEqual([
      {
        grantId: grant.grantId,
        expectedLatestUsed: 'a',
        latestUsed: { key: 'p', usedAt: NOW },
        successor: expect.objectContaining({ key: next.key, parentKey: 'p', issuedAt: NOW }),
      },
    ]);
  });

  test('a lost swap is decided again: the pointer moved to this token, so the second try is a repeat', async () => {
    const { store, advances } = scripted(['a', 'p'], [false, true]);
    const outcome = await rotateRefreshToken(store, input);
    expect(outcome).toMatchObject({ status: 'rotated', successor: next, firstUsedAt: NOW - 1_000 });
    expect(advances[1]).toMatchObject({ expectedLatestUsed: 'p', successor: { parentKey: 'p' } });
    expect(advances[1]).not.toHaveProperty('latestUsed');
  });

  test('two repeats racing to store the successor: the refused insert is a lost swap, then it is found', async () => {
    const { store, advances } = scripted(['p'], [new Error('UNIQUE constraint failed')]);
    expect(await rotateRefreshToken(store, input)).toMatchObject({ status: 'rotated', successor: next });
    expect(advances).toHaveLength(1);
  });

  test('a store error that stored nothing is not swallowed', async () => {
    const { store } = scripted(['a'], []);
    store.advanceRefreshToken = () => {
      throw new Error('the database is gone');
    };
    await expect(rotateRefreshToken(store, input)).rejects.toThrow('the database is gone');
  });

  test('a lost swap to a sibling is reuse: the grant is revoked and nothing is issued', async () => {
    const { store, advances, revoked } = scripted(['a', 'q'], [false]);
    expect(await rotateRefreshToken(store, input)).toEqual({
      status: 'reused',
      grantId: grant.grantId,
      reason: 'superseded',
      firstUsedAt: null,
    });
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
