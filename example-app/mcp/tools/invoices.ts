// Invoices and quotes (fakture:read, fakture:write).
import { z } from 'zod';
import {
  createInvoice,
  deleteInvoice,
  getInvoice,
  INVOICE_STATUSES,
  listInvoices,
  QUOTE_STATUSES,
  updateInvoice,
} from '../../services/invoices';
import { defineTool, id, isoDate, limit, minorUnits, offset, shortText, vatRate } from '../tool';

const line = z
  .object({
    product_id: id('product from the catalog')
      .optional()
      .describe('A catalog product: its name, price and VAT rate are used unless given here.'),
    description: shortText('What is sold on this line.', 500).optional(),
    quantity: z.number().positive().max(1_000_000).describe('Quantity, e.g. 3 or 1.5 (hours).'),
    unit_price: minorUnits('Price of one unit before VAT').optional(),
    vat_rate: vatRate.optional(),
  })
  .describe('One line; give a product_id, or a description and a unit_price.');
const lines = z.array(line).min(1).max(100).describe('The lines. Totals and VAT are computed by the server.');
const kind = z.enum(['invoice', 'quote']).describe('"invoice" or "quote".');
const status = z.enum([...new Set([...INVOICE_STATUSES, ...QUOTE_STATUSES])]);

export const invoiceTools = [
  defineTool({
    name: 'list_invoices',
    title: 'List invoices and quotes',
    description:
      'Lists invoices and quotes, newest first, with client, status and totals (minor units). Filter by kind, status or client.',
    scopes: ['fakture:read'],
    readOnly: true,
    input: {
      kind: kind.optional(),
      status: status.optional().describe('Only this status.'),
      client_id: id('client').optional(),
      limit,
      offset,
    },
    run: ({ db, companyId }, args) => listInvoices(db, companyId, args),
  }),
  defineTool({
    name: 'get_invoice',
    title: 'Get an invoice or quote',
    description: 'One invoice or quote with its lines, VAT and totals (minor units of its currency).',
    scopes: ['fakture:read'],
    readOnly: true,
    input: { invoice_id: id('invoice or quote') },
    run: ({ db, companyId }, args) => getInvoice(db, companyId, args.invoice_id),
  }),
  defineTool({
    name: 'create_invoice',
    title: 'Create an invoice or quote',
    description:
      'Creates a draft invoice or quote for a client. The server numbers it and computes line amounts, VAT and totals.',
    scopes: ['fakture:write', 'fakture:read'],
    readOnly: false,
    input: {
      kind: kind.default('invoice'),
      client_id: id('client'),
      issue_date: isoDate('Issue date (default today)').optional(),
      due_date: isoDate('Payment due date').optional(),
      notes: shortText('Free text printed on the document.', 2000).optional(),
      lines,
    },
    run: ({ db, companyId }, args) => createInvoice(db, companyId, args),
  }),
  defineTool({
    name: 'update_invoice',
    title: 'Update an invoice or quote',
    description:
      'Changes status, due date or notes. Statuses only move forward: an invoice goes from draft to sent, paid or ' +
      'cancelled, and from sent to paid or cancelled; a quote from draft to sent, accepted or declined, and from sent ' +
      'to accepted or declined; nothing goes back to draft. Client and lines can change only while it is a draft; ' +
      'totals are recomputed.',
    scopes: ['fakture:write', 'fakture:read'],
    readOnly: false,
    input: {
      invoice_id: id('invoice or quote'),
      status: status.optional(),
      client_id: id('client').optional(),
      due_date: isoDate('Payment due date').nullable().optional(),
      notes: shortText('Free text printed on the document.', 2000).nullable().optional(),
      lines: lines.optional(),
    },
    run: ({ db, companyId }, { invoice_id, ...update }) => updateInvoice(db, companyId, invoice_id, update),
  }),
  defineTool({
    name: 'delete_invoice',
    title: 'Delete a draft invoice or a quote',
    description:
      'Deletes a quote, or an invoice that is still a draft. A sent or paid invoice cannot be deleted: set its status to cancelled.',
    scopes: ['fakture:write'],
    readOnly: false,
    destructive: true,
    input: { invoice_id: id('invoice or quote') },
    run: ({ db, companyId }, args) => deleteInvoice(db, companyId, args.invoice_id),
  }),
];
