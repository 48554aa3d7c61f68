// The store contract for refresh tokens: the two primitives (findRefreshToken, advanceRefreshToken) on their own,
// then the library's rotation rule run on the store, which is what a client sees.
import { codeRecord, newRefreshToken } from './fixtures';
import { DAY, SECOND } from './clock';
import {
  firstToken,
  grantWithToken,
  newGrant,
  rotate,
  RETRY_WINDOW,
  type ContractEnv,
  type HeldToken,
} from './contract-env';
import { expect } from './expect';
import type { AdvanceRefreshTokenInput, GrantRecord, RefreshTokenKey } from '../store/types';

/** An advanceRefreshToken input: a successor of `presented`, moving the pointer to it unless `retry`. */
function advanceInput(
  grant: GrantRecord,
  presented: HeldToken,
  expected: RefreshTokenKey | null,
  at: number,
  { retry = false } = {},
): AdvanceRefreshTokenInput {
  return {
    grantId: grant.grantId,
    expectedLatestUsed: expected,
    ...(retry ? {} : { latestUsed: { key: presented.hash, usedAt: at } }),
    successor: {
      key: newRefreshToken(grant.grantId).hash,
      grantId: grant.grantId,
      clientId: grant.clientId,
      parentKey: presented.hash,
      issuedAt: at,
      expiresAt: grant.expiresAt,
    },
  };
}

