// The one store contract suite: every rule of lib/store/types.ts, run against each store implementation. Shipped
// as express-mcp-oauth/testing, so a store written outside this package (Redis, DynamoDB, MongoDB...) proves itself
// with one call, under whatever test runner its author uses: the runner's describe and test are passed in, and
// the checks are node:assert underneath.
import { hashSecret } from '../crypto/secrets';
import type { GrantRecord, OAuthStore } from '../store/types';
import { createFakeClock, DAY, MINUTE, SECOND, type FakeClock } from './clock';
import {
  firstToken,
  grantWithToken,
  newGrant as newGrantOf,
  outcomeOf,
  rotate,
  type ContractEnv,
  type ContractTest,
  type OptionalCapability,
} from './contract-env';
import { describeClientDocumentContract } from './contract-client-documents';
import { describeDeviceAuthorizationContract } from './contract-device-authorizations';
import { describeOperatorListContract } from './contract-operator-lists';
import { describeRefreshTokenContract } from './contract-refresh-tokens';
import { describeSigningKeyContract } from './contract-signing-keys';
import { describeUpstreamTokenContract } from './contract-upstream-tokens';
import { expect } from './expect';
import { clientRecord, codeRecord, grantRecord, newRefreshToken, newSecret } from './fixtures';
import type { StoreCall, StoreFactory, StoreHarness } from './harness';

/** What describeStoreContract needs: a name, a factory of fresh stores, and the test runner's describe and test. */
export interface StoreContractOptions {
  /** Shown in the suite's title: "store contract: <name>". */
  name: string;
  factory: StoreFactory;
  /** The runner's `describe` (jest, vitest, mocha, or node:test's). */
  describe: (title: string, body: () => void) => unknown;
  /** The runner's `test` or `it`; each test gets a fresh store and closes it. */
  test: (title: string, body: () => Promise<void>) => unknown;
  /**
   * Whether the store also keeps a signing key set (SigningKeyStore, for createKeySetSigner), whose cases then run
   * too. Default true; false for a store without one.
   */
  signingKeys?: boolean;
  /**
   * Whether the store also keeps users' upstream tokens (UpstreamTokenStore), whose cases then run too. Default
   * true; false for a store without them.
   */
  upstreamTokens?: boolean;
  /**
   * The optional methods of OAuthStore the store has not got, e.g. `['createGrantWithClient']`: their cases are
   * registered as skipped, with the reason in their name. Default none. A case checks that the store has exactly
   * the others, so that a method the store has is never left untested.
   */
  without?: readonly OptionalCapability[];
}

const OPTIONAL_CAPABILITIES: readonly OptionalCapability[] = [
  'createGrantWithClient',
  'useAssertionId',
  'markScopeChallenge',
  'takeScopeChallenge',
  'saveDeviceAuthorization',
  'findDeviceAuthorization',
  'decideDeviceAuthorization',
  'redeemDeviceAuthorization',
  'slowDownDeviceAuthorization',
  'listClients',
  'listGrants',
  'purgeIdleClients',
  'setClientDisabled',
  'revokeClientGrants',
];

