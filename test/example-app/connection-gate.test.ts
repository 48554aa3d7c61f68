// The app's SQLite transactions share one connection with the OAuth store: a transaction that awaits real I/O must
// not take in (and roll back) the statements other requests run meanwhile. Safe by construction, not by a comment.
// The tests hold a transaction open on a promise they resolve themselves, and yield whole turns of the event loop
// (setImmediate) where the store would commit a deferred write, so the order of events is fixed, not timed.
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { createConnectionGate } from '../../example-app/db/connection-gate';
import { sqliteAppDb } from '../../example-app/db/database';
import { clientRecord, codeRecord, grantRecord } from '../helpers/fixtures';
import { startExampleApp } from '../helpers/example-app';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test('a store write and a statement issued during a transaction wait for it, and survive its rollback', async () => {
  const app = await startExampleApp();
  try {
    const order: string[] = [];
    const clientId = randomUUID();
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    let endIo!: () => void;
    const io = new Promise<void>((resolve) => (endIo = resolve));
    const transaction = app.db
      .transaction(async (tx) => {
        await tx.run(
          "INSERT INTO companies (name, email, created_at) VALUES ('Rolled back', 'r@b.example', 'now')",
        );
        order.push('transaction wrote');
        wrote();
        await io; // real I/O inside the transaction, for as long as the test says
        order.push('transaction fails');
        throw new Error('rollback');
      })
      .catch((error: Error) => error.message);
    await written;
    const storeWrite = Promise.resolve(
      app.store.registerClient(clientRecord({ clientId, clientName: 'Meanwhile', scope: 'clients:read' })),
    ).then(() => order.push('store wrote'));
    const appWrite = app.db
      .run("INSERT INTO companies (name, email, created_at) VALUES ('Kept', 'k@b.example', 'now')")
      .then(() => order.push('app wrote'));
    // A turn of the event loop with both waiting: had either run, it would have written inside the transaction.
    await nextTurn();
    expect(order).toEqual(['transaction wrote']);
    endIo();
    expect(await transaction).toBe('rollback');
    await Promise.all([storeWrite, appWrite]);
    expect(order).toEqual(['transaction wrote', 'transaction fails', 'store wrote', 'app wrote']);
    expect(await app.store.findClient(clientId)).toMatchObject({ clientName: 'Meanwhile' });
    const names = (await app.db.all<{ name: string }>('SELECT name FROM companies')).map((row) => row.name);
    expect(names).toContain('Kept');
    expect(names).not.toContain('Rolled back');
  } finally {
    await app.stop();
  }
});

test('a code exchange during a transaction waits for it, survives its rollback, and does not hold the gate', async () => {
  const app = await startExampleApp();
  try {
    const client = clientRecord({ scope: 'clients:read' });
    await app.store.registerClient(client);
    const grant = grantRecord(Date.now(), { clientId: client.clientId, scopes: ['clients:read'] });
    await app.store.createGrant(grant);
    const code = codeRecord(Date.now(), grant);
    await app.store.saveAuthorizationCode(code);

    // The store's write, group-committed after its turn: it must neither join the open transaction nor be lost with it.
    const order: string[] = [];
    let consumed!: Promise<unknown>;
    const transaction = app.db
      .transaction(async (tx) => {
        await tx.run(
          "INSERT INTO companies (name, email, created_at) VALUES ('Rolled back', 'r@b.example', 'now')",
        );
        consumed = Promise.resolve(app.store.consumeAuthorizationCode(code.codeHash)).then((outcome) => {
          order.push('code consumed');
          return outcome;
        });
        // Real I/O inside the transaction: turns of the event loop, in which the store's group commit (scheduled
        // with setImmediate when the code was consumed) comes due and must find the transaction open.
        for (let turn = 0; turn < 3; turn += 1) await nextTurn();
        order.push('transaction fails');
        throw new Error('rollback');
      })
      .catch((error: Error) => error.message);
    expect(await transaction).toBe('rollback');
    await expect(consumed).resolves.toMatchObject({ status: 'consumed' });
    expect(order).toEqual(['transaction fails', 'code consumed']);
    await expect(app.store.consumeAuthorizationCode(code.codeHash)).resolves.toMatchObject({
      status: 'replayed',
    });

    // Outside a transaction, a statement issued after a store write gets its turn before that write commits: the
    // gate is held for the call, not for the batch, so concurrent token requests share a commit.
    const second = codeRecord(Date.now(), grant);
    await app.store.saveAuthorizationCode(second);
    const settled: string[] = [];
    const write = Promise.resolve(app.store.consumeAuthorizationCode(second.codeHash)).then(() =>
      settled.push('store write'),
    );
    const read = app.db.get('SELECT 1 AS one').then(() => settled.push('app statement'));
    await Promise.all([write, read]);
    expect(settled).toEqual(['app statement', 'store write']);
  } finally {
    await app.stop();
  }
});

