// Proving a store with the shipped contract suite, here the package's own SQLite store under node:test
// (`node --test`). For your store, return it from the factory instead; with jest, pass jest's describe and test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createSqliteStore } from 'express-mcp-oauth';
import { describeStoreContract } from 'express-mcp-oauth/testing';

describeStoreContract({
  name: 'SQLite',
  describe,
  test,
  // A fresh, empty store per test, on the suite's fake clock.
  factory: async (clock) => {
    const dir = mkdtempSync(join(tmpdir(), 'store-contract-'));
    const store = createSqliteStore(join(dir, 'oauth.db'), { now: clock.now });
    return {
      store,
      close: async () => {
        store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});
