// better-sqlite3 is a native module: only the SQLite store loads it, when it is created, so an app on PostgreSQL or
// a store of its own never loads it (and does not need it built).
test('importing the package does not load better-sqlite3; creating a SQLite store does', () => {
  jest.isolateModules(() => {
    jest.doMock('better-sqlite3', () => {
      throw new Error('better-sqlite3 was loaded');
    });
    const lib = require('../../../lib/index') as typeof import('../../../lib/index');
    expect(typeof lib.createOAuthRouter).toBe('function');
    const postgres = require('../../../lib/postgres') as typeof import('../../../lib/postgres');
    expect(typeof postgres.createPostgresStore).toBe('function');
    expect(() => lib.createSqliteStore(':memory:')).toThrow('better-sqlite3 was loaded');
  });
});
