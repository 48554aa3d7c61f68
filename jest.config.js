/** Jest: TypeScript through ts-jest, coverage of the library held to the bar the project set. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  // The reference app imports the package by name, as a user's app would; under test that is the source itself.
  moduleNameMapper: {
    '^express-mcp-oauth$': '<rootDir>/lib/index.ts',
    '^express-mcp-oauth/([a-z]+)$': '<rootDir>/lib/$1/index.ts',
  },
  collectCoverageFrom: ['lib/**/*.ts'],
  coverageReporters: ['text-summary', 'lcov'],
  coverageThreshold: { './lib/': { lines: 90 } },
  testTimeout: 30000,
  globalSetup: '<rootDir>/test/global-setup.js',
  // Two test files at a time. Jest's default on a two-core machine (CI's) is one: most of the slow files wait on app
  // processes, Chromium, PostgreSQL or a deadline rather than on the CPU. Every file has its own ports, database or
  // schema, Redis prefix and temporary folders, so two can run side by side. The longest files start first.
  maxWorkers: 2,
  testSequencer: '<rootDir>/test/sequencer.js',
};
