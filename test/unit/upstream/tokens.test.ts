// The users' kept upstream tokens (lib/upstream/tokens.ts), on a fake clock and a scripted provider: sealed at rest,
// one upstream refresh for every concurrent caller of every instance sharing the store, what each failure becomes,
// and revocation upstream when the grant ends.
import { createMemoryStore, type MemoryStore } from '../../../lib/store/memory';
import { createFakeClock, HOUR, SECOND, type FakeClock } from '../../../lib/testing/clock';
import type { UpstreamConnection, UpstreamTokenSet } from '../../../lib/upstream/client';
import { UpstreamError } from '../../../lib/upstream/client';
import { parseUpstreamOptions, type UpstreamProvider } from '../../../lib/upstream/options';
import { createUpstreamTokens, type UpstreamTokens } from '../../../lib/upstream/tokens';

const fail = (message: string): never => {
  throw new TypeError(message);
};
const upstream = parseUpstreamOptions(
  {
    providers: [{ id: 'idp', name: 'IdP', issuer: 'https://idp.example', clientId: 'c', keepTokens: true }],
    findUser: () => null,
  },
  fail,
)!;
const provider = upstream.providers.get('idp')!;
const SECRET = Buffer.alloc(32, 3);

interface Scripted extends UpstreamConnection {
  refreshes: string[];
  revoked: string[];
  /** What the next refresh does: by default a new token set. */
  next: (refreshToken: string) => Promise<UpstreamTokenSet>;
  /** Resolves when the default refresh may answer: at once unless a test holds it. */
  answerWhen: () => Promise<void>;
}

function scriptedProvider(clock: FakeClock): Scripted {
  let counter = 0;
  const connection: Scripted = {
    refreshes: [],
    revoked: [],
    answerWhen: async () => undefined,
    next: async (refreshToken) => {
      counter += 1;
      // Answered once the test lets it: callers that meet the lease meanwhile really overlap this refresh.
      await connection.answerWhen();
      return {
        accessToken: `access-${counter}`,
        tokenType: 'Bearer',
        refreshToken,
        expiresAt: clock.now() + HOUR,
      };
    },
    authorize: () => Promise.reject(new Error('not in these tests')),
    exchange: () => Promise.reject(new Error('not in these tests')),
    refresh: (refreshToken) => {
      connection.refreshes.push(refreshToken);
      return connection.next(refreshToken);
    },
    revoke: async (token) => {
      connection.revoked.push(token);
      return true;
    },
  };
  return connection;
}

function setUp() {
  const clock = createFakeClock();
  const store = createMemoryStore({ now: clock.now });
  const connection = scriptedProvider(clock);
  const errors: unknown[] = [];
  /** How many times a caller waited for another's refresh (the library's poll, made a turn of the event loop). */
  const waits = { count: 0 };
  const instance = (secret = SECRET) =>
    createUpstreamTokens({
      store,
      secret,
      upstream,
      connect: async (_provider: UpstreamProvider) => connection,
      now: clock.now,
      onError: (error) => errors.push(error),
      sleep: () => {
        waits.count += 1;
        return new Promise<void>((resolve) => setImmediate(resolve));
      },
    });
  return { clock, store, connection, errors, waits, instance };
}

/** Turns of the event loop until `condition` holds (something asynchronous said so), never the wall clock. */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; !condition(); turn++) {
    if (turn > 10_000) throw new Error('until: the condition never held');
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

const issued = (clock: FakeClock, extra: Partial<UpstreamTokenSet> = {}): UpstreamTokenSet => ({
  accessToken: 'access-0',
  tokenType: 'Bearer',
  refreshToken: 'refresh-0',
  expiresAt: clock.now() + HOUR,
  ...extra,
});

async function keptFor(store: MemoryStore, tokens: UpstreamTokens, set: UpstreamTokenSet) {
  const held = await tokens.holdForConsent(provider, 'user-1', set);
  expect(await tokens.attach(held, 'grant-1', Date.now() + 30 * 24 * HOUR)).toBe(true);
  // Attached once only.
  expect(await tokens.attach(held, 'grant-2', Date.now() + HOUR)).toBe(false);
  return store.findUpstreamTokens('grant-1');
}

test('sealed at rest: the row holds neither token, and opens only with the secret, for its provider and user', async () => {
  const { clock, store, errors, instance } = setUp();
  const row = (await keptFor(store, instance(), issued(clock)))!;
  expect(row.sealed).not.toContain('access-0');
  expect(row.sealed).not.toContain('refresh-0');
  expect(await instance().accessToken('grant-1')).toMatchObject({ accessToken: 'access-0', provider: 'idp' });
  // Another secret cannot open it: the user is told to sign in again, the operator hears why.
  await expect(instance(Buffer.alloc(32, 4)).accessToken('grant-1')).rejects.toMatchObject({
    code: 'invalid_token',
  });
  expect(String(errors[0])).toContain("the router's secret differs");
});

test('expired: two instances, ten callers, one upstream refresh; everybody gets the new token', async () => {
  const { clock, store, connection, waits, instance } = setUp();
  const [a, b] = [instance(), instance()];
  await keptFor(store, a, issued(clock));
  clock.advance(HOUR - 30 * SECOND); // within a minute of its expiry: refreshed first
  // The refresh answers only once the other instance has met the lease and waited: the callers overlap for sure.
  connection.answerWhen = () => until(() => waits.count > 0);
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).accessToken('grant-1')),
  );
  expect(connection.refreshes).toEqual(['refresh-0']);
  expect(new Set(answers.map((answer) => answer.accessToken))).toEqual(new Set(['access-1']));
  expect((await store.findUpstreamTokens('grant-1'))!.version).toBe(1);
  // Fresh again: no further refresh.
  await a.accessToken('grant-1');
  expect(connection.refreshes).toHaveLength(1);
});

