// The shipped store contract suite (express-mcp-oauth/testing) against the SQLite store, on a temp file.
import { describeStoreContract } from '../../lib/testing';
import { createSqliteHarness } from './sqlite-harness';

describeStoreContract({ name: 'SQLite', factory: createSqliteHarness, describe, test });
