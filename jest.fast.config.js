/**
 * `npm run test:fast`: the edit loop. The library's unit, HTTP and MCP tests and the store contract on SQLite and
 * in memory, in process: no build, no PostgreSQL, Redis, browser, app processes or packed package (`npm test` runs
 * all of those).
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
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/unit/postgres/'],
  // The services' tests skip with a message here even when their variables are set in the shell.
  setupFiles: ['<rootDir>/test/helpers/without-services.js'],
  globalSetup: undefined,
  collectCoverage: false,
  coverageThreshold: undefined,
};
