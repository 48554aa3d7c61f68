// The one store contract suite: every rule of lib/store/types.ts, run against each store implementation. Shipped
// as express-mcp-oauth/testing, so a store written outside this package (Redis, DynamoDB, MongoDB...) proves itself
// with one call, under whatever test runner its author uses: the runner's describe and test are passed in, and
// the checks are node:assert underneath.
import { hashSecret, type SecretHash } from '../crypto/secrets';
import type { GrantRecord, OAuthStore, RotateRefreshTokenResult } from '../store/types';
import { createFakeClock, DAY, MINUTE, SECOND, type FakeClock } from './clock';
import { expect } from './expect';
import { clientRecord, codeRecord, grantRecord, newRefreshToken, newSecret } from './fixtures';
import type { StoreCall, StoreFactory, StoreHarness } from './harness';

const RETRY_WINDOW = 60 * SECOND;

/** What describeStoreContract needs: a name, a factory of fresh stores, and the test runner's describe and test. */
export interface StoreContractOptions {
  /** Shown in the suite's title: "store contract: <name>". */
  name: string;
  factory: StoreFactory;
  /** The runner's `describe` (jest, vitest, mocha, or node:test's). */
  describe: (title: string, body: () => void) => unknown;
  /** The runner's `test` or `it`; each test gets a fresh store and closes it. */
  test: (title: string, body: () => Promise<void>) => unknown;
}