export function describeRefreshTokenContract(env: ContractEnv): void {
  const { describe, test } = env;

  describe('refresh tokens: findRefreshToken', () => {
    test('finds a token with its grant and the grant’s rotation pointer, null until a first use', async () => {
      const { grant, token } = await grantWithToken(env);
      expect(await env.store.findRefreshToken(token.hash)).toEqual({
        token: {
          key: token.hash,
          grantId: grant.grantId,
          clientId: grant.clientId,
          parentKey: null,
          issuedAt: env.clock.now(),
          expiresAt: grant.expiresAt,
        },
        grant: { ...grant, lastUsedAt: env.clock.now() },
        latestUsed: null,
      });
      env.clock.advance(SECOND);
      const { successor } = await rotate(env, token, grant);
      const found = await env.store.findRefreshToken(successor!.hash);
      expect(found?.latestUsed).toEqual({ key: token.hash, usedAt: env.clock.now() });
      expect(found?.token).toMatchObject({ parentKey: token.hash, issuedAt: env.clock.now() });
    });

    test('an unknown or expired token is not found; a revoked one is, with its revoked grant', async () => {
      const { grant, token } = await grantWithToken(env);
      expect(await env.store.findRefreshToken(newRefreshToken(grant.grantId).hash)).toBeUndefined();
      await env.store.revokeGrant(grant.grantId);
      expect((await env.store.findRefreshToken(token.hash))?.grant.revokedAt).toBe(env.clock.now());
      env.clock.advance(30 * DAY);
      expect(await env.store.findRefreshToken(token.hash)).toBeUndefined();
    });
  });

  describe('refresh tokens: advanceRefreshToken (compare-and-set)', () => {
    test('a matching pointer moves, the successor is stored, the grant is marked used', async () => {
      const { grant, token } = await grantWithToken(env);
      env.clock.advance(SECOND);
      const input = advanceInput(grant, token, null, env.clock.now());
      expect(await env.store.advanceRefreshToken(input)).toBe(true);
      const found = await env.store.findRefreshToken(input.successor.key);
      expect(found?.token).toEqual(input.successor);
      expect(found?.latestUsed).toEqual({ key: token.hash, usedAt: env.clock.now() });
      expect((await env.store.findGrant(grant.grantId))?.lastUsedAt).toBe(env.clock.now());
    });

    test('a retry compares the pointer and leaves it, with its time, as it was', async () => {
      const { grant, token } = await grantWithToken(env);
      const usedAt = env.clock.now();
      await env.store.advanceRefreshToken(advanceInput(grant, token, null, usedAt));
      env.clock.advance(5 * SECOND);
      const retry = advanceInput(grant, token, token.hash, env.clock.now(), { retry: true });
      expect(await env.store.advanceRefreshToken(retry)).toBe(true);
      const found = await env.store.findRefreshToken(retry.successor.key);
      expect(found?.latestUsed).toEqual({ key: token.hash, usedAt });
      expect(found?.grant.lastUsedAt).toBe(env.clock.now());
    });

    const refused: Array<[string, (ctx: { grant: GrantRecord; token: HeldToken }) => Promise<unknown>]> = [
      ['the pointer moved since it was read', async () => undefined],
      ['the grant was revoked', async ({ grant }) => env.store.revokeGrant(grant.grantId)],
      ['the grant expired', async () => env.clock.advance(30 * DAY)],
    ];
    test.each(refused)('refused, changing nothing, when %s', async (name, arrange) => {
      const { grant, token } = await grantWithToken(env);
      // The pointer is the first token's after this first use; "moved" presents an input read before it.
      await env.store.advanceRefreshToken(advanceInput(grant, token, null, env.clock.now()));
      await arrange({ grant, token });
      const expected = name.startsWith('the pointer') ? null : token.hash;
      const input = advanceInput(grant, token, expected, env.clock.now(), { retry: expected !== null });
      expect(await env.store.advanceRefreshToken(input)).toBe(false);
      expect(await env.store.findRefreshToken(input.successor.key)).toBeUndefined();
    });

    test('20 racing swaps of the same pointer: exactly one wins, and only its successor exists', async () => {
      const { grant } = await grantWithToken(env);
      const siblings = await Promise.all(Array.from({ length: 4 }, () => firstToken(env, grant)));
      const inputs = Array.from({ length: 20 }, (_, index) =>
        advanceInput(grant, siblings[index % siblings.length]!, null, env.clock.now()),
      );
      const outcomes = await env.race(
        inputs.map((input) => ({ method: 'advanceRefreshToken', args: [input] })),
      );
      expect(outcomes.filter((outcome) => outcome === true)).toHaveLength(1);
      const winner = inputs[outcomes.indexOf(true)]!;
      for (const input of inputs) {
        const found = await env.store.findRefreshToken(input.successor.key);
        if (input === winner) expect(found?.latestUsed?.key).toBe(winner.latestUsed!.key);
        else expect(found).toBeUndefined();
      }
    });
  });

  describe('refresh tokens: the library’s rotation rule on this store', () => {
    test("a grant's last use follows every rotation, the same wherever it is read", async () => {
      const { grant, token } = await grantWithToken(env);
      const lastUse = async () => [
        (await env.store.findGrant(grant.grantId))?.lastUsedAt,
        (await env.store.listActiveGrants(grant.userId)).find((listed) => listed.grantId === grant.grantId)
          ?.lastUsedAt,
      ];
      expect(await lastUse()).toEqual([env.clock.now(), env.clock.now()]);
      env.clock.advance(5 * SECOND);
      const first = await rotate(env, token, grant);
      expect((first.outcome as { grant: GrantRecord }).grant.lastUsedAt).toBe(env.clock.now());
      expect(await lastUse()).toEqual([env.clock.now(), env.clock.now()]);
      const rotatedAt = env.clock.now();
      env.clock.advance(5 * SECOND);
      // The same token again (a lost response) gets the same successor, which is already stored: nothing is written.
      const repeat = await rotate(env, token, grant);
      expect(repeat.successor).toEqual(first.successor);
      expect(await lastUse()).toEqual([rotatedAt, rotatedAt]);
      env.clock.advance(5 * SECOND);
      await rotate(env, first.successor!, grant);
      expect(await lastUse()).toEqual([env.clock.now(), env.clock.now()]);
    });

    test("a grant's last use is when its newest refresh token was issued, by a code exchange or a rotation", async () => {
      const grant = await newGrant(env);
      const lastUse = async (token: HeldToken) => [
        (await env.store.findGrant(grant.grantId))?.lastUsedAt,
        (await env.store.listActiveGrants(grant.userId)).find((listed) => listed.grantId === grant.grantId)
          ?.lastUsedAt,
        (await env.store.findRefreshToken(token.hash))?.grant.lastUsedAt,
      ];
      // A code exchanged without a refresh token (a client without the refresh_token grant) leaves it unset.
      const accessOnly = codeRecord(env.clock.now(), grant);
      await env.store.saveAuthorizationCode(accessOnly);
      const exchanged = await env.store.consumeAuthorizationCode(accessOnly.codeHash);
      expect(exchanged).toMatchObject({ status: 'consumed', grant: { lastUsedAt: null } });
      expect((await env.store.findGrant(grant.grantId))?.lastUsedAt).toBe(null);
      env.clock.advance(SECOND);
      const token = await firstToken(env, grant);
      expect(await lastUse(token)).toEqual(Array(3).fill(env.clock.now()));
      env.clock.advance(5 * SECOND);
      await rotate(env, token, grant);
      expect(await lastUse(token)).toEqual(Array(3).fill(env.clock.now()));
      // Another code of the same grant, after rotations: its first token is the newest, so it sets the last use.
      env.clock.advance(5 * SECOND);
      const second = await firstToken(env, grant);
      expect(await lastUse(second)).toEqual(Array(3).fill(env.clock.now()));
    });

    test('a token rotates to a working successor that expires with the grant', async () => {
      const { grant, token } = await grantWithToken(env);
      const first = await rotate(env, token, grant);
      expect(first.outcome.status).toBe('rotated');
      expect((first.outcome as { grant: GrantRecord }).grant).toMatchObject({
        grantId: grant.grantId,
        scopes: grant.scopes,
      });
      expect((await env.store.findRefreshToken(first.successor!.hash))?.token).toMatchObject({
        parentKey: token.hash,
        expiresAt: grant.expiresAt,
      });
      expect((await rotate(env, first.successor!, grant)).outcome.status).toBe('rotated');
    });

    test('a lost response: the used token gets the same successor again within the window', async () => {
      const { grant, token } = await grantWithToken(env);
      const lost = await rotate(env, token, grant);
      env.clock.advance(RETRY_WINDOW - SECOND);
      const retried = await rotate(env, token, grant);
      expect(retried.outcome).toMatchObject({
        status: 'rotated',
        firstUsedAt: env.clock.now() - RETRY_WINDOW + SECOND,
      });
      expect(retried.successor).toEqual(lost.successor);
      expect((await rotate(env, retried.successor!, grant)).outcome).toMatchObject({
        status: 'rotated',
        firstUsedAt: null,
      });
    });

    test('refresh reuse after the window revokes the whole grant', async () => {
      const { grant, token } = await grantWithToken(env);
      const next = await rotate(env, token, grant);
      const usedAt = env.clock.now();
      env.clock.advance(RETRY_WINDOW + SECOND);
      expect((await rotate(env, token, grant)).outcome).toEqual({
        status: 'reused',
        grantId: grant.grantId,
        reason: 'after_window',
        firstUsedAt: usedAt,
      });
      expect(await env.store.isGrantActive(grant.grantId)).toBe(false);
      expect((await env.store.findRefreshToken(next.successor!.hash))?.grant.revokedAt).toBe(env.clock.now());
      expect((await rotate(env, next.successor!, grant)).outcome.status).toBe('invalid');
    });

    test('a token from several rotations back gets its own successor within its window, and revokes after', async () => {
      const { grant, token } = await grantWithToken(env);
      const chain = [token];
      for (let i = 0; i < 4; i += 1) {
        chain.push((await rotate(env, chain[i]!, grant)).successor!);
        env.clock.advance(10 * SECOND);
      }
      // Two processes sharing one stored token: the one that kept the first token catches up along the same chain.
      expect((await rotate(env, token, grant)).successor).toEqual(chain[1]);
      expect((await rotate(env, chain[1]!, grant)).successor).toEqual(chain[2]);
      env.clock.advance(RETRY_WINDOW);
      expect((await rotate(env, token, grant)).outcome).toMatchObject({
        status: 'reused',
        reason: 'after_window',
      });
      expect((await rotate(env, chain[4]!, grant)).outcome.status).toBe('invalid');
    });

    test('a second first token of the grant (another code) is superseded once the first is used', async () => {
      const { grant, token } = await grantWithToken(env);
      const other = await firstToken(env, grant);
      await rotate(env, token, grant);
      expect((await rotate(env, other, grant)).outcome).toMatchObject({
        status: 'reused',
        reason: 'superseded',
        firstUsedAt: null,
      });
    });

    test('the latest used token comes back at any time while its successor is unused, when the policy says so', async () => {
      const lenient = { window: 60, untilSuccessorUsed: true };
      const { grant, token } = await grantWithToken(env);
      const next = await rotate(env, token, grant, lenient);
      env.clock.advance(3 * DAY);
      // A client that lost the answer, days later: nobody went on with the grant, so it is not reuse.
      expect((await rotate(env, token, grant, lenient)).successor).toEqual(next.successor);
      const after = await rotate(env, next.successor!, grant, lenient);
      env.clock.advance(RETRY_WINDOW + SECOND);
      // Once its successor was used, the old token is reuse after the window; the policy's exception is for the latest.
      expect((await rotate(env, token, grant, lenient)).outcome.status).toBe('reused');
      expect((await rotate(env, after.successor!, grant, lenient)).outcome.status).toBe('invalid');
    });

    test('with a window of 0 a token is strictly single-use', async () => {
      const strict = { window: 0, untilSuccessorUsed: false };
      const { grant, token } = await grantWithToken(env);
      await rotate(env, token, grant, strict);
      env.clock.advance(1);
      expect((await rotate(env, token, grant, strict)).outcome.status).toBe('reused');
    });

    type Held = Awaited<ReturnType<typeof grantWithToken>>;
    const invalidCases: Array<[string, (ctx: Held) => Promise<unknown>]> = [
      ['an unknown token', async (ctx) => Object.assign(ctx, { token: newRefreshToken(ctx.grant.grantId) })],
      ['an expired token', async () => env.clock.advance(31 * DAY)],
      ['a token of a revoked grant', async (ctx) => env.store.revokeGrant(ctx.grant.grantId)],
      [
        'a token issued to another client',
        async (ctx) => Object.assign(ctx, { grant: { ...ctx.grant, clientId: 'other' } }),
      ],
    ];
    test.each(invalidCases)('%s is invalid and changes nothing', async (_name, arrange) => {
      const ctx = await grantWithToken(env);
      const original = { ...ctx };
      await arrange(ctx);
      expect((await rotate(env, ctx.token, ctx.grant)).outcome).toEqual({ status: 'invalid' });
      // Nothing was used up: where the original token is still good, it still rotates for its own client.
      if (await env.store.isGrantActive(original.grant.grantId)) {
        expect((await rotate(env, original.token, original.grant)).outcome.status).toBe('rotated');
      }
    });

    test('concurrent rotations of one token converge on one successor, and so do their successors', async () => {
      const { grant, token } = await grantWithToken(env);
      // All 20 read the same pointer before any swaps it (the awaits interleave them): one first use, and the rest
      // repeats of it, answered with the same successor.
      let current = token;
      for (let round = 0; round < 2; round += 1) {
        const results = await Promise.all(Array.from({ length: 20 }, () => rotate(env, current, grant)));
        expect(results.map((result) => result.outcome.status)).toEqual(Array(20).fill('rotated'));
        const issued = new Set(results.map((result) => result.successor!.plain));
        expect(issued.size).toBe(1);
        expect(
          results.filter((result) => (result.outcome as { firstUsedAt: unknown }).firstUsedAt === null),
        ).toHaveLength(1);
        current = results[0]!.successor!;
      }
      expect((await env.store.findRefreshToken(current.hash))?.latestUsed?.key).not.toBe(current.hash);
      expect(await env.store.isGrantActive(grant.grantId)).toBe(true);
    });

    test('revoking a grant revokes its whole token family', async () => {
      const { grant, token } = await grantWithToken(env);
      const next = await rotate(env, token, grant);
      await env.store.revokeGrant(grant.grantId);
      for (const held of [token, next.successor!]) {
        expect((await env.store.findRefreshToken(held.hash))?.grant.revokedAt).toBe(env.clock.now());
      }
      expect((await rotate(env, next.successor!, grant)).outcome.status).toBe('invalid');
    });
  });
}
