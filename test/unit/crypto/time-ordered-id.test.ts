// Grant ids: UUIDv7, ordered by creation time, random below the millisecond.
import { timeOrderedId } from '../../../lib/crypto/time-ordered-id';

test('is a version-7 UUID of the RFC 9562 variant, carrying the given millisecond', () => {
  const at = Date.UTC(2026, 10, 22, 8, 30);
  const id = timeOrderedId(at);
  expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
});

test('sorts by time, and differs within one millisecond', () => {
  const ids = [1, 2, 1_000, 1_700_000_000_000, 2 ** 47].map((ms) => timeOrderedId(ms));
  expect([...ids].sort()).toEqual(ids);
  const same = new Set(Array.from({ length: 1_000 }, () => timeOrderedId(5)));
  expect(same.size).toBe(1_000);
});
