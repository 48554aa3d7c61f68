// Pure pieces of the reference app: money arithmetic, password hashing, and reading the environment.
import { ConfigError, readConfig } from '../../example-app/config';
import { documentTotals, formatMoney, lineAmounts } from '../../example-app/services/money';
import { hashPassword, verifyPassword } from '../../example-app/users';

describe('money', () => {
  test.each([
    [1, 1000, 2000, { net: 1000, vat: 200, total: 1200 }],
    [1.5, 2900, 2000, { net: 4350, vat: 870, total: 5220 }],
    [3, 333, 550, { net: 999, vat: 55, total: 1054 }],
    [0.333, 100, 2000, { net: 33, vat: 7, total: 40 }],
    [2, 0, 2000, { net: 0, vat: 0, total: 0 }],
  ])('%d x %d at %d bp', (quantity, price, rate, expected) => {
    expect(lineAmounts(quantity, price, rate)).toEqual(expected);
  });

  test('totals are sums of the rounded lines, so they always add up', () => {
    const lines = [lineAmounts(1, 333, 2000), lineAmounts(1, 333, 2000), lineAmounts(1, 334, 2000)];
    // 66.6 + 66.6 + 66.8 rounds line by line to 67 each: the document shows 2.01, as its lines do.
    expect(documentTotals(lines)).toEqual({ subtotal: 1000, vat_total: 201, total: 1201 });
  });

  test.each([
    [123450, 'EUR', '1234.50 EUR'],
    [5, 'EUR', '0.05 EUR'],
    [-8900, 'EUR', '-89.00 EUR'],
  ])('formats %d %s', (minor, currency, text) => {
    expect(formatMoney(minor, currency)).toBe(text);
  });
});

describe('passwords', () => {
  test('scrypt with a salt per user: the same password hashes differently, and only it verifies', async () => {
    const a = await hashPassword('a long password');
    const b = await hashPassword('a long password');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('a long password', a)).toBe(true);
    expect(await verifyPassword('a long passworD', a)).toBe(false);
    expect(await verifyPassword('a long password', 'md5$abc')).toBe(false);
  });

  test('hashing runs off the event loop: eight sign-ins at once leave other requests waiting no longer than one', async () => {
    const stored = await hashPassword('a long password');
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 2);
    const started = performance.now();
    await Promise.all(Array.from({ length: 8 }, () => verifyPassword('a wrong password', stored)));
    const elapsed = performance.now() - started;
    clearInterval(ticker);
    // The gap since the last tick counts too: a loop held until the end never ticked at all.
    longestGap = Math.max(longestGap, performance.now() - last);
    // Synchronous scrypt would hold the loop for all eight hashes in a row (the whole elapsed time).
    expect(longestGap).toBeLessThan(Math.max(60, elapsed / 3));
  });
});

describe('readConfig', () => {
  test('DOWNSTREAM_RESOURCES: a list of URLs, normalised; none by default', () => {
    expect(readConfig({}).downstreamResources).toEqual([]);
    expect(
      readConfig({ DOWNSTREAM_RESOURCES: ' https://Ledger.example/api/ , http://127.0.0.1:9000' })
        .downstreamResources,
    ).toEqual(['https://ledger.example/api', 'http://127.0.0.1:9000']);
  });

  test('defaults: port 3000, BASE_URL from it, a database under ./data/, rate limits on', () => {
    expect(readConfig({})).toMatchObject({
      port: 3000,
      baseUrl: 'http://localhost:3000',
      rateLimits: true,
      databasePath: expect.stringMatching(/data\/app\.db$/),
    });
  });

  test.each([
    [{ PORT: 'eighty' }, /PORT must be a port number/],
    [{ PORT: '70000' }, /PORT must be a port number/],
    [{ RATE_LIMITS: 'no' }, /RATE_LIMITS must be "on" or "off"/],
    [{ ACCESS_TOKEN_TTL: '0' }, /ACCESS_TOKEN_TTL/],
    [{ DOWNSTREAM_RESOURCES: 'ledger' }, /DOWNSTREAM_RESOURCES holds "ledger", which is not an https URL/],
    [{ DOWNSTREAM_RESOURCES: 'http://ledger.example' }, /which is not an https URL/],
    [{ DOWNSTREAM_RESOURCES: 'https://ledger.example/?v=1' }, /no query, fragment or credentials/],
    [{ DOWNSTREAM_RESOURCES: 'https://u:p@ledger.example' }, /no query, fragment or credentials/],
    [{ DOWNSTREAM_RESOURCES: 'http://localhost:3000/mcp' }, /which is this app's own/],
    [{ DOWNSTREAM_RESOURCES: 'http://localhost:3000/renderer/' }, /which is this app's own/],
    [{ DOWNSTREAM_RESOURCES: 'https://a.example,https://a.example/' }, /twice/],
  ])('refuses %j', (env, message) => {
    expect(() => readConfig(env)).toThrow(ConfigError);
    expect(() => readConfig(env)).toThrow(message);
  });
});
