// Invoices and quotes: listing, reading, creating with server-computed totals, updating, deleting drafts.
import type { AppDb } from '../db/database';
import { notFound, ServiceError } from './errors';
import { documentTotals, lineAmounts } from './money';

export type InvoiceKind = 'invoice' | 'quote';
export const INVOICE_STATUSES = ['draft', 'sent', 'paid', 'cancelled'] as const;
export const QUOTE_STATUSES = ['draft', 'sent', 'accepted', 'declined'] as const;

/**
 * The status each status may move to. Nothing goes back to draft (a sent invoice set back to draft could then be
 * deleted, and leave the books); paid, cancelled, accepted and declined are final.
 */
const STATUS_TRANSITIONS: Readonly<Record<'invoice' | 'quote', Readonly<Record<string, readonly string[]>>>> =
  {
    invoice: { draft: ['sent', 'paid', 'cancelled'], sent: ['paid', 'cancelled'], paid: [], cancelled: [] },
    quote: {
      draft: ['sent', 'accepted', 'declined'],
      sent: ['accepted', 'declined'],
      accepted: [],
      declined: [],
    },
  };

interface LineInput {
  description?: string;
  product_id?: number;
  quantity: number;
  unit_price?: number;
  vat_rate?: number;
}

export interface InvoiceInput {
  kind: InvoiceKind;
  client_id: number;
  issue_date?: string;
  due_date?: string;
  notes?: string;
  lines: LineInput[];
}

export interface InvoiceUpdate {
  status?: string;
  client_id?: number;
  due_date?: string | null;
  notes?: string | null;
  lines?: LineInput[];
}

/** An invoice or quote as the tools return it: amounts in minor units of `currency`. */
export interface Invoice {
  id: number;
  kind: InvoiceKind;
  number: string;
  client_id: number;
  client_name: string;
  status: string;
  issue_date: string;
  due_date: string | null;
  currency: string;
  subtotal: number;
  vat_total: number;
  total: number;
  notes: string | null;
  lines: Array<
    Record<string, unknown> & { description: string; quantity: number; unit_price: number; total: number }
  >;
}
const today = () => new Date().toISOString().slice(0, 10);

export async function listInvoices(
  db: AppDb,
  companyId: number,
  filter: { kind?: InvoiceKind; status?: string; client_id?: number; limit: number; offset: number },
) {
  const where = ['i.company_id = ?'];
  const params: unknown[] = [companyId];
  if (filter.kind) where.push('i.kind = ?') && params.push(filter.kind);
  if (filter.status) where.push('i.status = ?') && params.push(filter.status);
  if (filter.client_id) where.push('i.client_id = ?') && params.push(filter.client_id);
  const clause = where.join(' AND ');
  const total = (await db.get<{ n: number }>(
    `SELECT CAST(count(*) AS INTEGER) AS n FROM invoices i WHERE ${clause}`,
    params,
  ))!.n;
  const items = await db.all(
    `SELECT i.id, i.kind, i.number, i.client_id, c.name AS client_name, i.status, i.issue_date, i.due_date, i.currency,
            i.subtotal, i.vat_total, i.total
       FROM invoices i JOIN clients c ON c.id = i.client_id
      WHERE ${clause} ORDER BY i.issue_date DESC, i.id DESC LIMIT ? OFFSET ?`,
    [...params, filter.limit, filter.offset],
  );
  return { total, items };
}

export async function getInvoice(db: AppDb, companyId: number, id: number): Promise<Invoice> {
  const invoice = await db.get(
    `SELECT i.id, i.kind, i.number, i.client_id, c.name AS client_name, i.status, i.issue_date, i.due_date, i.currency,
            i.subtotal, i.vat_total, i.total, i.notes, i.created_at, i.updated_at
       FROM invoices i JOIN clients c ON c.id = i.client_id WHERE i.id = ? AND i.company_id = ?`,
    [id, companyId],
  );
  if (!invoice) throw notFound('invoice or quote', id);
  const lines = await db.all(
    `SELECT position, product_id, description, quantity, unit_price, vat_rate, net, vat, total
       FROM invoice_lines WHERE invoice_id = ? ORDER BY position`,
    [id],
  );
  return { ...invoice, lines } as Invoice;
}

