// Document templates and documents generated from a template and an invoice or quote.
import type { AppDb } from '../db/database';
import { getCompany } from './company';
import { notFound } from './errors';
import { getInvoice } from './invoices';
import { formatMoney } from './money';

export async function listTemplates(db: AppDb, companyId: number) {
  return {
    items: await db.all(
      'SELECT id, name, kind, body FROM document_templates WHERE company_id = ? ORDER BY id',
      [companyId],
    ),
  };
}

export async function listDocuments(db: AppDb, companyId: number, query: { limit: number; offset: number }) {
  const total = (await db.get<{ n: number }>(
    'SELECT CAST(count(*) AS INTEGER) AS n FROM documents WHERE company_id = ?',
    [companyId],
  ))!.n;
  const items = await db.all(
    'SELECT id, template_id, invoice_id, title, created_at FROM documents WHERE company_id = ? ORDER BY id DESC LIMIT ? OFFSET ?',
    [companyId, query.limit, query.offset],
  );
  return { total, items };
}

export async function getDocument(db: AppDb, companyId: number, id: number) {
  const row = await db.get(
    'SELECT id, template_id, invoice_id, title, content, created_at FROM documents WHERE id = ? AND company_id = ?',
    [id, companyId],
  );
  if (!row) throw notFound('document', id);
  return row;
}

/** Fills {{placeholders}} of a template with the invoice's and company's values; unknown ones stay visible. */
export async function generateDocument(
  db: AppDb,
  companyId: number,
  input: { template_id: number; invoice_id: number },
) {
  const template = await db.get<{ id: number; name: string; body: string }>(
    'SELECT id, name, body FROM document_templates WHERE id = ? AND company_id = ?',
    [input.template_id, companyId],
  );
  if (!template) throw notFound('document template', input.template_id);
  const invoice = await getInvoice(db, companyId, input.invoice_id);
  const company = await getCompany(db, companyId);
  const money = (value: unknown) => formatMoney(Number(value), invoice.currency);
  const values: Record<string, string> = {
    company_name: String(company.name),
    client_name: invoice.client_name,
    number: invoice.number,
    kind: invoice.kind,
    issue_date: invoice.issue_date,
    due_date: invoice.due_date ?? '',
    subtotal: money(invoice.subtotal),
    vat_total: money(invoice.vat_total),
    total: money(invoice.total),
    lines: invoice.lines
      .map(
        (line) =>
          `- ${line.description}: ${line.quantity} x ${money(line.unit_price)} = ${money(line.total)}`,
      )
      .join('\n'),
  };
  const content = template.body.replace(
    /\{\{\s*([a-z_]+)\s*\}\}/g,
    (whole, key: string) => values[key] ?? whole,
  );
  const id = await db.insert(
    'INSERT INTO documents (company_id, template_id, invoice_id, title, content, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id',
    [
      companyId,
      template.id,
      invoice.id,
      `${template.name} ${invoice.number}`,
      content,
      new Date().toISOString(),
    ],
  );
  return getDocument(db, companyId, id);
}
