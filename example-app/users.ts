// Users of the business service: creation with an scrypt password hash and a company, and sign-in checks.
import { randomBytes, scrypt, timingSafeEqual, type BinaryLike, type ScryptOptions } from 'node:crypto';
import { emailKey } from 'express-mcp-oauth';
import type { AppDb } from './db/database';
import { seedDemoData } from './demo-data';

/** A user as the OAuth router sees it. */
export interface AppUser {
  id: string;
  name?: string;
  email: string;
  companyId: number;
}

/** A problem with the input of user creation, with a message fit for the command line. */
export class UserInputError extends Error {
  override readonly name = 'UserInputError';
}

const SCRYPT = { N: 16384, r: 8, p: 1, keyLength: 32 };
const MIN_PASSWORD_LENGTH = 10;

/**
 * scrypt on libuv's thread pool: a hash takes tens of milliseconds of CPU, and done synchronously it would stop every
 * other request (a flood of sign-ins would stall /mcp too).
 */
function scryptAsync(password: BinaryLike, salt: BinaryLike, keyLength: number, options: ScryptOptions) {
  return new Promise<Buffer>((resolve, reject) =>
    scrypt(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, SCRYPT.keyLength, SCRYPT);
  return [
    'scrypt',
    SCRYPT.N,
    SCRYPT.r,
    SCRYPT.p,
    salt.toString('base64url'),
    hash.toString('base64url'),
  ].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/** A hash of nothing, checked against when the email is unknown, so both answers take the same time. */
let dummyHash: Promise<string> | undefined;
const dummy = () => (dummyHash ??= hashPassword(randomBytes(16).toString('hex')));

export async function createUser(
  db: AppDb,
  input: { email?: string; password?: string; name?: string; company?: string; admin?: boolean },
): Promise<AppUser> {
  const email = input.email?.trim() ?? '';
  // Accounts are found by this key, computed here the same way for SQLite and PostgreSQL.
  const key = emailKey(email);
  if (key === undefined)
    throw new UserInputError(
      email.normalize('NFKC') !== email && emailKey(email.normalize('NFKC')) !== undefined
        ? `"${email}" has characters that Unicode normalisation changes (it would be compared as ` +
            `"${email.normalize('NFKC')}"): type the address with plain characters.`
        : `"${email}" is not a valid email address.`,
    );
  const password = input.password ?? '';
  if (!password) throw new UserInputError('A password is required (--password).');
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new UserInputError(`The password is too short: use at least ${MIN_PASSWORD_LENGTH} characters.`);
  }
  if (password.length > 1024)
    throw new UserInputError('The password is too long: use at most 1024 characters.');
  const name = input.name?.trim() || undefined;
  if (name && name.length > 200)
    throw new UserInputError('The name is too long: use at most 200 characters.');
  const passwordHash = await hashPassword(password);

  return db.transaction(async (tx) => {
    if (await tx.get('SELECT 1 AS taken FROM users WHERE email_key = ?', [key])) {
      throw new UserInputError(`A user with the email ${email} already exists.`);
    }
    const now = new Date().toISOString();
    const companyName = input.company?.trim() || `${name ?? email.split('@')[0]}'s company`;
    const companyId = await tx.insert(
      'INSERT INTO companies (name, email, created_at) VALUES (?, ?, ?) RETURNING id',
      [companyName, email, now],
    );
    const id = await tx.insert(
      'INSERT INTO users (company_id, email, email_key, name, password_hash, created_at, is_admin) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id',
      [companyId, email, key, name ?? null, passwordHash, now, input.admin ? 1 : 0],
    );
    await seedDemoData(tx, companyId);
    return { id: String(id), name, email, companyId };
  });
}

interface UserRow {
  id: number;
  email: string;
  name: string | null;
  company_id: number;
  password_hash: string;
}

/** The user with this email and password, or null; the same work is done whether or not the email exists. */
export async function authenticateUser(db: AppDb, email: string, password: string): Promise<AppUser | null> {
  // A malformed email (a control character, which PostgreSQL cannot even compare, or one normalisation changes)
  // matches nobody; the hash is still checked, so the answer takes as long as for a real account.
  const key = emailKey(email);
  if (key === undefined) {
    await verifyPassword(password, await dummy());
    return null;
  }
  const row = await db.get<UserRow>(
    'SELECT id, email, name, company_id, password_hash FROM users WHERE email_key = ?',
    [key],
  );
  const ok = await verifyPassword(password, row?.password_hash ?? (await dummy()));
  if (!row || !ok) return null;
  return {
    id: String(row.id),
    email: row.email,
    name: row.name ?? undefined,
    companyId: Number(row.company_id),
  };
}

/** The user with this id, or null. */
export async function findUser(db: AppDb, id: string): Promise<AppUser | null> {
  if (!/^\d{1,15}$/.test(id)) return null;
  const row = await db.get<UserRow>('SELECT id, email, name, company_id FROM users WHERE id = ?', [
    Number(id),
  ]);
  return row
    ? { id: String(row.id), email: row.email, name: row.name ?? undefined, companyId: Number(row.company_id) }
    : null;
}

/** Whether the user with this id is an administrator (npm run user:create -- --admin). */
export async function isAdmin(db: AppDb, id: string): Promise<boolean> {
  if (!/^\d{1,15}$/.test(id)) return false;
  const row = await db.get<{ is_admin: number }>('SELECT is_admin FROM users WHERE id = ?', [Number(id)]);
  return Number(row?.is_admin ?? 0) === 1;
}

/** The emails of the users with these ids, by id (for an administrator's list of every user's grants). */
export async function emailsOf(db: AppDb, ids: readonly string[]): Promise<Map<string, string>> {
  const emails = new Map<string, string>();
  for (const id of new Set(ids)) {
    const user = await findUser(db, id);
    if (user) emails.set(id, user.email);
  }
  return emails;
}

/**
 * The user with this email (compared by its key, as sign-in matches it), or null: how an enterprise IdP's ID-JAG or
 * an upstream provider names a user of the app (the library passes only an address its provider verified). A
 * malformed email, one normalisation changes, or none, matches nobody.
 */
export async function findUserByEmail(db: AppDb, email: unknown): Promise<AppUser | null> {
  const key = emailKey(email);
  if (key === undefined) return null;
  const row = await db.get<UserRow>('SELECT id, email, name, company_id FROM users WHERE email_key = ?', [
    key,
  ]);
  return row
    ? { id: String(row.id), email: row.email, name: row.name ?? undefined, companyId: Number(row.company_id) }
    : null;
}
