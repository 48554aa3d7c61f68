// PostgreSQL and Redis for the tests that need them: their URLs come from the environment (.ci/run sets both),
// and without them those tests are skipped with a message that says how to run them.
export const DATABASE_URL = process.env.DATABASE_URL;
export const REDIS_URL = process.env.REDIS_URL;

export function describeWith(
  name: string,
  needs: { postgres?: boolean; redis?: boolean },
  body: () => void,
): void {
  const missing = [
    needs.postgres && !DATABASE_URL && 'DATABASE_URL=postgres://postgres@127.0.0.1:5432/test',
    needs.redis && !REDIS_URL && 'REDIS_URL=redis://127.0.0.1:6379',
  ].filter(Boolean);
  if (missing.length === 0) return describe(name, body);
  console.warn(`Skipped "${name}": set ${missing.join(' and ')} to run it.`);
  describe.skip(name, body);
}
