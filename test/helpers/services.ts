// PostgreSQL, Redis and the MCP conformance CLI for the tests that need them: where they are comes from the
// environment (.ci/run sets all three), and without them those tests are skipped with a message that says how to
// run them.
export const DATABASE_URL = process.env.DATABASE_URL;
export const REDIS_URL = process.env.REDIS_URL;
/** Where scripts/install-conformance.sh put the official MCP conformance CLI and the Node 22 it needs. */
export const CONFORMANCE_DIR = process.env.MCP_CONFORMANCE_DIR;

export function describeWith(
  name: string,
  needs: { postgres?: boolean; redis?: boolean; conformance?: boolean },
  body: () => void,
): void {
  const missing = [
    needs.postgres && !DATABASE_URL && 'DATABASE_URL=postgres://postgres@127.0.0.1:5432/test',
    needs.redis && !REDIS_URL && 'REDIS_URL=redis://127.0.0.1:6379',
    needs.conformance &&
      !CONFORMANCE_DIR &&
      'MCP_CONFORMANCE_DIR (install with: bash scripts/install-conformance.sh .cache/conformance)',
  ].filter(Boolean);
  if (missing.length === 0) return describe(name, body);
  // CI always has them (.ci/run sets them): there a missing one is a failure, never a quiet skip.
  if (process.env.CI === 'true')
    throw new Error(`"${name}" needs ${missing.join(' and ')}, which CI must set.`);
  console.warn(`Skipped "${name}": set ${missing.join(' and ')} to run it.`);
  describe.skip(name, body);
}
