// What the store contract's sections share: the store and clock of the running case, and the helpers that set
// records up through the store's own methods.
import { rotateRefreshToken } from '../grants/rotation';
import { parseRefreshTokenReuse, type RefreshTokenReuseOptions } from '../grants/reuse-options';
import type { AuthorizationCodeRecord, GrantRecord, OAuthStore, RefreshTokenKey } from '../store/types';
import { SECOND, type FakeClock } from './clock';
import { clientRecord, codeRecord, grantRecord, newRefreshToken } from './fixtures';
import type { StoreCall, StoreHarness } from './harness';

export const RETRY_WINDOW = 60 * SECOND;

/**
 * The reuse policy of the contract's cases unless one says otherwise: a used token comes back with its successor for
 * RETRY_WINDOW, and never after (the library's default is longer and more lenient; the rule is the same).
 */
const CONTRACT_REUSE: RefreshTokenReuseOptions = {
  window: RETRY_WINDOW / SECOND,
  untilSuccessorUsed: false,
};

const CONTRACT_SECRET = Buffer.alloc(32, 1);
/** A refresh token as a test holds it: the token and its store key. */
export interface HeldToken {
  plain: string;
  hash: RefreshTokenKey;
}

/** A registered case: a title and a body run on a fresh store; `each` as in jest, with %s the case's first value. */
export interface ContractTest {
  (title: string, body: () => Promise<void>): void;
  each<Case extends unknown[]>(
    cases: readonly Case[],
  ): (title: string, body: (...args: Case) => Promise<void>) => void;
}

/** The optional methods of OAuthStore: a store without one turns a feature off, and skips that feature's cases. */
export type OptionalCapability =
  | 'createGrantWithClient'
  | 'useAssertionId'
  | 'markScopeChallenge'
  | 'takeScopeChallenge'
  | 'saveDeviceAuthorization'
  | 'findDeviceAuthorization'
  | 'decideDeviceAuthorization'
  | 'redeemDeviceAuthorization'
  | 'slowDownDeviceAuthorization'
  | 'listClients'
  | 'listGrants'
  | 'purgeIdleClients'
  | 'setClientDisabled'
  | 'revokeClientGrants';

/** The running case's store, clock and harness (read them inside a test body), and the runner's functions. */
export interface ContractEnv {
  readonly store: OAuthStore;
  readonly clock: FakeClock;
  readonly harness: StoreHarness;
  describe: (title: string, body: () => void) => unknown;
  test: ContractTest;
  /** `test` for the cases of an optional capability: they register as skipped when the store has not got it. */
  testWith(capability: OptionalCapability): ContractTest;
  /** The calls at once, over several connections when the harness can. */
  race(calls: StoreCall[]): Promise<unknown[]>;
}

/**
 * Whether a write was stored or refused (thrown or rejected). Errors from a native driver may come from another
 * realm, so the rejection is caught, not matched.
 */
export const outcomeOf = (write: () => unknown): Promise<'stored' | 'refused'> =>
  Promise.resolve()
    .then(write)
    .then(
      () => 'stored',
      () => 'refused',
    );

/** A registered client and a new grant of it. */
export async function newGrant(env: ContractEnv, overrides: Partial<GrantRecord> = {}): Promise<GrantRecord> {
  const client = clientRecord();
  await env.store.registerClient(client);
  const grant = grantRecord(env.clock.now(), { clientId: client.clientId, ...overrides });
  await env.store.createGrant(grant);
  return grant;
}

/**
 * Gives a grant a first refresh token the way the library does: a code of the grant (`code` overrides its fields)
 * consumed with it.
 */
export async function firstToken(
  env: ContractEnv,
  grant: GrantRecord,
  { code: overrides = {} }: { code?: Partial<AuthorizationCodeRecord> } = {},
): Promise<HeldToken> {
  const token = newRefreshToken(grant.grantId);
  const code = codeRecord(env.clock.now(), grant, overrides);
  await env.store.saveAuthorizationCode(code);
  const outcome = await env.store.consumeAuthorizationCode(code.codeHash, { key: token.hash });
  if (outcome.status !== 'consumed' || !outcome.grant) {
    throw new Error(`store contract: a fresh code of an active grant was not consumed (${outcome.status}).`);
  }
  return token;
}

/** A new grant with its first refresh token. */
export async function grantWithToken(env: ContractEnv) {
  const grant = await newGrant(env);
  return { grant, token: await firstToken(env, grant) };
}

/** The library's rotation rule on the store under test, at the fake clock's time. */
export async function rotate(
  env: ContractEnv,
  presented: HeldToken,
  grant: Pick<GrantRecord, 'clientId'>,
  reuse: RefreshTokenReuseOptions = CONTRACT_REUSE,
) {
  const policy = parseRefreshTokenReuse(reuse, 366 * 86_400, CONTRACT_SECRET, (message) => {
    throw new TypeError(message);
  });
  const outcome = await rotateRefreshToken(env.store, {
    presentedToken: presented.plain,
    clientId: grant.clientId,
    policy,
    now: env.clock.now(),
  });
  const successor: HeldToken | undefined =
    outcome.status === 'rotated'
      ? { plain: outcome.successor.token, hash: outcome.successor.key }
      : undefined;
  return { outcome, successor };
}
