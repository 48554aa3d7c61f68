// Resident memory of the built SQLite store over one purge pass, in a process of its own so that nothing else a test
// did moves it. better-sqlite3 builds SQLite with a 16 MB page cache; the purge's first pass over a large database
// would fill it with cold pages of the code-hash index and keep them (lib/store/sqlite-cache.ts).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { migrateSqlite } from '../../lib/store/sqlite-schema';

const ROOT = join(__dirname, '../..');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-purge-memory-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A file with `count` expired codes, each of a grant of its own, as the bench's database has after its code rows: the
 * purge finds them by expiry, and each delete reaches a random page of the code-hash index.
 */
function seedExpiredCodes(path: string, count: number): void {
  const db = new Database(path);
  migrateSqlite(db);
  db.exec(`
    INSERT INTO oauth_clients (client_id, redirect_uris, grant_types, response_types, token_endpoint_auth_method, scope, issued_at)
      VALUES ('c', '[]', '[]', '[]', 'none', '', 0);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
      INSERT INTO oauth_grants (grant_id, client_id, user_id, scope, created_at, expires_at)
      SELECT 'g' || i, 'c', 'u', 'read', 0, 9e15 FROM n;
    INSERT INTO oauth_authorization_codes
      (code_hash, grant_id, client_id, user_id, redirect_uri, scope, code_challenge, code_challenge_method, expires_at)
      SELECT hex(randomblob(32)), grant_id, 'c', 'u', 'http://127.0.0.1/cb', 'read', 'x', 'S256', 1 FROM oauth_grants;
  `);
  db.close();
}

// The growth, in MB, of memory outside V8's heap over one pass as the reference app runs it (20 batches of 500).
const measurePass = `
  const { createSqliteStore } = require(${JSON.stringify(join(ROOT, 'dist/lib/store/sqlite.js'))});
  const store = createSqliteStore(process.env.DB, { groupCommit: false });
  const outsideHeap = () => { gc(); gc(); const m = process.memoryUsage(); return (m.rss - m.heapTotal) / 1048576; };
  const before = outsideHeap();
  let removed = 0;
  for (let batch = 0; batch < 20; batch += 1) removed += store.purgeExpired(500);
  process.stdout.write(JSON.stringify({ removed, growth: outsideHeap() - before }));
  store.close();
`;

test('one purge pass over 200,000 expired codes keeps no more than a few MB of memory', () => {
  const path = join(dir, 'codes.db');
  seedExpiredCodes(path, 200_000);
  const { removed, growth } = JSON.parse(
    execFileSync(process.execPath, ['--expose-gc', '-e', measurePass], {
      env: { ...process.env, DB: path },
      encoding: 'utf8',
      timeout: 60_000,
    }),
  ) as { removed: number; growth: number };
  expect(removed).toBe(10_000);
  // Without the small cache the pass keeps 15 to 17 MB (the cache filled to better-sqlite3's 16 MB); with it about
  // 2 MB: the 2 MB cache and what the allocator holds around it.
  expect(growth).toBeLessThan(6);
}, 90_000);
