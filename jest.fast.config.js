/**
 * `npm run test:fast`: the edit loop, in under a minute on two cores (docs/development.md, "The edit loop's budget").
 * The library's unit, HTTP and MCP tests and the store contract on SQLite and in memory, in process, with the
 * security properties at a smaller run count: no build, no PostgreSQL, Redis, browser, app processes or packed
 * package, and not the endpoint suites' second run through the experimental fast path (`npm test` runs all of those,
 * and every property at its full count).
 */
const base = require('./jest.config.js');

module.exports = {
  ...base,
  testMatch: [
    '<rootDir>/test/unit/**/*.test.ts',
    '<rootDir>/test/http/**/*.test.ts',
    '<rootDir>/test/mcp/**/*.test.ts',
    '<rootDir>/test/store-contract/sqlite.test.ts',
    '<rootDir>/test/store-contract/memory.test.ts',
  ],
  testPathIgnorePatterns: [
    '/node_modules/',
    '<rootDir>/test/unit/postgres/',
    // Eight endpoint suites again, through fastPath: a quarter minute that repeats what the loop has just run.
    '<rootDir>/test/http/fast-path-endpoints.test.ts',
    // The documentation's code blocks type-checked against the package: seconds of TypeScript for docs, not lib/.
    '<rootDir>/test/unit/readme-code.test.ts',
  ],
  // The services' tests skip with a message here even when their variables are set in the shell.
  setupFiles: ['<rootDir>/test/helpers/without-services.js', '<rootDir>/test/helpers/fast-loop.js'],
  globalSetup: undefined,
  collectCoverage: false,
  coverageThreshold: undefined,
};