async function companyCurrency(db: AppDb, companyId: number): Promise<string> {
  return (await db.get<{ currency: string }>('SELECT currency FROM companies WHERE id = ?', [companyId]))!
    .currency;
}

async function requireClient(db: AppDb, companyId: number, clientId: number): Promise<void> {
  if (
    !(await db.get('SELECT 1 AS found FROM clients WHERE id = ? AND company_id = ?', [clientId, companyId]))
  ) {
    throw notFound('client', clientId);
  }
}

interface BuiltLine {
  position: number;
  product_id: number | null;
  description: string;
  quantity: number;
  unit_price: number;
  vat_rate: number;
  net: number;
  vat: number;
  total: number;
}

/** Resolves each line against the catalogue and computes its amounts. */
async function buildLines(
  db: AppDb,
  companyId: number,
  currency: string,
  lines: LineInput[],
): Promise<BuiltLine[]> {
  if (lines.length === 0) throw new ServiceError('invalid', 'A document needs at least one line.');
  const built: BuiltLine[] = [];
  for (const [index, line] of lines.entries()) {
    let { description, unit_price: unitPrice, vat_rate: vatRate } = line;
    if (line.product_id !== undefined) {
      const product = await db.get<{ name: string; unit_price: number; vat_rate: number; currency: string }>(
        'SELECT name, unit_price, vat_rate, currency FROM products WHERE id = ? AND company_id = ?',
        [line.product_id, companyId],
      );
      if (!product) throw notFound('product', line.product_id);
      if (product.currency !== currency) {
        throw new ServiceError(
          'invalid',
          `Product ${line.product_id} is priced in ${product.currency}, the document in ${currency}.`,
        );
      }
      description ??= product.name;
      unitPrice ??= product.unit_price;
      vatRate ??= product.vat_rate;
    }
    if (!description)
      throw new ServiceError('invalid', `Line ${index + 1} needs a description or a product_id.`);
    if (unitPrice === undefined)
      throw new ServiceError('invalid', `Line ${index + 1} needs a unit_price or a product_id.`);
    const rate = vatRate ?? 2000;
    built.push({
      position: index + 1,
      product_id: line.product_id ?? null,
      description,
      quantity: line.quantity,
      unit_price: unitPrice,
      vat_rate: rate,
      ...lineAmounts(line.quantity, unitPrice, rate),
    });
  }
  return built;
}

async function writeLines(db: AppDb, invoiceId: number, lines: BuiltLine[]): Promise<void> {
  await db.run('DELETE FROM invoice_lines WHERE invoice_id = ?', [invoiceId]);
  for (const line of lines) {
    await db.run(
      `INSERT INTO invoice_lines (invoice_id, position, product_id, description, quantity, unit_price, vat_rate, net, vat, total)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        invoiceId,
        line.position,
        line.product_id,
        line.description,
        line.quantity,
        line.unit_price,
        line.vat_rate,
        line.net,
        line.vat,
        line.total,
      ],
    );
  }
}

async function nextNumber(
  db: AppDb,
  companyId: number,
  kind: InvoiceKind,
  issueDate: string,
): Promise<string> {
  const prefix = `${kind === 'invoice' ? 'INV' : 'QUO'}-${issueDate.slice(0, 4)}-`;
  const last = await db.get<{ number: string }>(
    'SELECT number FROM invoices WHERE company_id = ? AND number LIKE ? ORDER BY number DESC LIMIT 1',
    [companyId, `${prefix}%`],
  );
  const next = last ? Number(last.number.slice(prefix.length)) + 1 : 1;
  return `${prefix}${String(next).padStart(4, '0')}`;
}

export function createInvoice(db: AppDb, companyId: number, input: InvoiceInput): Promise<Invoice> {
  return db.transaction(async (tx) => {
    // Serialises numbering per company: a row lock on PostgreSQL, already exclusive on SQLite (BEGIN IMMEDIATE).
    await tx.run('UPDATE companies SET id = id WHERE id = ?', [companyId]);
    await requireClient(tx, companyId, input.client_id);
    const currency = await companyCurrency(tx, companyId);
    const lines = await buildLines(tx, companyId, currency, input.lines);
    const issueDate = input.issue_date ?? today();
    if (input.due_date && input.due_date < issueDate)
      throw new ServiceError('invalid', 'due_date is before issue_date.');
    const totals = documentTotals(lines);
    const now = new Date().toISOString();
    const id = await tx.insert(
      `INSERT INTO invoices (company_id, kind, number, client_id, status, issue_date, due_date, currency, subtotal, vat_total,
         total, notes, created_at, updated_at) VALUES (?, ?, ?, ?, 'draft', ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      [
        companyId,
        input.kind,
        await nextNumber(tx, companyId, input.kind, issueDate),
        input.client_id,
        issueDate,
        input.due_date ?? null,
        currency,
        totals.subtotal,
        totals.vat_total,
        totals.total,
        input.notes ?? null,
        now,
        now,
      ],
    );
    await writeLines(tx, id, lines);
    return getInvoice(tx, companyId, id);
  });
}

