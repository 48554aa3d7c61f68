// The business data of the reference app, beside the OAuth tables in the same database (SQLite or PostgreSQL).
// The OAuth store versions its own tables; the app keeps its version in app_meta, so the two never collide. The
// DDL is written for SQLite and translated for PostgreSQL by postgresDdl().
//
// Money is always an integer number of minor units (cents) with an ISO 4217 currency; VAT rates are basis points
// (2000 = 20 %). Every business row belongs to a company, and every query filters by it.
import { emailKey } from 'express-mcp-oauth';
import type { AppDb } from './database';

/** A migration: DDL (written for SQLite), or work done in code within the same transaction. */
type Migration = string | ((tx: AppDb) => Promise<void>);

const MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE companies (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    vat_number TEXT,
    address TEXT,
    city TEXT,
    country TEXT NOT NULL DEFAULT 'FR',
    email TEXT,
    phone TEXT,
    currency TEXT NOT NULL DEFAULT 'EUR',
    created_at TEXT NOT NULL
  ) STRICT;

  CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    name TEXT,
    -- scrypt$N$r$p$salt$hash (base64url); never the password itself.
    password_hash TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  -- One account per email, whatever its case.
  CREATE UNIQUE INDEX users_email ON users (lower(email));

  CREATE TABLE clients (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    email TEXT,
    phone TEXT,
    address TEXT,
    vat_number TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX clients_company ON clients (company_id);

  CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT,
    unit TEXT NOT NULL DEFAULT 'unit',
    unit_price INTEGER NOT NULL,
    currency TEXT NOT NULL,
    vat_rate INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX products_company ON products (company_id);

  CREATE TABLE invoices (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('invoice', 'quote')),
    number TEXT NOT NULL,
    client_id INTEGER NOT NULL REFERENCES clients (id),
    status TEXT NOT NULL,
    issue_date TEXT NOT NULL,
    due_date TEXT,
    currency TEXT NOT NULL,
    subtotal INTEGER NOT NULL,
    vat_total INTEGER NOT NULL,
    total INTEGER NOT NULL,
    notes TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (company_id, number)
  ) STRICT;
  CREATE INDEX invoices_company ON invoices (company_id, kind, status);

  CREATE TABLE invoice_lines (
    id INTEGER PRIMARY KEY,
    invoice_id INTEGER NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    product_id INTEGER REFERENCES products (id) ON DELETE SET NULL,
    description TEXT NOT NULL,
    quantity REAL NOT NULL,
    unit_price INTEGER NOT NULL,
    vat_rate INTEGER NOT NULL,
    net INTEGER NOT NULL,
    vat INTEGER NOT NULL,
    total INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX invoice_lines_invoice ON invoice_lines (invoice_id, position);

  CREATE TABLE bank_accounts (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    iban TEXT NOT NULL,
    currency TEXT NOT NULL,
    balance INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX bank_accounts_company ON bank_accounts (company_id);

  CREATE TABLE bank_transactions (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES bank_accounts (id) ON DELETE CASCADE,
    booked_on TEXT NOT NULL,
    amount INTEGER NOT NULL,
    currency TEXT NOT NULL,
    counterparty TEXT NOT NULL,
    description TEXT NOT NULL
  ) STRICT;
  CREATE INDEX bank_transactions_account ON bank_transactions (account_id, booked_on);

  CREATE TABLE prospects (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    organisation TEXT,
    email TEXT,
    phone TEXT,
    status TEXT NOT NULL,
    source TEXT,
    estimated_value INTEGER,
    currency TEXT NOT NULL,
    notes TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX prospects_company ON prospects (company_id, status);

  CREATE TABLE document_templates (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL
  ) STRICT;
  CREATE INDEX document_templates_company ON document_templates (company_id);

  CREATE TABLE documents (
    id INTEGER PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    template_id INTEGER NOT NULL REFERENCES document_templates (id),
    invoice_id INTEGER NOT NULL REFERENCES invoices (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX documents_company ON documents (company_id);

  -- Secrets the app generates on first start and every instance shares: the signing key, the cookie secret.
  CREATE TABLE app_secrets (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;
  `,
  // 2: account-page sessions held by the server, so that signing out ends a session for good (a copied cookie too).
  // The cookie holds a random token; the table holds only its SHA-256.
  `
  CREATE TABLE account_sessions (
    token_hash TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER
  ) STRICT;
  CREATE INDEX account_sessions_expiry ON account_sessions (expires_at);
  `,
  // 3: the audit trail (audit.ts): one row per OAuth event, never a secret; kept AUDIT_RETENTION_DAYS.
  `
  CREATE TABLE audit_events (
    id INTEGER PRIMARY KEY,
    time INTEGER NOT NULL,
    type TEXT NOT NULL,
    client_id TEXT,
    user_id TEXT,
    grant_id TEXT,
    address TEXT,
    request_id TEXT,
    detail TEXT NOT NULL
  ) STRICT;
  CREATE INDEX audit_events_user ON audit_events (user_id, type, time);
  CREATE INDEX audit_events_time ON audit_events (time);
  `,
  // 4: emails compared by a key computed in code (emailKey: NFKC, then lower case), the same on SQLite and PostgreSQL.
  // Both databases' lower() differ (PostgreSQL folds Unicode by locale: the Kelvin sign matched a "k" there), so an
  // address could name one account on one and another account on the other.
  `
  ALTER TABLE users ADD COLUMN email_key TEXT;
  `,
  fillEmailKeys,
  `
  DROP INDEX users_email;
  CREATE UNIQUE INDEX users_email_key ON users (email_key);
  `,
  // Administrators (npm run user:create -- --admin) see every client and grant at /admin, and may end any grant.
  `
  ALTER TABLE users ADD COLUMN is_admin INTEGER NOT NULL DEFAULT 0;
  `,
];

/**
 * Each user's email key. An address that normalisation would change (written before the rule) keeps none: it names
 * no account by email, as the same address typed at sign-in does not, rather than being taken for another one.
 */
async function fillEmailKeys(tx: AppDb): Promise<void> {
  const users = await tx.all<{ id: number; email: string }>('SELECT id, email FROM users ORDER BY id');
  const taken = new Set<string>();
  const rows: [string, number][] = [];
  for (const { id, email } of users) {
    const key = emailKey(email);
    // Two accounts that only one database told apart by case: the older one keeps the address.
    if (key === undefined || taken.has(key)) continue;
    taken.add(key);
    rows.push([key, Number(id)]);
  }
  if (rows.length) await tx.runMany('UPDATE users SET email_key = ? WHERE id = ?', rows);
}

/** The SQLite DDL in PostgreSQL's words: identity keys, BIGINT integers, DOUBLE PRECISION reals, no STRICT. */
function postgresDdl(sql: string): string {
  return sql
    .replace(/INTEGER PRIMARY KEY/g, 'BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY')
    .replace(/\bINTEGER\b/g, 'BIGINT')
    .replace(/\bREAL\b/g, 'DOUBLE PRECISION')
    .replace(/\) STRICT;/g, ');');
}

/**
 * Brings the app's tables up to date (or to version `upTo`: tests of a migration start from the schema before it);
 * safe when several processes start at once.
 */
export async function migrateAppSchema(db: AppDb, upTo = MIGRATIONS.length): Promise<void> {
  await db.run('CREATE TABLE IF NOT EXISTS app_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)');
  await db.transaction(async (tx) => {
    // PostgreSQL: one instance migrates, the others wait and then find nothing to do. SQLite: BEGIN IMMEDIATE.
    if (tx.dialect === 'postgres')
      await tx.get("SELECT pg_advisory_xact_lock(hashtext('express-mcp-oauth:example-app'))");
    const row = await tx.get<{ value: number }>("SELECT value FROM app_meta WHERE key = 'schema_version'");
    const current = Number(row?.value ?? 0);
    if (current > MIGRATIONS.length)
      throw new Error(`The database is at app schema ${current}, newer than this app knows.`);
    for (let version = current; version < upTo; version += 1) {
      const migration = MIGRATIONS[version]!;
      if (typeof migration === 'function') await migration(tx);
      const ddl = typeof migration === 'string' ? migration : '';
      for (const statement of (tx.dialect === 'postgres' ? postgresDdl(ddl) : ddl)
        .split(/;\s*\n/)
        .map((part) => part.trim())
        .filter((part) => part && !/^(--[^\n]*\n?)*$/.test(part))) {
        await tx.run(statement);
      }
      await tx.run(
        "INSERT INTO app_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [version + 1],
      );
    }
  });
}
