// The bearer check's memory, alone: bounded, expiring, and final about revocations.
import { createBearerCache } from '../../lib/middleware/bearer-cache';
import type { AccessTokenClaims } from '../../lib/crypto/signer';
import type { OAuthStore } from '../../lib/store/types';
import { createFakeClock } from '../helpers/clock';

const claims = (exp: number): AccessTokenClaims => ({
  iss: 'i',
  sub: 'u',
  aud: 'a',
  client_id: 'c',
  scope: '',
  iat: 0,
  exp,
  jti: 'j',
  grant_id: 'g',
});

function fakeStore(active: Record<string, boolean>) {
  const asked: string[] = [];
  const store = {
    isGrantActive: (id: string) => (asked.push(id), active[id] ?? false),
  } as unknown as OAuthStore;
  return { store, asked };
}

test('remembers at most accessTokens tokens, forgetting the oldest', () => {
  const clock = createFakeClock();
  const cache = createBearerCache(fakeStore({}).store, { accessTokens: 2 }, clock.now);
  const exp = clock.now() / 1000 + 60;
  for (const token of ['t1', 't2', 't3']) cache.rememberToken(token, 'aud', claims(exp));
  expect(cache.verifiedToken('t1', 'aud')).toBeUndefined();
  expect(cache.verifiedToken('t3', 'aud')).toBeDefined();
  expect(cache.verifiedToken('t3', 'other audience')).toBeUndefined();
});

test('never returns a token at or past its expiry', () => {
  const clock = createFakeClock();
  const cache = createBearerCache(fakeStore({}).store, {}, clock.now);
  cache.rememberToken('t', 'aud', claims(clock.now() / 1000 + 10));
  clock.advance(9_999);
  expect(cache.verifiedToken('t', 'aud')).toBeDefined();
  clock.advance(1);
  expect(cache.verifiedToken('t', 'aud')).toBeUndefined();
});

test('with accessTokens 0 nothing is remembered', () => {
  const clock = createFakeClock();
  const cache = createBearerCache(fakeStore({}).store, { accessTokens: 0 }, clock.now);
  cache.rememberToken('t', 'aud', claims(clock.now() / 1000 + 60));
  expect(cache.verifiedToken('t', 'aud')).toBeUndefined();
});

test('an active grant is asked about once per grantStatusMs; a revoked one never again', async () => {
  const clock = createFakeClock();
  const { store, asked } = fakeStore({ live: true, dead: false });
  const cache = createBearerCache(store, { grantStatusMs: 1000 }, clock.now);
  expect(await cache.isGrantActive('live')).toBe(true);
  expect(cache.isGrantActive('live')).toBe(true); // from memory: a plain boolean
  clock.advance(1000);
  expect(await cache.isGrantActive('live')).toBe(true);
  expect(await cache.isGrantActive('dead')).toBe(false);
  expect(cache.isGrantActive('dead')).toBe(false);
  expect(asked).toEqual(['live', 'live', 'dead']);
  cache.forgetGrant('live');
  expect(cache.isGrantActive('live')).toBe(false);
});

test('a revocation while a status read is in flight is final: the read cannot bring the grant back', async () => {
  const clock = createFakeClock();
  let answer!: (active: boolean) => void;
  const asked: string[] = [];
  const store = {
    isGrantActive: (id: string) => {
      asked.push(id);
      return new Promise<boolean>((resolve) => (answer = resolve));
    },
  } as unknown as OAuthStore;
  const cache = createBearerCache(store, { grantStatusMs: 1000 }, clock.now);
  const inFlight = cache.isGrantActive('g'); // read from the store: still active there
  cache.forgetGrant('g'); // revoked through this process meanwhile
  answer(true); // the stale "active" arrives after the revocation
  expect(await inFlight).toBe(false);
  expect(cache.isGrantActive('g')).toBe(false); // and stays revoked, without asking the store again
  expect(asked).toEqual(['g']);
});

test('an "active" read that began before another grant’s revocation is used once, not remembered', async () => {
  const clock = createFakeClock();
  let answer!: (active: boolean) => void;
  let reads = 0;
  const store = {
    isGrantActive: () => (reads++, new Promise<boolean>((resolve) => (answer = resolve))),
  } as unknown as OAuthStore;
  const cache = createBearerCache(store, { grantStatusMs: 1000 }, clock.now);
  const inFlight = cache.isGrantActive('g');
  cache.forgetGrant('other');
  answer(true);
  expect(await inFlight).toBe(true);
  const next = cache.isGrantActive('g'); // asked again rather than trusted from memory
  expect(next).toBeInstanceOf(Promise);
  answer(true);
  expect(await next).toBe(true);
  expect(reads).toBe(2);
});