test("a transaction's own statements and nested transactions run at once; one from outside waits for its end", async () => {
  const sqlite = new Database(':memory:');
  const db = sqliteAppDb(sqlite, createConnectionGate());
  await db.run('CREATE TABLE steps (name TEXT)');
  const order: string[] = [];
  let finish!: () => void;
  const transaction = db.transaction(async (tx) => {
    await tx.run("INSERT INTO steps VALUES ('inside')");
    await tx.transaction(async (nested) => nested.run("INSERT INTO steps VALUES ('nested')"));
    order.push(`inside sees ${(await tx.all('SELECT name FROM steps')).length}`);
    await new Promise<void>((resolve) => (finish = resolve));
  });
  const outside = db.run("INSERT INTO steps VALUES ('outside')").then(() => order.push('outside'));
  await nextTurn();
  expect(order).toEqual(['inside sees 2']);
  finish();
  await Promise.all([transaction, outside]);
  expect(order).toEqual(['inside sees 2', 'outside']);
  expect((await db.all<{ name: string }>('SELECT name FROM steps')).map((row) => row.name)).toEqual([
    'inside',
    'nested',
    'outside',
  ]);
  sqlite.close();
});

test('with nothing under way a statement runs at once; behind a transaction it waits; a failure is a rejection', async () => {
  const gate = createConnectionGate();
  const ran: string[] = [];
  const idle = gate.turn(() => ran.push('idle'));
  expect(ran).toEqual(['idle']);
  let finish!: () => void;
  const transaction = gate.exclusive(() => new Promise<void>((resolve) => (finish = resolve)));
  const queued = gate.turn(() => ran.push('queued'));
  await nextTurn();
  expect(ran).toEqual(['idle']);
  finish();
  await Promise.all([idle, transaction, queued]);
  expect(ran).toEqual(['idle', 'queued']);
  void gate.turn(() => ran.push('idle again'));
  expect(ran).toEqual(['idle', 'queued', 'idle again']);
  const failing = gate.turn(() => {
    throw new Error('no such table');
  });
  await expect(failing).rejects.toThrow('no such table');
});

test('each SQL text is compiled once, and its statement still sees a column added later', async () => {
  const sqlite = new Database(':memory:');
  const db = sqliteAppDb(sqlite, createConnectionGate());
  const prepare = jest.spyOn(sqlite, 'prepare');
  await db.run('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
  for (const text of ['a', 'b']) await db.run('INSERT INTO notes (text) VALUES (?)', [text]);
  expect(await db.all('SELECT * FROM notes WHERE id > ?', [0])).toEqual([
    { id: 1, text: 'a' },
    { id: 2, text: 'b' },
  ]);
  await db.run('ALTER TABLE notes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0');
  expect(await db.get('SELECT * FROM notes WHERE id > ?', [1])).toEqual({ id: 2, text: 'b', pinned: 0 });
  expect(prepare.mock.calls.map(([sql]) => sql)).toEqual([
    'CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)',
    'INSERT INTO notes (text) VALUES (?)',
    'SELECT * FROM notes WHERE id > ?',
    'ALTER TABLE notes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0',
  ]);
  sqlite.close();
});
