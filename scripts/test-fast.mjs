// npm run test:fast: the edit loop (jest.fast.config.js), then how long it took against its budget. A test that
// failed on a slow loop would be flaky; the number printed at every run is what keeps the loop honest instead
// (docs/development.md, "The edit loop's budget"). Arguments go to Jest: `npm run test:fast -- test/http`.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// Seconds, on the two-core machine CI runs on, for a run after the first (the first also fills Jest's caches).
const BUDGET_SECONDS = 60;
const FIRST_RUN_SECONDS = 90;

// jest's package exports no bin path: its bin is found beside its package.json.
const jest = join(dirname(createRequire(import.meta.url).resolve('jest/package.json')), 'bin/jest.js');
const started = process.hrtime.bigint();
const run = spawnSync(process.execPath, [jest, '-c', 'jest.fast.config.js', ...process.argv.slice(2)], {
  stdio: 'inherit',
  // openid-client, loaded by a dynamic import, needs Jest's ES module support (docs/development.md).
  env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules`.trim() },
});
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const verdict =
  seconds <= BUDGET_SECONDS
    ? `within its budget of ${BUDGET_SECONDS} s`
    : `OVER its budget of ${BUDGET_SECONDS} s (${FIRST_RUN_SECONDS} s for a checkout's first run, which fills the caches)`;
console.log(`\ntest:fast took ${seconds.toFixed(1)} s: ${verdict}.`);
process.exit(run.status ?? 1);
