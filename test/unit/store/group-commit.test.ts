// Group commit of the SQLite store: what a caller is promised (its write committed before it hears back, alone if
// it fails, never inside a transaction of the host app) and what it buys (one transaction for a turn's writes).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createGroupCommit } from '../../../lib/store/group-commit';
import { createSqliteStore } from '../../../lib/store/sqlite';
import { isStoreUnavailable } from '../../../lib/store/unavailable';
import { createFakeClock } from '../../helpers/clock';
import { clientRecord, codeRecord, grantRecord } from '../../helpers/fixtures';

describe('group commit', () => {
  let dir: string;
  let path: string;
  let writer: Database.Database;
  let reader: Database.Database;
  const rows = (db = reader) =>
    (db.prepare('SELECT name FROM items ORDER BY name').all() as Array<{ name: string }>).map((r) => r.name);
  const insert = (name: string) => () =>
    writer.prepare('INSERT INTO items (name) VALUES (?)').run(name).changes;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-group-'));
    path = join(dir, 'g.db');
    writer = new Database(path);
    writer.pragma('journal_mode = WAL');
    writer.exec('CREATE TABLE items (name TEXT PRIMARY KEY)');
    reader = new Database(path);
  });
  afterEach(() => {
    writer.close();
    reader.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the writes of one turn share one transaction, and nobody hears back before it commits', async () => {
    const group = createGroupCommit(writer);
    const seenByOthers: string[][] = [];
    const first = group.run(insert('a'));
    // Run in the same transaction as the first: another connection cannot see the first row yet.
    const second = group.run(() => {
      seenByOthers.push(rows());
      return insert('b')();
    });
    let answered = false;
    void first.then(() => (answered = true));
    await Promise.resolve();
    expect(answered).toBe(false);
    expect(rows()).toEqual([]);
    await expect(Promise.all([first, second])).resolves.toEqual([1, 1]);
    expect(seenByOthers).toEqual([[]]);
    expect(rows()).toEqual(['a', 'b']);
  });

  test('a write that throws is undone alone; the others of its batch commit', async () => {
    const group = createGroupCommit(writer);
    const results = await Promise.allSettled([
      group.run(insert('a')),
      group.run(() => {
        insert('b')();
        throw new Error('refused');
      }),
      group.run(insert('a')), // a constraint violation: the same key
      group.run(insert('c')),
    ]);
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect(rows()).toEqual(['a', 'c']);
  });

  test('a batch that cannot commit acknowledges nothing and writes nothing', async () => {
    writer.pragma('busy_timeout = 0');
    reader.exec('BEGIN IMMEDIATE'); // another connection holds the write lock
    const group = createGroupCommit(writer);
    const results = await Promise.allSettled([group.run(insert('a')), group.run(insert('b'))]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    reader.exec('ROLLBACK');
    expect(rows()).toEqual([]);
  });

  test('writes never land inside a transaction the host app left open (its rollback cannot undo them)', async () => {
    const group = createGroupCommit(writer);
    writer.exec('BEGIN');
    writer.prepare("INSERT INTO items (name) VALUES ('host')").run();
    const ours = group.run(insert('ours'));
    let settled = false;
    void ours.then(() => (settled = true));
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    writer.exec('ROLLBACK');
    await expect(ours).resolves.toBe(1);
    expect(rows()).toEqual(['ours']);
  });

  test('a host transaction that never ends fails the waiting writes after 5 s, instead of hanging them', async () => {
    const clock = createFakeClock();
    const group = createGroupCommit(writer, clock.now);
    writer.exec('BEGIN');
    const ours = group.run(insert('ours'));
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(5000);
    await expect(ours).rejects.toThrow(/inside a transaction of the host app/);
    // Busy, not a bug: answered 503 temporarily_unavailable, so the client tries again.
    expect(isStoreUnavailable(await ours.catch((error: unknown) => error))).toBe(true);
    writer.exec('ROLLBACK');
    expect(rows()).toEqual([]);
  });
});

describe('the SQLite store with group commit', () => {
  test('close() commits the writes still waiting, so an acknowledged exchange is never lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-group-'));
    const path = join(dir, 's.db');
    const store = createSqliteStore(path);
    const client = clientRecord();
    const grant = grantRecord(Date.now(), { clientId: client.clientId });
    const code = codeRecord(Date.now(), grant);
    store.registerClient(client);
    store.createGrant(grant);
    store.saveAuthorizationCode(code);
    const consumed = store.consumeAuthorizationCode(code.codeHash);
    store.close();
    await expect(consumed).resolves.toMatchObject({ status: 'consumed' });
    const reopened = createSqliteStore(path);
    await expect(reopened.consumeAuthorizationCode(code.codeHash)).resolves.toMatchObject({
      status: 'replayed',
    });
    reopened.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