/** Registers every case of the store contract with the given runner. */
export function describeStoreContract({
  name,
  factory,
  describe,
  test: runnerTest,
  signingKeys = true,
  upstreamTokens = true,
  without = [],
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
              (store as unknown as Record<string, (...args: unknown[]) => unknown>)[call.method]!.apply(
                store,
                call.args,
              ),
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
  const test: ContractTest = Object.assign(
    (title: string, body: () => Promise<void>) => {
      runnerTest(title, () => fresh(body));
    },
    {
      each:
        <Case extends unknown[]>(cases: readonly Case[]) =>
        (title: string, body: (...args: Case) => Promise<void>) => {
          for (const values of cases)
            runnerTest(title.replace('%s', String(values[0])), () => fresh(() => body(...values)));
        },
    },
  );

  /** Registers cases as skipped, saying why in their names: with the runner's test.skip (jest, vitest, node:test, mocha). */
  const skipped = (reason: string): ContractTest => {
    const skip = (runnerTest as { skip?: StoreContractOptions['test'] }).skip ?? runnerTest;
    const register = (title: string) => skip(`${title} (skipped: ${reason})`, async () => undefined);
    return Object.assign(register, {
      each:
        <Case extends unknown[]>(cases: readonly Case[]) =>
        (title: string) => {
          for (const values of cases) register(title.replace('%s', String(values[0])));
        },
    });
  };

  const env: ContractEnv = {
    get store() {
      return store;
    },
    get clock() {
      return clock;
    },
    get harness() {
      return harness;
    },
    describe,
    test,
    testWith: (capability) =>
      without.includes(capability) ? skipped(`the store has no ${capability}`) : test,
    race,
  };

  describe(`store contract: ${name}`, () => {
    const newGrant = (overrides: Partial<GrantRecord> = {}) => newGrantOf(env, overrides);

    test('the store has the optional methods it is proved with, and no others', async () => {
      for (const capability of OPTIONAL_CAPABILITIES) {
        const has = typeof store[capability] === 'function';
        if (has && without.includes(capability))
          throw new Error(
            `the store has ${capability}(): take it out of \`without\`, so that its cases run.`,
          );
        if (!has && !without.includes(capability))
          throw new Error(
            `the store has no ${capability}(): pass without: ['${capability}'] to skip its cases.`,
          );
      }
    });

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
        expect(await outcomeOf(() => store.registerClient({ ...client, clientName: 'Impostor' }))).toBe(
          'refused',
        );
        expect((await store.findClient(client.clientId))?.clientName).toBe(client.clientName);
      });
    });

    describeClientDocumentContract(env);
    describeDeviceAuthorizationContract(env);
    describeOperatorListContract(env);

    describe('client assertion ids', () => {
      const test = env.testWith('useAssertionId');
      test('a jti is accepted once per client while it lives, then may be taken again', async () => {
        const expiresAt = clock.now() + MINUTE;
        expect(await store.useAssertionId!('client-a', 'jti-1', expiresAt)).toBe(true);
        expect(await store.useAssertionId!('client-a', 'jti-1', expiresAt)).toBe(false);
        // Another client's identical jti is its own.
        expect(await store.useAssertionId!('client-b', 'jti-1', expiresAt)).toBe(true);
        clock.advance(MINUTE);
        expect(await store.useAssertionId!('client-a', 'jti-1', clock.now() + MINUTE)).toBe(true);
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
        await store.useAssertionId!('client-a', 'old', clock.now() + MINUTE);
        await store.useAssertionId!('client-a', 'live', clock.now() + 10 * MINUTE);
        clock.advance(2 * MINUTE);
        let total = 0;
        for (let removed = -1; removed !== 0;) total += removed = await store.purgeExpired(10);
        expect(total).toBe(1);
        expect(await store.useAssertionId!('client-a', 'live', clock.now() + MINUTE)).toBe(false);
      });
    });

    describe('scope challenges', () => {
      const test = env.testWith('takeScopeChallenge');
      test('a mark is taken once while it lives, and is never part of the grant read back', async () => {
        const grant = await newGrant();
        await store.markScopeChallenge!(grant.grantId, clock.now() + MINUTE);
        expect(await store.findGrant(grant.grantId)).toEqual(grant);
        expect(await store.takeScopeChallenge!(grant.grantId)).toBe(true);
        expect(await store.takeScopeChallenge!(grant.grantId)).toBe(false);
        expect(await store.takeScopeChallenge!('no-such-grant')).toBe(false);
      });

      test('an expired mark is not taken; a later mark replaces an earlier one', async () => {
        const grant = await newGrant();
        await store.markScopeChallenge!(grant.grantId, clock.now() + MINUTE);
        clock.advance(MINUTE);
        expect(await store.takeScopeChallenge!(grant.grantId)).toBe(false);
        await store.markScopeChallenge!(grant.grantId, clock.now() + MINUTE);
        await store.markScopeChallenge!(grant.grantId, clock.now() + 2 * MINUTE);
        clock.advance(90 * SECOND);
        expect(await store.takeScopeChallenge!(grant.grantId)).toBe(true);
      });

      test('only an active grant is marked', async () => {
        const grant = await newGrant();
        await store.revokeGrant(grant.grantId);
        await store.markScopeChallenge!(grant.grantId, clock.now() + MINUTE);
        await store.markScopeChallenge!('no-such-grant', clock.now() + MINUTE);
        expect(await store.takeScopeChallenge!(grant.grantId)).toBe(false);
        expect(await store.takeScopeChallenge!('no-such-grant')).toBe(false);
      });

      test('a mark raced over many connections is taken exactly once', async () => {
        const grant = await newGrant();
        await store.markScopeChallenge!(grant.grantId, clock.now() + MINUTE);
        const calls = Array.from({ length: 16 }, () => ({
          method: 'takeScopeChallenge' as const,
          args: [grant.grantId],
        }));
        const outcomes = await race(calls);
        expect(outcomes.filter((outcome) => outcome === true)).toHaveLength(1);
      });
    });

    describe('grants', () => {
      test('a new grant is found and active', async () => {
        const grant = await newGrant();
        expect(await store.findGrant(grant.grantId)).toEqual(grant);
        expect(await store.isGrantActive(grant.grantId)).toBe(true);
        expect(await store.isGrantActive('no-such-grant')).toBe(false);
      });

      test('a grant id is unique, and a grant names a stored client', async () => {
        const grant = await newGrant();
        expect(await outcomeOf(() => store.createGrant({ ...grant, userId: 'impostor' }))).toBe('refused');
        const orphan = grantRecord(clock.now(), { clientId: 'no-such-client' });
        expect(await outcomeOf(() => store.createGrant(orphan))).toBe('refused');
        expect(await store.findGrant(grant.grantId)).toEqual(grant);
        expect(await store.findGrant(orphan.grantId)).toBeUndefined();
      });

      test('revocation is idempotent, ends the grant, and keeps the first time, read from the store’s clock', async () => {
        const grant = await newGrant();
        const first = clock.now();
        expect(await store.revokeGrant(grant.grantId)).toBe(true);
        clock.advance(SECOND);
        expect(await store.revokeGrant(grant.grantId)).toBe(false);
        expect(await store.revokeGrant('no-such-grant')).toBe(false);
        expect(await store.isGrantActive(grant.grantId)).toBe(false);
        // revokeGrant is given no time: the store's own clock (the fake one here, not Date.now()) says when.
        expect((await store.findGrant(grant.grantId))?.revokedAt).toBe(first);
      });

      test('a revoked grant is found, revoked, until it expires; revoking an expired grant does nothing', async () => {
        const grant = await newGrant({ expiresAt: clock.now() + DAY });
        const revokedAt = clock.now();
        await store.revokeGrant(grant.grantId);
        clock.advance(DAY - 1);
        expect(await store.findGrant(grant.grantId)).toEqual({ ...grant, revokedAt });
        clock.advance(1);
        expect(await store.findGrant(grant.grantId)).toBeUndefined();
        const expired = await newGrant({ expiresAt: clock.now() + MINUTE });
        clock.advance(MINUTE);
        expect(await store.revokeGrant(expired.grantId)).toBe(false);
      });

      test('records cross the seam as copies: changing one given or read changes nothing stored', async () => {
        const grant = await newGrant();
        const client = (await store.findClient(grant.clientId))!;
        const [savedGrant, savedClient] = [structuredClone(grant), structuredClone(client)];
        grant.scopes.push('admin');
        const read = (await store.findGrant(grant.grantId))!;
        read.scopes.push('admin');
        read.revokedAt = clock.now();
        client.redirectUris.push('https://attacker.example/callback');
        expect(await store.findGrant(grant.grantId)).toEqual(savedGrant);
        expect(await store.findClient(grant.clientId)).toEqual(savedClient);
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
        const key = token.hash;
        clock.advance(SECOND);
        const outcome = await store.consumeAuthorizationCode(code.codeHash, { key });
        expect(outcome).toEqual({ status: 'consumed', code, grant: { ...grant, lastUsedAt: clock.now() } });
        expect((await store.findRefreshToken(key))?.token).toEqual({
          key,
          grantId: grant.grantId,
          clientId: grant.clientId,
          parentKey: null,
          issuedAt: clock.now(),
          expiresAt: grant.expiresAt,
        });
        // The grant reports when its first token was issued as its last use.
        expect((await store.findGrant(grant.grantId))?.lastUsedAt).toBe(clock.now());
      });

      test('a code whose grant was revoked is consumed without a grant, and no refresh token is saved', async () => {
        const grant = await newGrant();
        const code = codeRecord(clock.now(), grant);
        await store.saveAuthorizationCode(code);
        await store.revokeGrant(grant.grantId);
        const key = newRefreshToken(grant.grantId).hash;
        expect(await store.consumeAuthorizationCode(code.codeHash, { key })).toEqual({
          status: 'consumed',
          code,
          grant: undefined,
        });
        expect(await store.findRefreshToken(key)).toBeUndefined();
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

    describeRefreshTokenContract(env);
    describeSigningKeyContract(
      env,
      signingKeys ? test : skipped('signingKeys: false, the store keeps no key set'),
    );
    describeUpstreamTokenContract(
      env,
      upstreamTokens ? test : skipped('upstreamTokens: false, the store keeps no upstream tokens'),
    );

    describe('purge', () => {
      test('expired rows go in bounded batches; live rows stay', async () => {
        const short = Array.from({ length: 3 }, () => ({ expiresAt: clock.now() + MINUTE }));
        const expiring = await Promise.all(short.map((overrides) => newGrant(overrides)));
        for (const grant of expiring) {
          // A first refresh token and its successor: both go with their grant, and so does the code.
          const first = await firstToken(env, grant, { code: { expiresAt: grant.expiresAt } });
          await rotate(env, first, grant);
        }
        const live = await grantWithToken(env);
        const next = await rotate(env, live.token, live.grant);
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
        expect(await store.findRefreshToken(next.successor!.hash)).toBeDefined();
        if (rows) expect(await rows()).toBe(2);
      });

      test('each call deletes up to batchSize expired rows of each kind, so no kind waits behind another', async () => {
        const live = await newGrant();
        const short = { expiresAt: clock.now() + MINUTE };
        for (let i = 0; i < 3; i += 1) {
          await store.saveAuthorizationCode(codeRecord(clock.now(), live, short));
          await newGrant(short);
          await store.useAssertionId?.('client-a', `jti-${i}`, short.expiresAt);
        }
        clock.advance(MINUTE);
        const kinds = store.useAssertionId ? 3 : 2;
        const batches: number[] = [];
        for (let removed = -1; removed !== 0;) batches.push((removed = await store.purgeExpired(2)));
        // Codes, grants and assertion ids: two of each kind, then the last of each, then nothing left.
        expect(batches).toEqual([2 * kinds, kinds, 0]);
        expect(await store.isGrantActive(live.grantId)).toBe(true);
      });
    });

    test('no code, refresh token or client secret is persisted in plain text', async () => {
      const secret = newSecret();
      const grant = await newGrant();
      await store.registerClient(clientRecord({ clientSecretHash: secret.hash }));
      const code = newSecret();
      const token = await firstToken(env, grant, { code: { codeHash: code.hash } });
      const { successor } = await rotate(env, token, grant);
      if (!harness.persistedBytes) return; // the store cannot show its bytes: nothing to scan
      const bytes = (await harness.persistedBytes()).toString('latin1');
      for (const value of [secret, code, token, successor!]) {
        expect(bytes).toContain(value.hash); // the scan reads what the store wrote ...
        expect(bytes).not.toContain(value.plain); // ... and the secret itself is not there
      }
    });
  });
}
