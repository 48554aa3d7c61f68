// The company record, the signed-in user's profile, and the bank data (read only: there is no bank write scope).
import type { AppDb } from '../db/database';
import { notFound, ServiceError } from './errors';

const COMPANY_FIELDS = ['name', 'vat_number', 'address', 'city', 'country', 'email', 'phone'] as const;

export async function getCompany(db: AppDb, companyId: number) {
  return (await db.get(
    `SELECT id, ${COMPANY_FIELDS.join(', ')}, currency, created_at FROM companies WHERE id = ?`,
    [companyId],
  ))!;
}

export async function updateCompany(
  db: AppDb,
  companyId: number,
  fields: Partial<Record<(typeof COMPANY_FIELDS)[number], string | null>>,
) {
  const changes = Object.entries(fields).filter(
    ([key, value]) => (COMPANY_FIELDS as readonly string[]).includes(key) && value !== undefined,
  );
  if (changes.length === 0) throw new ServiceError('invalid', 'Nothing to update: give at least one field.');
  await db.run(`UPDATE companies SET ${changes.map(([key]) => `${key} = ?`).join(', ')} WHERE id = ?`, [
    ...changes.map(([, value]) => value),
    companyId,
  ]);
  return getCompany(db, companyId);
}

export async function getProfile(db: AppDb, userId: string) {
  const row = await db.get(
    'SELECT u.id, u.email, u.name, u.company_id, c.name AS company_name, u.created_at FROM users u JOIN companies c ON c.id = u.company_id WHERE u.id = ?',
    [Number(userId)],
  );
  if (!row) throw notFound('user', Number(userId));
  return row;
}

export async function updateProfile(db: AppDb, userId: string, fields: { name?: string }) {
  if (fields.name === undefined) throw new ServiceError('invalid', 'Nothing to update: give a name.');
  await db.run('UPDATE users SET name = ? WHERE id = ?', [fields.name, Number(userId)]);
  return getProfile(db, userId);
}

export async function listBankAccounts(db: AppDb, companyId: number) {
  return {
    items: await db.all(
      'SELECT id, name, iban, currency, balance FROM bank_accounts WHERE company_id = ? ORDER BY id',
      [companyId],
    ),
  };
}

export async function getBankAccount(db: AppDb, companyId: number, id: number) {
  const row = await db.get(
    'SELECT id, name, iban, currency, balance FROM bank_accounts WHERE id = ? AND company_id = ?',
    [id, companyId],
  );
  if (!row) throw notFound('bank account', id);
  return row;
}

export async function listBankTransactions(
  db: AppDb,
  companyId: number,
  query: { account_id: number; from?: string; to?: string; limit: number; offset: number },
) {
  await getBankAccount(db, companyId, query.account_id);
  const where = ['account_id = ?'];
  const params: unknown[] = [query.account_id];
  if (query.from) where.push('booked_on >= ?') && params.push(query.from);
  if (query.to) where.push('booked_on <= ?') && params.push(query.to);
  const clause = where.join(' AND ');
  const total = (await db.get<{ n: number }>(
    `SELECT CAST(count(*) AS INTEGER) AS n FROM bank_transactions WHERE ${clause}`,
    params,
  ))!.n;
  const items = await db.all(
    `SELECT id, account_id, booked_on, amount, currency, counterparty, description FROM bank_transactions
      WHERE ${clause} ORDER BY booked_on DESC, id DESC LIMIT ? OFFSET ?`,
    [...params, query.limit, query.offset],
  );
  return { total, items };
}

export async function getBankTransaction(db: AppDb, companyId: number, id: number) {
  const row = await db.get(
    `SELECT t.id, t.account_id, t.booked_on, t.amount, t.currency, t.counterparty, t.description
       FROM bank_transactions t JOIN bank_accounts a ON a.id = t.account_id WHERE t.id = ? AND a.company_id = ?`,
    [id, companyId],
  );
  if (!row) throw notFound('bank transaction', id);
  return row;
}
