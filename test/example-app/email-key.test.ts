// Emails compared in one form on both of the reference app's databases (security round four): the key is computed in
// code (emailKey: NFKC, then lower case), never by the database's lower(), which folds ASCII only on SQLite and
// Unicode by locale on PostgreSQL (where the Kelvin sign became "k" and an address could match another mailbox's
// account). The same table runs on SQLite and on PostgreSQL, and so does the migration that gives old rows their key.
import Database from 'better-sqlite3';
import { Pool } from 'pg';
import { createConnectionGate } from '../../example-app/db/connection-gate';
import { postgresAppDb, sqliteAppDb, type AppDb } from '../../example-app/db/database';
import { migrateAppSchema } from '../../example-app/db/schema';
import { authenticateUser, createUser, findUserByEmail, UserInputError } from '../../example-app/users';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import { DATABASE_URL } from '../helpers/services';

const PASSWORD = 'a long enough password';

interface Backend {
  name: string;
  open(): Promise<{ db: AppDb; close(): Promise<void> }>;
}

const sqlite: Backend = {
  name: 'SQLite',
  async open() {
    const connection = new Database(':memory:');
    return {
      db: sqliteAppDb(connection, createConnectionGate()),
      close: async () => void connection.close(),
    };
  },
};

let database: TestDatabase | undefined;
const postgres: Backend = {
  name: 'PostgreSQL',
  async open() {
    database ??= await createTestDatabase();
    const pool = new Pool({ connectionString: database.url, max: 2 });
    const db = postgresAppDb(pool);
    // Each test a clean slate in the one database of this file.
    await db.run('DROP SCHEMA public CASCADE');
    await db.run('CREATE SCHEMA public');
    return { db, close: () => pool.end() };
  },
};
afterAll(() => database?.drop());

if (!DATABASE_URL) {
  if (process.env.CI === 'true')
    throw new Error('The email key contract needs DATABASE_URL, which CI must set.');
  console.warn('Skipped the PostgreSQL half of the email key contract: set DATABASE_URL to run it.');
}
const backends = DATABASE_URL ? [sqlite, postgres] : [sqlite];

describe.each(backends)('on $name', (backend) => {
  let db: AppDb;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ db, close } = await backend.open());
    await migrateAppSchema(db);
  });
  afterEach(() => close());

  test.each([
    ['the address as created', 'kelvin@example.com', 'kelvin'],
    ['another case (ASCII)', 'KELVIN@Example.COM', 'kelvin'],
    // SQLite's lower() leaves Ä alone: with it, this matched on PostgreSQL only.
    ['another case (beyond ASCII)', 'ärger@bücher.example', 'ärger'],
    // PostgreSQL's lower() folds U+212A to "k": with it, this matched kelvin@ there and nobody on SQLite.
    ['the Kelvin sign for its k', '\u212aelvin@example.com', null],
    ['a fullwidth letter', '\uff4belvin@example.com', null],
    ['an address of nobody', 'nobody@example.com', null],
    ['a NUL, which PostgreSQL cannot even compare', 'kelvin@example.com\u0000', null],
  ])('%s: the same account on both databases', async (_name, typed, expected) => {
    const made = {
      kelvin: await createUser(db, { email: 'kelvin@example.com', password: PASSWORD }),
      ärger: await createUser(db, { email: 'Ärger@Bücher.example', password: PASSWORD }),
    };
    const want = expected === null ? null : made[expected as keyof typeof made].id;
    expect((await findUserByEmail(db, typed))?.id ?? null).toBe(want);
    expect((await authenticateUser(db, typed, PASSWORD))?.id ?? null).toBe(want);
  });

  test.each([
    ['the same address in another case', 'BOB@example.com', /already exists/],
    [
      'the Kelvin sign, which normalisation turns into K',
      'bo\u212a@example.com',
      /Unicode normalisation changes/,
    ],
    ['a fullwidth letter', '\uff42ob@example.com', /Unicode normalisation changes/],
    ['not an address', 'bob', /not a valid email address/],
  ])('a second account cannot be made with %s', async (_name, email, message) => {
    await createUser(db, { email: 'bob@example.com', password: PASSWORD });
    const attempt = createUser(db, { email, password: PASSWORD });
    await expect(attempt).rejects.toThrow(UserInputError);
    await expect(createUser(db, { email, password: PASSWORD })).rejects.toThrow(message);
  });

  test('the migration gives old rows their key; an address normalisation changes, or a case twin, gets none', async () => {
    await close();
    ({ db, close } = await backend.open());
    await migrateAppSchema(db, 3);
    const insert = async (email: string) => {
      const company = await db.insert('INSERT INTO companies (name, created_at) VALUES (?, ?) RETURNING id', [
        email,
        '2026-01-01T00:00:00.000Z',
      ]);
      return db.insert(
        'INSERT INTO users (company_id, email, password_hash, created_at) VALUES (?, ?, ?, ?) RETURNING id',
        [company, email, 'scrypt$x', '2026-01-01T00:00:00.000Z'],
      );
    };
    const ids = [
      await insert('Bob@Example.com'),
      await insert('\u212aelvin@example.com'),
      await insert('Ärger@Bücher.example'),
    ];
    // Before the rule, SQLite's index told these apart from the rows above by case beyond ASCII.
    if (backend === sqlite) ids.push(await insert('ärger@bücher.example'));
    await migrateAppSchema(db);
    const rows = await db.all<{ id: number; email_key: string | null }>(
      'SELECT id, email_key FROM users ORDER BY id',
    );
    expect(rows.map((row) => [Number(row.id), row.email_key])).toEqual(
      [
        [ids[0], 'bob@example.com'],
        [ids[1], null],
        [ids[2], 'ärger@bücher.example'],
        [ids[3], null],
      ].slice(0, ids.length),
    );
    expect((await findUserByEmail(db, 'bob@example.com'))?.id).toBe(String(ids[0]));
  });
});
