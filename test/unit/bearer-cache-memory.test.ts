// The bearer check's memory, its defaults and edges: what it remembers, how long, and that a revoked answer is final
// even when the status of active grants is never remembered (grantStatusMs 0).
import { createBearerCache } from '../../lib/middleware/bearer-cache';
import type { AccessTokenClaims } from '../../lib/crypto/signer';
import type { OAuthStore } from '../../lib/store/types';
import { createFakeClock, SECOND } from '../helpers/clock';

const clock = createFakeClock();
const claims = (scope: string): AccessTokenClaims => ({
  iss: 'i',
  sub: 'u',
  aud: 'a',
  client_id: 'c',
  scope,
  iat: 0,
  exp: clock.now() / 1000 + 3600,
  jti: 'j',
  grant_id: 'g',
});

/** A store whose grants have the given status; every question is recorded. */
function countingStore(active: Record<string, boolean>) {
  const asked: string[] = [];
  const store = {
    isGrantActive: (id: string) => (asked.push(id), active[id] ?? false),
  } as unknown as OAuthStore;
  return { store, asked };
}

test.each([
  ['no scope at all', '', []],
  ['one scope', 'fakture:read', ['fakture:read']],
  ['two scopes', 'fakture:read clients:read', ['fakture:read', 'clients:read']],
])('a token with %s is remembered with exactly its scopes (no phantom scope)', (_name, scope, scopes) => {
  const cache = createBearerCache(countingStore({}).store, {}, clock.now);
  expect(cache.rememberToken('t', 'aud', claims(scope)).scopes).toEqual(scopes);
  expect(cache.verifiedToken('t', 'aud')?.scopes).toEqual(scopes);
});

test('with the default bound, tokens verified one after another are all remembered', () => {
  const cache = createBearerCache(countingStore({}).store, {}, clock.now);
  for (const token of ['t1', 't2', 't3']) cache.rememberToken(token, 'aud', claims(''));
  for (const token of ['t1', 't2', 't3']) expect(cache.verifiedToken(token, 'aud')).toBeDefined();
});

test('a token remembered again does not push another out of a full cache', () => {
  const cache = createBearerCache(countingStore({}).store, { accessTokens: 2 }, clock.now);
  cache.rememberToken('t1', 'aud', claims(''));
  cache.rememberToken('t2', 'aud', claims(''));
  cache.rememberToken('t2', 'aud', claims(''));
  expect(cache.verifiedToken('t1', 'aud')).toBeDefined();
  expect(cache.verifiedToken('t2', 'aud')).toBeDefined();
});

test('by default an active grant is remembered for one second: the store is asked once, then again after it', async () => {
  const { store, asked } = countingStore({ g: true });
  const cache = createBearerCache(store, {}, clock.now);
  expect(await cache.isGrantActive('g')).toBe(true);
  clock.advance(SECOND - 1);
  expect(cache.isGrantActive('g')).toBe(true);
  clock.advance(1);
  expect(await cache.isGrantActive('g')).toBe(true);
  expect(asked).toEqual(['g', 'g']);
});

test('with grantStatusMs 0 an active grant is asked about every time, but a revoked one is final at once', async () => {
  const { store, asked } = countingStore({ live: true, dead: false });
  const cache = createBearerCache(store, { grantStatusMs: 0 }, clock.now);
  expect(await cache.isGrantActive('live')).toBe(true);
  expect(await cache.isGrantActive('live')).toBe(true);
  expect(await cache.isGrantActive('dead')).toBe(false);
  expect(cache.isGrantActive('dead')).toBe(false); // a plain boolean: the store is not asked again
  expect(asked).toEqual(['live', 'live', 'dead']);
});
