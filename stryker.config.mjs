// StrykerJS: mutation testing of the security modules (`npm run mutation`). Not part of `npm test` or .ci/run: a run
// takes many minutes. One module at a time: `npm run mutation -- --mutate lib/crypto/pkce.ts`.
//
// Each mutant runs the tests that reach its code; a mutant reached while a suite is being set up (a client registered
// in beforeAll) counts as static and runs every test, about a minute and a half. While working on one module, narrow
// the tests with STRYKER_TESTS, a comma-separated list of test files or folders:
//   STRYKER_TESTS=test/unit/util,test/http/authorize.test.ts npm run mutation -- --mutate lib/util/redirect-uri.ts
// Fewer tests can only kill fewer mutants: a score found that way is a lower bound of the full run's.
const FAST_TESTS = [
  'test/unit/**/*.test.ts',
  'test/http/**/*.test.ts',
  'test/mcp/**/*.test.ts',
  'test/store-contract/sqlite.test.ts',
];
const narrowed = process.env.STRYKER_TESTS?.split(',')
  .map((path) => path.trim().replace(/\/+$/, ''))
  .filter(Boolean)
  .map((path) => (path.endsWith('.ts') ? path : `${path}/**/*.test.ts`));
const tests = narrowed?.length ? narrowed : FAST_TESTS;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: [
    'lib/util/redirect-uri.ts',
    'lib/crypto/pkce.ts',
    'lib/clients/authentication.ts',
    'lib/clients/assertion.ts',
    'lib/grants/rotation.ts',
    'lib/grants/reuse-options.ts',
    'lib/dpop/*.ts',
    'lib/outbound/safe-fetch.ts',
    'lib/outbound/special-addresses.ts',
    'lib/middleware/bearer.ts',
    'lib/middleware/bearer-cache.ts',
    'lib/mcp/**/*.ts',
    'lib/handlers/introspect.ts',
    'lib/handlers/token.ts',
    'lib/grants/authorization-code.ts',
    'lib/grants/refresh-token.ts',
    'lib/grants/grant-token-response.ts',
    'lib/grants/access-token-response.ts',
    'lib/grants/table.ts',
    'lib/grants/grantless-token.ts',
    'lib/grants/client-credentials.ts',
    'lib/id-jag/grant.ts',
    'lib/id-jag/options.ts',
    'lib/util/email.ts',
    'lib/jwt/verify.ts',
    'lib/crypto/encryption-at-rest.ts',
    'lib/check/printable.ts',
    'lib/router/secret-warning.ts',
    'lib/i18n/*.ts',
    'lib/token-exchange/*.ts',
    'lib/workload/*.ts',
    'lib/crypto/act.ts',
  ],
  testRunner: 'jest',
  // openid-client (upstream sign-in) is an ES module, imported dynamically: Jest needs the VM modules flag for it.
  testRunnerNodeArgs: ['--experimental-vm-modules'],
  jest: {
    projectType: 'custom',
    configFile: 'jest.config.js',
    // Only the fast suites that exercise these modules in process: no app processes, browsers, packed package or
    // conformance CLI. None of them needs dist/, so the global setup (a build) is not run either.
    config: {
      // The sources are roots too, so that Jest can find the tests related to a mutated file (findRelatedTests).
      roots: ['<rootDir>/test', '<rootDir>/lib', '<rootDir>/example-app'],
      testMatch: tests.map((path) => `<rootDir>/${path}`),
      // The PostgreSQL store's own tests need a database and cover none of the mutated modules.
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/unit/postgres/'],
      globalSetup: null,
      collectCoverage: false,
      coverageThreshold: {},
    },
  },
  coverageAnalysis: 'perTest',
  // The machine is shared: never more than two test processes.
  concurrency: 2,
  // Results of unchanged mutants and tests are reused from the last run (kept locally, gitignored with reports/).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  ignorePatterns: ['dist', 'coverage', 'data', '.bench-results', '.cache', 'docs'],
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
};
