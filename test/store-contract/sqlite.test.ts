// The store contract suite against the SQLite store, on a temp file.
import { describeStoreContract } from './store-contract';
import { createSqliteHarness } from './sqlite-harness';

describeStoreContract('SQLite', createSqliteHarness);