/** An OAuth error answer as openid-client reports it (ResponseBodyError: `error`, `status`). */
const answered = (error: string, status: number) =>
  Promise.reject(Object.assign(new Error(`server responded with an error: ${error}`), { error, status }));

test.each([
  [
    'the provider refuses (invalid_grant): invalid_token, the tokens deleted',
    () => answered('invalid_grant', 400),
    'invalid_token',
    false,
  ],
  [
    'the provider cannot be reached: temporarily_unavailable, the tokens kept',
    () => Promise.reject(new UpstreamError('unavailable', 'fetch failed')),
    'temporarily_unavailable',
    true,
  ],
  ['a 429 (slow down): kept', () => answered('slow_down', 429), 'temporarily_unavailable', true],
  [
    'a garbled answer (HTML with 200): kept',
    () => Promise.reject(new UpstreamError('invalid', 'not JSON')),
    'temporarily_unavailable',
    true,
  ],
] as const)('%s', async (_name, refresh, code, kept) => {
  const { clock, store, connection, instance } = setUp();
  const tokens = instance();
  await keptFor(store, tokens, issued(clock));
  clock.advance(2 * HOUR);
  const healthy = connection.next;
  connection.next = refresh;
  await expect(tokens.accessToken('grant-1')).rejects.toMatchObject({ code });
  expect(Boolean(await store.findUpstreamTokens('grant-1'))).toBe(kept);
  if (!kept) return;
  // The failed refresh gave its lease back: the next caller refreshes at once, not after the lease.
  connection.next = healthy;
  expect((await tokens.accessToken('grant-1')).accessToken).toBe('access-1');
  expect(connection.refreshes).toHaveLength(2);
});

test.each([
  ['no expiry said (GitHub): used as it is, never refreshed', { expiresAt: undefined }, 'access-0'],
  ['expired without a refresh token: sign in again', { refreshToken: undefined }, 'invalid_token'],
])('%s', async (_name, extra, expected) => {
  const { clock, store, connection, instance } = setUp();
  const tokens = instance();
  await keptFor(store, tokens, issued(clock, extra));
  clock.advance(2 * HOUR);
  if (expected === 'invalid_token')
    await expect(tokens.accessToken('grant-1')).rejects.toMatchObject({ code: 'invalid_token' });
  else expect((await tokens.accessToken('grant-1')).accessToken).toBe(expected);
  expect(connection.refreshes).toEqual([]);
});

test('a caller waiting on a lease whose holder died takes over once the lease has passed', async () => {
  const { clock, store, connection, waits, instance } = setUp();
  const tokens = instance();
  await keptFor(store, tokens, issued(clock));
  clock.advance(2 * HOUR);
  // Another instance took the lease and crashed before replacing the tokens.
  expect(await store.leaseUpstreamTokens('grant-1', 0, clock.now() + 30 * SECOND)).toBe(true);
  const waiting = tokens.accessToken('grant-1');
  await until(() => waits.count > 0);
  expect(connection.refreshes).toEqual([]);
  clock.advance(31 * SECOND);
  expect((await waiting).accessToken).toBe('access-1');
  expect(connection.refreshes).toEqual(['refresh-0']);
});

