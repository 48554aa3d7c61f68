// The store contract suite against PostgreSQL, each store in a schema of its own.
import { describeWith } from '../helpers/services';
import { describeStoreContract } from './store-contract';
import { createPostgresHarness } from './postgres-harness';

describeWith('PostgreSQL store', { postgres: true }, () => {
  describeStoreContract('PostgreSQL', createPostgresHarness);
});
