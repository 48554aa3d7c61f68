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
