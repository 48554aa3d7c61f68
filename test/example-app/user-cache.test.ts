// The token's user, cached for at most a second: a deleted user's tokens stop working within that second, without
// a query per tool call. Fake clock; `find` counts its calls.
import { createUserCache } from '../../example-app/mcp/user-cache';
import type { AppUser } from '../../example-app/users';
import { createFakeClock, SECOND } from '../helpers/clock';

function setup(options: { maxEntries?: number } = {}) {
  const clock = createFakeClock();
  const users = new Map<string, AppUser>([['1', { id: '1', email: 'a@example.com', companyId: 7 }]]);
  const calls: string[] = [];
  const cache = createUserCache(
    async (id) => {
      calls.push(id);
      return users.get(id) ?? null;
    },
    { ttlMs: SECOND, now: clock.now, ...options },
  );
  return { clock, users, calls, cache };
}

test('a user found is served from memory for under a second, with no lookup', async () => {
  const { clock, calls, cache } = setup();
  expect(await cache.get('1')).toMatchObject({ id: '1', companyId: 7 });
  clock.advance(SECOND - 1);
  expect(cache.get('1')).toMatchObject({ id: '1' }); // no promise: answered from memory
  expect(calls).toEqual(['1']);
});

test.each([
  ['at the second', SECOND],
  ['after it', 5 * SECOND],
])('a deleted user is refused %s', async (_name, elapsed) => {
  const { clock, users, cache } = setup();
  await cache.get('1');
  users.delete('1');
  clock.advance(elapsed);
  expect(await cache.get('1')).toBeNull();
});

test('absence is never remembered: a user created after a miss is found at once', async () => {
  const { users, calls, cache } = setup();
  expect(await cache.get('2')).toBeNull();
  users.set('2', { id: '2', email: 'b@example.com', companyId: 8 });
  expect(await cache.get('2')).toMatchObject({ id: '2' });
  expect(calls).toEqual(['2', '2']);
});

test('concurrent first calls share one lookup', async () => {
  const { calls, cache } = setup();
  await Promise.all([cache.get('1'), cache.get('1'), cache.get('1')]);
  expect(calls).toEqual(['1']);
});

test('it holds at most maxEntries users, dropping the oldest', async () => {
  const { users, calls, cache } = setup({ maxEntries: 2 });
  for (const id of ['2', '3']) users.set(id, { id, email: `${id}@example.com`, companyId: 1 });
  for (const id of ['1', '2', '3']) await cache.get(id);
  await cache.get('3');
  await cache.get('1'); // dropped when 3 came in: looked up again
  expect(calls).toEqual(['1', '2', '3', '1']);
});
