// The shipped store contract suite (express-mcp-oauth/testing) against the SQLite store, on a temp file: with the
// default group commit, and with every write committed on its own.
import { describeStoreContract } from '../../lib/testing';
import { closeRacers, sqliteHarness } from './sqlite-harness';

afterAll(closeRacers);

describeStoreContract({ name: 'SQLite', factory: sqliteHarness({ groupCommit: true }), describe, test });
describeStoreContract({
  name: 'SQLite, no group commit',
  factory: sqliteHarness({ groupCommit: false }),
  describe,
  test,
});