/** Registers every case of the store contract with the given runner. */
export function describeStoreContract({
  name,
  factory,
  describe,
  test: runnerTest,
}: StoreContractOptions): void {
  let clock: FakeClock;
  let harness: StoreHarness;
  let store: OAuthStore;
  const race = (calls: StoreCall[]): Promise<unknown[]> =>
    harness.race
      ? harness.race(calls)
      : Promise.all(
          calls.map((call) =>
            Promise.resolve().then(() =>
              (store[call.method] as (...args: unknown[]) => unknown).apply(store, call.args),
            ),
          ),
        );
  const fresh = async (body: () => Promise<void>) => {
    clock = createFakeClock();
    harness = await factory(clock);
    store = harness.store;
    try {
      await body();
    } finally {
      await harness.close();
    }
  };
  /** A case with a fresh store; `test.each` as in jest, with %s replaced by each case's first value. */
  const test = Object.assign(
    (title: string, body: () => Promise<void>) => runnerTest(title, () => fresh(body)),
    {
      each:
        <Case extends unknown[]>(cases: readonly Case[]) =>
        (title: string, body: (...args: Case) => Promise<void>) => {
          for (const values of cases)
            runnerTest(title.replace('%s', String(values[0])), () => fresh(() => body(...values)));
        },
    },
  );

  describe(`store contract: ${name}`, () => {
    async function newGrant(overrides: Partial<GrantRecord> = {}): Promise<GrantRecord> {
      const client = clientRecord();
      await store.registerClient(client);
      const grant = grantRecord(clock.now(), { clientId: client.clientId, ...overrides });
      await store.createGrant(grant);
      return grant;
    }

    // Tokens in the library's "<grant id>.<secret>" format; `legacy` gives one of the bare-hash format of old.
    async function grantWithToken({ legacy = false } = {}) {
      const grant = await newGrant();
      const token = legacy ? newSecret() : newRefreshToken(grant.grantId);
      await store.saveRefreshToken({
        tokenHash: token.hash,
        grantId: grant.grantId,
        clientId: grant.clientId,
      });
      return { grant, token };
    }

    const rotate = (presented: { hash: SecretHash }, grant: GrantRecord, retryWindowMs = RETRY_WINDOW) => {
      const successor = newRefreshToken(grant.grantId);
      const result = store.rotateRefreshToken({
        presentedHash: presented.hash,
        clientId: grant.clientId,
        successorHash: successor.hash,
        retryWindowMs,
      });
      return Promise.resolve(result).then((outcome) => ({ outcome, successor }));
    };

    describe('clients', () => {
      test('a registered client is found by id with all its metadata', async () => {
        const client = clientRecord({ clientSecretHash: null, tokenEndpointAuthMethod: 'none' });
        await store.registerClient(client);
        expect(await store.findClient(client.clientId)).toEqual(client);
      });

      test('an unknown client id finds nothing', async () => {
        expect(await store.findClient('nobody')).toBeUndefined();
      });

      test('a client id cannot be registered twice', async () => {
        const client = clientRecord();
        await store.registerClient(client);
        // Errors from a native driver may come from another realm, so the rejection is caught, not matched.
        const outcome = await Promise.resolve()
          .then(() => store.registerClient({ ...client, clientName: 'Impostor' }))
          .then(
            () => 'stored',
            () => 'refused',
          );
        expect(outcome).toBe('refused');
        expect((await store.findClient(client.clientId))?.clientName).toBe(client.clientName);
      });
    });

    describe('client metadata documents', () => {
      const url = 'https://app.example/oauth/client.json';

      test('a document is saved as a client and replaced by its newer copy', async () => {
        const first = clientRecord({
          clientId: url,
          clientSecretHash: null,
          tokenEndpointAuthMethod: 'none',
          metadata: { client_uri: 'https://app.example' },
        });
        await store.saveClientDocument(first);
        expect(await store.findClient(url)).toEqual(first);
        const second = {
          ...first,
          clientName: 'Renamed',
          redirectUris: ['http://127.0.0.1/callback'],
          tokenEndpointAuthMethod: 'private_key_jwt' as const,
          metadata: { jwks_uri: 'https://app.example/jwks.json' },
          issuedAt: 5,
        };
        await store.saveClientDocument(second);
        expect(await store.findClient(url)).toEqual(second);
      });

      test('a grant of a document client keeps working when the document changes', async () => {
        const client = clientRecord({
          clientId: url,
          clientSecretHash: null,
          tokenEndpointAuthMethod: 'none',
        });
        await store.saveClientDocument(client);
        const grant = grantRecord(clock.now(), { clientId: url });
        await store.createGrant(grant);
        await store.saveClientDocument({ ...client, clientName: 'New name' });
        expect(await store.isGrantActive(grant.grantId)).toBe(true);
        expect((await store.listActiveGrants(grant.userId))[0]).toMatchObject({ clientName: 'New name' });
      });
    });

    describe('client assertion ids', () => {
      test('a jti is accepted once per client while it lives, then may be taken again', async () => {
        const expiresAt = clock.now() + MINUTE;
        expect(await store.useAssertionId('client-a', 'jti-1', expiresAt)).toBe(true);
        expect(await store.useAssertionId('client-a', 'jti-1', expiresAt)).toBe(false);
        // Another client's identical jti is its own.
        expect(await store.useAssertionId('client-b', 'jti-1', expiresAt)).toBe(true);
        clock.advance(MINUTE);
        expect(await store.useAssertionId('client-a', 'jti-1', clock.now() + MINUTE)).toBe(true);
      });

      test('a replayed assertion raced over many connections is accepted exactly once', async () => {
        const calls = Array.from({ length: 16 }, () => ({
          method: 'useAssertionId' as const,
          args: ['client-a', 'raced-jti', clock.now() + MINUTE],
        }));
        const outcomes = await race(calls);
        expect(outcomes.filter((outcome) => outcome === true)).toHaveLength(1);
        expect(outcomes.filter((outcome) => outcome === false)).toHaveLength(15);
      });

      test('expired assertion ids are purged', async () => {
        await store.useAssertionId('client-a', 'old', clock.now() + MINUTE);
        await store.useAssertionId('client-a', 'live', clock.now() + 10 * MINUTE);
        clock.advance(2 * MINUTE);
        let total = 0;
        for (let removed = -1; removed !== 0;) total += removed = await store.purgeExpired(10);
        expect(total).toBe(1);
        expect(await store.useAssertionId('client-a', 'live', clock.now() + MINUTE)).toBe(false);
      });
    });

    describe('grants', () => {
      test('a new grant is found and active', async () => {
        const grant = await newGrant();
        expect(await store.findGrant(grant.grantId)).toEqual(grant);
        expect(await store.isGrantActive(grant.grantId)).toBe(true);
        expect(await store.isGrantActive('no-such-grant')).toBe(false);
      });

      test('revocation is idempotent and ends the grant', async () => {
        const grant = await newGrant();
        expect(await store.revokeGrant(grant.grantId)).toBe(true);
        expect(await store.revokeGrant(grant.grantId)).toBe(false);
        expect(await store.revokeGrant('no-such-grant')).toBe(false);
        expect(await store.isGrantActive(grant.grantId)).toBe(false);
        expect((await store.findGrant(grant.grantId))?.revokedAt).toBe(clock.now());
      });

      test('an expired grant is neither active nor returned', async () => {
        const grant = await newGrant({ expiresAt: clock.now() + DAY });
        clock.advance(DAY);
        expect(await store.isGrantActive(grant.grantId)).toBe(false);
        expect(await store.findGrant(grant.grantId)).toBeUndefined();
      });

      test("a user's active grants are listed newest first with client names, others left out", async () => {
        const older = await newGrant({ userId: 'alice' });
        clock.advance(SECOND);
        const newer = await newGrant({ userId: 'alice' });
        const revoked = await newGrant({ userId: 'alice' });
        await store.revokeGrant(revoked.grantId);
        await newGrant({ userId: 'alice', expiresAt: clock.now() + MINUTE });
        await newGrant({ userId: 'bob' });
        clock.advance(MINUTE);
        const listed = await store.listActiveGrants('alice');
        expect(listed.map((grant) => grant.grantId)).toEqual([newer.grantId, older.grantId]);
        expect(listed[0]!.clientName).toBe('Test Client');
      });

      test('grants created in the same millisecond are listed by grant id, highest first (time-ordered ids: newest)', async () => {
        for (const grantId of ['grant-b', 'grant-c', 'grant-a']) await newGrant({ grantId, userId: 'carol' });
        const listed = await store.listActiveGrants('carol');
        expect(listed.map((grant) => grant.grantId)).toEqual(['grant-c', 'grant-b', 'grant-a']);
      });
    });

    describe('authorization codes', () => {
      test('a code is consumed exactly once; later attempts are reported as replays', async () => {
        const grant = await newGrant();
        const code = codeRecord(clock.now(), grant);
        await store.saveAuthorizationCode(code);
        expect(await store.findAuthorizationCode(code.codeHash)).toEqual(code);
        expect(await store.consumeAuthorizationCode(code.codeHash)).toEqual({
          status: 'consumed',
          code,
          grant,
        });
        expect(await store.consumeAuthorizationCode(code.codeHash)).toEqual({ status: 'replayed', code });
      });

      test('consuming with a first refresh token saves it under the grant in the same step', async () => {
        const grant = await newGrant();
        const code = codeRecord(clock.now(), grant);
        await store.saveAuthorizationCode(code);
        const token = newRefreshToken(grant.grantId);
        clock.advance(SECOND);
        const outcome = await store.consumeAuthorizationCode(code.codeHash, { tokenHash: token.hash });
        expect(outcome).toEqual({ status: 'consumed', code, grant: { ...grant, lastUsedAt: clock.now() } });
        expect(await store.findRefreshToken(token.hash)).toMatchObject({
          grantId: grant.grantId,
          clientId: grant.clientId,
          expiresAt: grant.expiresAt,
          parentHash: null,
        });
        // The grant reports when its first token was issued as its last use.
        expect((await store.findGrant(grant.grantId))?.lastUsedAt).toBe(clock.now());
      });

      test('a code whose grant was revoked is consumed without a grant, and no refresh token is saved', async () => {
        const grant = await newGrant();
        const code = codeRecord(clock.now(), grant);
        await store.saveAuthorizationCode(code);
        await store.revokeGrant(grant.grantId);
        const token = newSecret();
        expect(await store.consumeAuthorizationCode(code.codeHash, { tokenHash: token.hash })).toEqual({
          status: 'consumed',
          code,
          grant: undefined,
        });
        expect(await store.findRefreshToken(token.hash)).toBeUndefined();
      });

      test('an unknown code is not found', async () => {
        expect(await store.consumeAuthorizationCode(hashSecret('never issued'))).toEqual({
          status: 'not_found',
        });
        expect(await store.findAuthorizationCode(hashSecret('never issued'))).toBeUndefined();
      });

      test('an expired code is invisible and cannot be consumed', async () => {
        const grant = await newGrant();
        const code = codeRecord(clock.now(), grant);
        await store.saveAuthorizationCode(code);
        clock.advance(10 * MINUTE);
        expect(await store.findAuthorizationCode(code.codeHash)).toBeUndefined();
        expect(await store.consumeAuthorizationCode(code.codeHash)).toEqual({ status: 'not_found' });
      });

      test('code replay race: 50 concurrent redemptions give exactly one success', async () => {
        const grant = await newGrant();
        const code = codeRecord(clock.now(), grant);
        await store.saveAuthorizationCode(code);
        const calls = Array.from({ length: 50 }, () => ({
          method: 'consumeAuthorizationCode' as const,
          args: [code.codeHash],
        }));
        const statuses = ((await race(calls)) as Array<{ status: string }>).map((result) => result.status);
        expect(statuses.filter((status) => status === 'consumed')).toHaveLength(1);
        expect(statuses.filter((status) => status === 'replayed')).toHaveLength(49);
      });
    });

    describe('refresh tokens', () => {
      test("a grant's last use follows every rotation and retry, the same wherever it is read", async () => {
        const { grant, token } = await grantWithToken();
        const lastUse = async () => [
          (await store.findGrant(grant.grantId))?.lastUsedAt,
          (await store.listActiveGrants(grant.userId)).find((listed) => listed.grantId === grant.grantId)
            ?.lastUsedAt,
        ];
        expect(await lastUse()).toEqual([clock.now(), clock.now()]);
        clock.advance(5 * SECOND);
        const first = await rotate(token, grant);
        expect((first.outcome as { grant: GrantRecord }).grant.lastUsedAt).toBe(clock.now());
        expect(await lastUse()).toEqual([clock.now(), clock.now()]);
        clock.advance(5 * SECOND);
        // A retry of the same token (a lost response) is a use too.
        const retry = await rotate(token, grant);
        expect(retry.outcome.status).toBe('rotated');
        expect((retry.outcome as { grant: GrantRecord }).grant.lastUsedAt).toBe(clock.now());
        expect(await lastUse()).toEqual([clock.now(), clock.now()]);
        clock.advance(5 * SECOND);
        await rotate(first.successor, grant);
        expect(await lastUse()).toEqual([clock.now(), clock.now()]);
      });

      test('the first token of a grant expires with the grant and marks it used', async () => {
        const { grant, token } = await grantWithToken();
        const record = await store.findRefreshToken(token.hash);
        expect(record).toMatchObject({
          grantId: grant.grantId,
          expiresAt: grant.expiresAt,
          parentHash: null,
          revokedAt: null,
        });
        expect((await store.findGrant(grant.grantId))?.lastUsedAt).toBe(clock.now());
      });

      test.each<[string, boolean]>([
        ['the current', false],
        ['the old bare-hash', true],
      ])(
        'rotation of a token in %s format issues a working successor that expires with the grant',
        async (_name, legacy) => {
          const { grant, token } = await grantWithToken({ legacy });
          const first = await rotate(token, grant);
          expect(first.outcome).toMatchObject({ status: 'rotated', successorExpiresAt: grant.expiresAt });
          expect((first.outcome as { grant: GrantRecord }).grant).toMatchObject({
            grantId: grant.grantId,
            scopes: grant.scopes,
          });
          expect(await store.findRefreshToken(first.successor.hash)).toMatchObject({
            parentHash: token.hash,
          });
          expect((await rotate(first.successor, grant)).outcome.status).toBe('rotated');
        },
      );

      test('a lost response: the used token works again within the retry window while its successor is unused', async () => {
        const { grant, token } = await grantWithToken();
        const lost = await rotate(token, grant);
        clock.advance(RETRY_WINDOW - SECOND);
        const retried = await rotate(token, grant);
        expect(retried.outcome.status).toBe('rotated');
        // Either successor may be the one the client kept; the first to be used invalidates the other.
        expect((await rotate(retried.successor, grant)).outcome.status).toBe('rotated');
        expect((await rotate(lost.successor, grant)).outcome.status).toBe('reused');
        expect(await store.isGrantActive(grant.grantId)).toBe(false);
      });

      test('refresh reuse after the retry window revokes the whole grant', async () => {
        const { grant, token } = await grantWithToken();
        const next = await rotate(token, grant);
        clock.advance(RETRY_WINDOW + SECOND);
        expect((await rotate(token, grant)).outcome).toEqual({ status: 'reused', grantId: grant.grantId });
        expect(await store.isGrantActive(grant.grantId)).toBe(false);
        expect((await store.findRefreshToken(next.successor.hash))?.revokedAt).toBe(clock.now());
        expect((await rotate(next.successor, grant)).outcome.status).toBe('invalid');
      });

      test('a token from several rotations back revokes the grant, however long the chain', async () => {
        const { grant, token } = await grantWithToken();
        let current = token;
        for (let i = 0; i < 4; i += 1) current = (await rotate(current, grant)).successor;
        const old = (await rotate(token, grant)).outcome;
        expect(old).toEqual({ status: 'reused', grantId: grant.grantId });
        expect((await rotate(current, grant)).outcome.status).toBe('invalid');
      });

      test('a first token of the grant saved beside the one already used is stale once that one is used', async () => {
        const { grant, token } = await grantWithToken();
        const other = newSecret();
        await store.saveRefreshToken({
          tokenHash: other.hash,
          grantId: grant.grantId,
          clientId: grant.clientId,
        });
        await rotate(token, grant);
        expect((await rotate(other, grant)).outcome.status).toBe('reused');
      });

      test('refresh reuse after the successor was used revokes the grant, even within the window', async () => {
        const { grant, token } = await grantWithToken();
        const next = await rotate(token, grant);
        await rotate(next.successor, grant);
        expect((await rotate(token, grant)).outcome.status).toBe('reused');
        expect(await store.isGrantActive(grant.grantId)).toBe(false);
      });

      test('with a retry window of 0 a token is strictly single-use', async () => {
        const { grant, token } = await grantWithToken();
        await rotate(token, grant, 0);
        clock.advance(1);
        expect((await rotate(token, grant, 0)).outcome.status).toBe('reused');
      });

      const invalidCases: Array<
        [string, (ctx: Awaited<ReturnType<typeof grantWithToken>>) => Promise<unknown>]
      > = [
        ['an unknown token', async (ctx) => Object.assign(ctx, { token: newSecret() })],
        ['an expired token', async () => clock.advance(31 * DAY)],
        ['a token of a revoked grant', async (ctx) => store.revokeGrant(ctx.grant.grantId)],
        [
          'a token issued to another client',
          async (ctx) => Object.assign(ctx, { grant: { ...ctx.grant, clientId: 'other' } }),
        ],
      ];
      test.each(invalidCases)('%s is invalid and changes nothing', async (_name, arrange) => {
        const ctx = await grantWithToken();
        const original = { ...ctx };
        await arrange(ctx);
        expect((await rotate(ctx.token, ctx.grant)).outcome).toEqual({ status: 'invalid' });
        // Nothing was used up: where the original token is still good, it still rotates for its own client.
        if (await store.isGrantActive(original.grant.grantId)) {
          expect((await rotate(original.token, original.grant)).outcome.status).toBe('rotated');
        }
      });

      test('an expired token is invisible', async () => {
        const { token } = await grantWithToken();
        clock.advance(30 * DAY);
        expect(await store.findRefreshToken(token.hash)).toBeUndefined();
      });

      test('revoking a grant revokes its whole token family', async () => {
        const { grant, token } = await grantWithToken();
        const next = await rotate(token, grant);
        await store.revokeGrant(grant.grantId);
        expect((await store.findRefreshToken(token.hash))?.revokedAt).toBe(clock.now());
        expect((await store.findRefreshToken(next.successor.hash))?.revokedAt).toBe(clock.now());
      });

      test('concurrent rotations never leave two successors that both work once one is used', async () => {
        const { grant, token } = await grantWithToken();
        const successors = Array.from({ length: 20 }, () => newSecret());
        const results = (await race(
          successors.map((successor) => ({
            method: 'rotateRefreshToken' as const,
            args: [
              {
                presentedHash: token.hash,
                clientId: grant.clientId,
                successorHash: successor.hash,
                retryWindowMs: RETRY_WINDOW,
              },
            ],
          })),
        )) as RotateRefreshTokenResult[];
        const issued = successors.filter((_, index) => results[index]!.status === 'rotated');
        expect(issued.length).toBeGreaterThanOrEqual(1);
        // Now race every issued successor: at most one may succeed.
        const uses = (await race(
          issued.map((successor) => ({
            method: 'rotateRefreshToken' as const,
            args: [
              {
                presentedHash: successor.hash,
                clientId: grant.clientId,
                successorHash: newSecret().hash,
                retryWindowMs: RETRY_WINDOW,
              },
            ],
          })),
        )) as RotateRefreshTokenResult[];
        expect(uses.filter((use) => use.status === 'rotated').length).toBeLessThanOrEqual(1);
        for (const successor of issued) {
          expect((await rotate(successor, grant)).outcome.status).not.toBe('rotated');
        }
      });
    });

    describe('purge', () => {
      test('expired rows go in bounded batches; live rows stay', async () => {
        const short = Array.from({ length: 3 }, () => ({ expiresAt: clock.now() + MINUTE }));
        const expiring = await Promise.all(short.map((overrides) => newGrant(overrides)));
        for (const [index, grant] of expiring.entries()) {
          await store.saveAuthorizationCode(codeRecord(clock.now(), grant, { expiresAt: grant.expiresAt }));
          // Refresh tokens of both formats, and a successor: all go with their grant.
          const first = index === 0 ? newSecret() : newRefreshToken(grant.grantId);
          const save = { tokenHash: first.hash, grantId: grant.grantId, clientId: grant.clientId };
          await store.saveRefreshToken(save);
          await rotate(first, grant);
        }
        const live = await grantWithToken();
        const next = await rotate(live.token, live.grant);
        const rows = harness.refreshTokenRows ? () => harness.refreshTokenRows!() : undefined;
        if (rows) expect(await rows()).toBe(3 * 2 + 2);
        clock.advance(MINUTE);
        const batches: number[] = [];
        for (let removed = -1; removed !== 0;) batches.push((removed = await store.purgeExpired(2)));
        expect(batches.every((count) => count <= 2 * 3)).toBe(true);
        // Three codes and three grants expired; a code may go with its grant (cascade) instead of on its own.
        const total = batches.reduce((a, b) => a + b, 0);
        expect(total).toBeGreaterThanOrEqual(3);
        expect(total).toBeLessThanOrEqual(6);
        expect(await store.findGrant(live.grant.grantId)).toBeDefined();
        expect(await store.findRefreshToken(live.token.hash)).toBeDefined();
        expect(await store.findRefreshToken(next.successor.hash)).toBeDefined();
        if (rows) expect(await rows()).toBe(2);
      });
    });

    test('no code, refresh token or client secret is persisted in plain text', async () => {
      const secret = newSecret();
      const grant = await newGrant();
      await store.registerClient(clientRecord({ clientSecretHash: secret.hash }));
      const code = newSecret();
      await store.saveAuthorizationCode(codeRecord(clock.now(), grant, { codeHash: code.hash }));
      const token = newSecret();
      await store.saveRefreshToken({
        tokenHash: token.hash,
        grantId: grant.grantId,
        clientId: grant.clientId,
      });
      const successor = newSecret();
      await store.rotateRefreshToken({
        presentedHash: token.hash,
        clientId: grant.clientId,
        successorHash: successor.hash,
        retryWindowMs: 0,
      });
      if (!harness.persistedBytes) return; // the store cannot show its bytes: nothing to scan
      const bytes = (await harness.persistedBytes()).toString('latin1');
      for (const value of [secret, code, token, successor]) {
        expect(bytes).toContain(value.hash); // the scan reads what the store wrote ...
        expect(bytes).not.toContain(value.plain); // ... and the secret itself is not there
      }
    });
  });
}
