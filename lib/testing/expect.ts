// The few matchers the store contract suite uses, on node:assert, so that the suite runs under any test runner
// (jest, node:test, mocha, vitest) without depending on one.
import assert from 'node:assert/strict';

/** A copy without undefined properties: a store may leave an optional field out or set it to undefined. */
function normalize(value: unknown): unknown {
  // Rebuilt in this realm: a driver may hand back arrays and objects made in another (a test runner's vm).
  if (Array.isArray(value)) return Array.from(value, normalize);
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) if (item !== undefined) copy[key] = normalize(item);
    return copy;
  }
  return value;
}

/** Whether `actual` has every field of `expected` (recursively; arrays compared whole). */
function matches(actual: unknown, expected: unknown): boolean {
  if (expected && typeof expected === 'object' && !Array.isArray(expected)) {
    if (!actual || typeof actual !== 'object') return false;
    return Object.entries(expected).every(([key, item]) =>
      matches((actual as Record<string, unknown>)[key], item),
    );
  }
  try {
    assert.deepStrictEqual(normalize(actual), normalize(expected));
    return true;
  } catch {
    return false;
  }
}

export function expect(actual: unknown) {
  return {
    toBe: (expected: unknown) => assert.strictEqual(actual, expected),
    toEqual: (expected: unknown) => assert.deepStrictEqual(normalize(actual), normalize(expected)),
    toMatchObject: (expected: object) =>
      assert.ok(
        matches(actual, expected),
        `expected ${JSON.stringify(actual)} to match ${JSON.stringify(expected)}`,
      ),
    toBeUndefined: () => assert.strictEqual(actual, undefined),
    toBeDefined: () => assert.notStrictEqual(actual, undefined),
    toContain: (item: unknown) =>
      assert.ok(
        (actual as string | unknown[]).includes(item as never),
        `expected it to contain ${String(item)}`,
      ),
    toHaveLength: (length: number) => assert.strictEqual((actual as { length: number }).length, length),
    toBeGreaterThanOrEqual: (bound: number) => assert.ok((actual as number) >= bound, `${actual} < ${bound}`),
    toBeLessThanOrEqual: (bound: number) => assert.ok((actual as number) <= bound, `${actual} > ${bound}`),
    not: {
      toBe: (expected: unknown) => assert.notStrictEqual(actual, expected),
      toContain: (item: unknown) =>
        assert.ok(
          !(actual as string | unknown[]).includes(item as never),
          `expected it not to contain the value`,
        ),
    },
  };
}
