// The list/get/create/update shape that clients, products and prospects share: one implementation, always scoped
// to the caller's company. Table and column names are constants of this code, never input.
import type { AppDb } from '../db/database';
import { notFound, ServiceError } from './errors';

export interface RecordTable {
  table: string;
  /** What one row is called in messages ("client"). */
  noun: string;
  /** The columns a caller may write. */
  writable: readonly string[];
  /** Columns a free-text search looks in. */
  searchable: readonly string[];
  /** Columns a list may filter on by exact value. */
  filterable?: readonly string[];
  /** Values every new row gets unless given (currency, status). */
  defaults?: (db: AppDb, companyId: number) => Promise<Record<string, unknown>>;
}

interface ListQuery {
  search?: string;
  limit: number;
  offset: number;
  filters?: Record<string, unknown>;
}

type StoredRecord = Record<string, unknown> & { id: number };

function recordService({ table, noun, writable, searchable, filterable = [], defaults }: RecordTable) {
  const get = async (db: AppDb, companyId: number, id: number): Promise<StoredRecord> => {
    const row = await db.get<Record<string, unknown>>(
      `SELECT * FROM ${table} WHERE id = ? AND company_id = ?`,
      [id, companyId],
    );
    if (!row) throw notFound(noun, id);
    const { company_id: _company, ...rest } = row;
    return rest as StoredRecord;
  };

  return {
    async list(db: AppDb, companyId: number, query: ListQuery) {
      const where = ['company_id = ?'];
      const params: unknown[] = [companyId];
      if (query.search) {
        // lower() on both sides: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
        where.push(
          `(${searchable.map((column) => `lower(${column}) LIKE lower(?) ESCAPE '\\'`).join(' OR ')})`,
        );
        const pattern = `%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        params.push(...searchable.map(() => pattern));
      }
      for (const [column, value] of Object.entries(query.filters ?? {})) {
        if (value === undefined || !filterable.includes(column)) continue;
        where.push(`${column} = ?`);
        params.push(value);
      }
      const clause = where.join(' AND ');
      const total = (await db.get<{ n: number }>(
        `SELECT CAST(count(*) AS INTEGER) AS n FROM ${table} WHERE ${clause}`,
        params,
      ))!.n;
      const columns = ['id', ...writable, 'created_at', 'updated_at'].join(', ');
      const items = await db.all(
        `SELECT ${columns} FROM ${table} WHERE ${clause} ORDER BY id LIMIT ? OFFSET ?`,
        [...params, query.limit, query.offset],
      );
      return { total, items };
    },

    get,

    async create(db: AppDb, companyId: number, fields: Record<string, unknown>): Promise<StoredRecord> {
      const now = new Date().toISOString();
      const row: Record<string, unknown> = {
        ...(await defaults?.(db, companyId)),
        ...pick(fields, writable),
        company_id: companyId,
        created_at: now,
        updated_at: now,
      };
      const columns = Object.keys(row);
      const id = await db.insert(
        `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) RETURNING id`,
        Object.values(row),
      );
      return get(db, companyId, id);
    },

    async update(
      db: AppDb,
      companyId: number,
      id: number,
      fields: Record<string, unknown>,
    ): Promise<StoredRecord> {
      const changes = pick(fields, writable);
      if (Object.keys(changes).length === 0)
        throw new ServiceError('invalid', 'Nothing to update: give at least one field.');
      await get(db, companyId, id);
      const sets = Object.keys(changes).map((column) => `${column} = ?`);
      await db.run(`UPDATE ${table} SET ${sets.join(', ')}, updated_at = ? WHERE id = ? AND company_id = ?`, [
        ...Object.values(changes),
        new Date().toISOString(),
        id,
        companyId,
      ]);
      return get(db, companyId, id);
    },
  };
}

function pick(fields: Record<string, unknown>, allowed: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).filter(([key, value]) => allowed.includes(key) && value !== undefined),
  );
}

const companyCurrency = async (db: AppDb, companyId: number) =>
  (await db.get<{ currency: string }>('SELECT currency FROM companies WHERE id = ?', [companyId]))!.currency;

export const clients = recordService({
  table: 'clients',
  noun: 'client',
  writable: ['name', 'email', 'phone', 'address', 'vat_number'],
  searchable: ['name', 'email'],
});

export const products = recordService({
  table: 'products',
  noun: 'product',
  writable: ['name', 'description', 'unit', 'unit_price', 'vat_rate'],
  searchable: ['name', 'description'],
  defaults: async (db, companyId) => ({ currency: await companyCurrency(db, companyId) }),
});

export const PROSPECT_STATUSES = ['new', 'contacted', 'qualified', 'won', 'lost'] as const;

export const prospects = recordService({
  table: 'prospects',
  noun: 'prospect',
  writable: ['name', 'organisation', 'email', 'phone', 'status', 'source', 'estimated_value', 'notes'],
  searchable: ['name', 'organisation', 'email'],
  filterable: ['status'],
  defaults: async (db, companyId) => ({ status: 'new', currency: await companyCurrency(db, companyId) }),
});

/** Prospects by status, with their count and estimated value, and the conversion rate of closed ones. */
export async function prospectStatistics(db: AppDb, companyId: number) {
  const rows = await db.all<{ status: string; count: number; estimated_value: number }>(
    `SELECT status, CAST(count(*) AS INTEGER) AS count, CAST(coalesce(sum(estimated_value), 0) AS BIGINT) AS estimated_value
       FROM prospects WHERE company_id = ? GROUP BY status`,
    [companyId],
  );
  const byStatus = Object.fromEntries(
    PROSPECT_STATUSES.map((status) => [status, { count: 0, estimated_value: 0 }]),
  );
  for (const row of rows)
    byStatus[row.status] = { count: Number(row.count), estimated_value: Number(row.estimated_value) };
  const won = byStatus.won!.count;
  const closed = won + byStatus.lost!.count;
  const open = byStatus.new!.count + byStatus.contacted!.count + byStatus.qualified!.count;
  return {
    currency: await companyCurrency(db, companyId),
    total: rows.reduce((sum, row) => sum + Number(row.count), 0),
    by_status: byStatus,
    open_pipeline_value:
      byStatus.new!.estimated_value +
      byStatus.contacted!.estimated_value +
      byStatus.qualified!.estimated_value,
    open,
    conversion_rate: closed === 0 ? null : Math.round((won / closed) * 1000) / 1000,
  };
}