test('forget: deletes the tokens and revokes both upstream; a grant without tokens is a no-op', async () => {
  const { clock, store, connection, instance } = setUp();
  const tokens = instance();
  await keptFor(store, tokens, issued(clock));
  await tokens.forget('grant-1');
  expect(connection.revoked).toEqual(['refresh-0', 'access-0']);
  expect(await store.findUpstreamTokens('grant-1')).toBeUndefined();
  await tokens.forget('grant-1');
  expect(connection.revoked).toHaveLength(2);
  await expect(tokens.accessToken('grant-1')).rejects.toMatchObject({ code: 'invalid_token' });
});

test('held tokens not attached within 30 minutes are gone', async () => {
  const { clock, instance } = setUp();
  const tokens = instance();
  const held = await tokens.holdForConsent(provider, 'user-1', issued(clock));
  clock.advance(30 * 60 * SECOND);
  expect(await tokens.attach(held, 'grant-1', clock.now() + HOUR)).toBe(false);
});

test('the answer: exactly what a tool needs, and the refresh a minute before expiry, not earlier', async () => {
  const { clock, store, connection, instance } = setUp();
  const tokens = instance();
  await keptFor(store, tokens, issued(clock, { scope: 'read' }));
  expect(await tokens.accessToken('grant-1')).toEqual({
    provider: 'idp',
    accessToken: 'access-0',
    tokenType: 'Bearer',
    expiresAt: clock.now() + HOUR,
    scope: 'read',
  });
  clock.advance(HOUR - 60 * SECOND - 1);
  await tokens.accessToken('grant-1');
  expect(connection.refreshes).toEqual([]);
  clock.advance(1);
  expect((await tokens.accessToken('grant-1')).accessToken).toBe('access-1');
});

test.each([
  [10, 30],
  [60, 70],
])('a provider with timeoutSeconds %i: the refresh lease lasts %i s', async (timeoutSeconds, seconds) => {
  const { clock, store } = setUp();
  const options = parseUpstreamOptions(
    {
      providers: [
        {
          id: 'idp',
          name: 'IdP',
          issuer: 'https://idp.example',
          clientId: 'c',
          keepTokens: true,
          timeoutSeconds,
        },
      ],
      findUser: () => null,
    },
    fail,
  )!;
  let leased = 0;
  const tokens = createUpstreamTokens({
    store,
    secret: SECRET,
    upstream: options,
    connect: async () => ({
      ...scriptedProvider(clock),
      refresh: async () => {
        leased = (await store.findUpstreamTokens('grant-1'))!.leaseUntil - clock.now();
        return issued(clock);
      },
    }),
    now: clock.now,
    onError: () => undefined,
  });
  await keptFor(store, tokens, issued(clock));
  clock.advance(2 * HOUR);
  await tokens.accessToken('grant-1');
  expect(leased).toBe(seconds * 1000);
});

test('tokens of a provider no longer configured: sign in again', async () => {
  const { clock, store, instance } = setUp();
  await keptFor(store, instance(), issued(clock));
  const other = createUpstreamTokens({
    store,
    secret: SECRET,
    upstream: parseUpstreamOptions(
      {
        providers: [
          {
            id: 'another',
            name: 'Another',
            issuer: 'https://another.example',
            clientId: 'c',
            keepTokens: true,
          },
        ],
        findUser: () => null,
      },
      fail,
    )!,
    connect: async () => scriptedProvider(clock),
    now: clock.now,
    onError: () => undefined,
  });
  clock.advance(2 * HOUR);
  await expect(other.accessToken('grant-1')).rejects.toMatchObject({ code: 'invalid_token' });
});

test('a caller never waits past two leases: a lease taken again and again by others ends in temporarily_unavailable', async () => {
  const { clock, store, connection } = setUp();
  let polls = 0;
  const tokens = createUpstreamTokens({
    store,
    secret: SECRET,
    upstream,
    connect: async () => connection,
    now: clock.now,
    onError: () => undefined,
    // Each time the caller waits, the lease it waits on passes and another instance takes it again.
    sleep: async () => {
      polls += 1;
      clock.advance(31 * SECOND);
      expect(await store.leaseUpstreamTokens('grant-1', 0, clock.now() + 30 * SECOND)).toBe(true);
    },
  });
  await keptFor(store, tokens, issued(clock));
  clock.advance(2 * HOUR);
  expect(await store.leaseUpstreamTokens('grant-1', 0, clock.now() + 30 * SECOND)).toBe(true);
  await expect(tokens.accessToken('grant-1')).rejects.toMatchObject({ code: 'temporarily_unavailable' });
  expect(polls).toBe(2);
  expect(connection.refreshes).toEqual([]);
});
