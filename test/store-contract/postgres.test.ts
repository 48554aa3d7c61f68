// The shipped store contract suite (express-mcp-oauth/testing) against PostgreSQL, each store in a schema of its own.
import { describeStoreContract } from '../../lib/testing';
import { describeWith } from '../helpers/services';
import { createPostgresHarness } from './postgres-harness';

describeWith('PostgreSQL store', { postgres: true }, () => {
  describeStoreContract({ name: 'PostgreSQL', factory: createPostgresHarness, describe, test });
});