export function updateInvoice(
  db: AppDb,
  companyId: number,
  id: number,
  update: InvoiceUpdate,
): Promise<Invoice> {
  return db.transaction(async (tx) => {
    const current = await getInvoice(tx, companyId, id);
    const statuses: readonly string[] = current.kind === 'invoice' ? INVOICE_STATUSES : QUOTE_STATUSES;
    if (update.status !== undefined && !statuses.includes(update.status)) {
      throw new ServiceError('invalid', `A ${current.kind}'s status is one of ${statuses.join(', ')}.`);
    }
    const allowed = STATUS_TRANSITIONS[current.kind][current.status] ?? [];
    if (update.status !== undefined && update.status !== current.status && !allowed.includes(update.status)) {
      throw new ServiceError(
        'conflict',
        `This ${current.kind} is ${current.status}, which cannot become ${update.status}: ` +
          (allowed.length ? `it can become ${allowed.join(' or ')}.` : `${current.status} is final.`),
      );
    }
    if ((update.lines || update.client_id !== undefined) && current.status !== 'draft') {
      throw new ServiceError(
        'conflict',
        `Only a draft can change its client or lines; this ${current.kind} is ${current.status}.`,
      );
    }
    if (update.client_id !== undefined) await requireClient(tx, companyId, update.client_id);
    if (update.due_date && update.due_date < current.issue_date)
      throw new ServiceError('invalid', 'due_date is before issue_date.');
    const sets: string[] = [];
    const params: unknown[] = [];
    const set = (column: string, value: unknown) => sets.push(`${column} = ?`) && params.push(value);
    if (update.status !== undefined) set('status', update.status);
    if (update.client_id !== undefined) set('client_id', update.client_id);
    if (update.due_date !== undefined) set('due_date', update.due_date);
    if (update.notes !== undefined) set('notes', update.notes);
    if (update.lines) {
      const lines = await buildLines(tx, companyId, current.currency, update.lines);
      await writeLines(tx, id, lines);
      const totals = documentTotals(lines);
      set('subtotal', totals.subtotal);
      set('vat_total', totals.vat_total);
      set('total', totals.total);
    }
    if (sets.length === 0) throw new ServiceError('invalid', 'Nothing to update: give at least one field.');
    set('updated_at', new Date().toISOString());
    await tx.run(`UPDATE invoices SET ${sets.join(', ')} WHERE id = ? AND company_id = ?`, [
      ...params,
      id,
      companyId,
    ]);
    return getInvoice(tx, companyId, id);
  });
}

export function deleteInvoice(db: AppDb, companyId: number, id: number) {
  return db.transaction(async (tx) => {
    const current = await getInvoice(tx, companyId, id);
    // An invoice that was sent is part of the books: cancel it instead of erasing it.
    if (current.kind === 'invoice' && current.status !== 'draft') {
      throw new ServiceError(
        'conflict',
        `Invoice ${current.number} is ${current.status}; only drafts can be deleted. Set its status to cancelled instead.`,
      );
    }
    await tx.run('DELETE FROM invoices WHERE id = ? AND company_id = ?', [id, companyId]);
    return { deleted: true, id, number: current.number };
  });
}
