// One valid and one invalid call of every tool, against the demo company of a fresh app's first user.
export type Result = {
  isError?: boolean;
  structuredContent?: Record<string, any>;
  content: Array<{ text?: string }>;
};

// The demo company of the first user has known ids: clients 1-3, products 1-4, invoices 1 (paid), 2 (sent),
// 3 (quote), bank account 1 with transactions 1-6, prospects 1-4, templates 1-2.
export interface Case {
  tool: string;
  args: Record<string, unknown>;
  check: (data: Record<string, any>) => void;
  bad: Record<string, unknown>;
}

export const cases: Case[] = [
  {
    tool: 'list_invoices',
    args: { kind: 'invoice' },
    check: (d) => expect(d.items.map((i: any) => i.number)).toHaveLength(2),
    bad: { limit: 1000 },
  },
  {
    tool: 'get_invoice',
    args: { invoice_id: 1 },
    check: (d) =>
      expect(d).toMatchObject({
        number: expect.stringMatching(/^INV-/),
        status: 'paid',
        total: 212400,
        currency: 'EUR',
      }),
    bad: { invoice_id: 'one' },
  },
  {
    tool: 'create_invoice',
    args: {
      client_id: 2,
      lines: [
        { description: 'Workshop', quantity: 2, unit_price: 50000, vat_rate: 2000 },
        { product_id: 3, quantity: 1.5 },
      ],
    },
    // 2 x 500.00 + 1.5 x 29.00 = 1043.50 net; VAT 20 % = 200.00 + 8.70; the server computes every figure.
    check: (d) =>
      expect(d).toMatchObject({
        kind: 'invoice',
        status: 'draft',
        subtotal: 104350,
        vat_total: 20870,
        total: 125220,
        client_name: 'Bistro du Port',
      }),
    bad: { client_id: 2, lines: [] },
  },
  {
    tool: 'update_invoice',
    args: { invoice_id: 2, status: 'paid' },
    check: (d) => expect(d.status).toBe('paid'),
    bad: { invoice_id: 2, status: 'lost' },
  },
  {
    tool: 'delete_invoice',
    args: { invoice_id: 3 },
    check: (d) => expect(d).toMatchObject({ deleted: true, id: 3 }),
    bad: { invoice_id: -1 },
  },
  {
    tool: 'list_clients',
    args: { search: 'acme' },
    check: (d) => expect(d.items.map((c: any) => c.name)).toEqual(['Acme Industries']),
    bad: { search: 5 },
  },
  {
    tool: 'get_client',
    args: { client_id: 3 },
    check: (d) => expect(d.name).toBe('Nordlicht GmbH'),
    bad: {},
  },
  {
    tool: 'create_client',
    args: { name: 'Zeta SARL', email: 'zeta@example.com' },
    check: (d) => expect(d).toMatchObject({ id: 4, name: 'Zeta SARL' }),
    bad: { name: 'X', email: 'not-an-email' },
  },
  {
    tool: 'update_client',
    args: { client_id: 1, phone: '+33 1 00 00 00 00' },
    check: (d) => expect(d.phone).toBe('+33 1 00 00 00 00'),
    bad: { client_id: 1, name: '' },
  },
  { tool: 'list_products', args: {}, check: (d) => expect(d.total).toBe(4), bad: { offset: -1 } },
  {
    tool: 'get_product',
    args: { product_id: 1 },
    check: (d) =>
      expect(d).toMatchObject({
        name: 'Consulting (hour)',
        unit_price: 9500,
        vat_rate: 2000,
        currency: 'EUR',
      }),
    bad: { product_id: 1.5 },
  },
  {
    tool: 'create_product',
    args: { name: 'Support plan', unit_price: 4900, vat_rate: 2000 },
    check: (d) => expect(d).toMatchObject({ currency: 'EUR', unit_price: 4900 }),
    bad: { name: 'Free lunch', unit_price: -1, vat_rate: 2000 },
  },
  {
    tool: 'update_product',
    args: { product_id: 2, unit_price: 130000 },
    check: (d) => expect(d.unit_price).toBe(130000),
    bad: { product_id: 2, vat_rate: 20000 },
  },
  {
    tool: 'get_company',
    args: {},
    check: (d) => expect(d).toMatchObject({ city: 'Lyon', currency: 'EUR' }),
    bad: { unexpected: { nested: true } },
  },
  {
    tool: 'update_company',
    args: { city: 'Marseille', country: 'FR' },
    check: (d) => expect(d.city).toBe('Marseille'),
    bad: { country: 'France' },
  },
  {
    tool: 'list_bank_accounts',
    args: {},
    check: (d) =>
      expect(d.items[0]).toMatchObject({ iban: expect.stringMatching(/^FR76/), balance: 1845230 }),
    bad: { unexpected: [1] },
  },
  {
    tool: 'get_bank_account',
    args: { account_id: 1 },
    check: (d) => expect(d.currency).toBe('EUR'),
    bad: { account_id: 0 },
  },
  {
    tool: 'list_bank_transactions',
    args: { account_id: 1, limit: 3 },
    check: (d) => expect([d.total, d.items.length]).toEqual([6, 3]),
    bad: { account_id: 1, from: '2026-13-45' },
  },
  {
    tool: 'get_bank_transaction',
    args: { transaction_id: 2 },
    check: (d) => expect(d.amount).toBe(-8900),
    bad: { transaction_id: null },
  },
  {
    tool: 'get_profile',
    args: {},
    check: (d) => expect(d).toMatchObject({ email: 'owner@example.com', name: 'Owner' }),
    bad: { unexpected: 1 },
  },
  {
    tool: 'update_profile',
    args: { name: 'Owner Renamed' },
    check: (d) => expect(d.name).toBe('Owner Renamed'),
    bad: { name: '   ' },
  },
  {
    tool: 'list_prospects',
    args: { status: 'qualified' },
    check: (d) => expect(d.items.map((p: any) => p.name)).toEqual(['Claire Martin']),
    bad: { status: 'cold' },
  },
  {
    tool: 'get_prospect',
    args: { prospect_id: 2 },
    check: (d) => expect(d.organisation).toBe('Weber Logistik'),
    bad: { prospect_id: 'two' },
  },
  {
    tool: 'get_prospect_statistics',
    args: {},
    check: (d) =>
      expect(d).toMatchObject({ total: 4, open: 2, conversion_rate: 0.5, open_pipeline_value: 570000 }),
    bad: { unexpected: 'x' },
  },
  {
    tool: 'create_prospect',
    args: { name: 'Lea Park', estimated_value: 25000 },
    check: (d) => expect(d).toMatchObject({ status: 'new', currency: 'EUR' }),
    bad: { name: 'Lea', status: 'hot' },
  },
  {
    tool: 'update_prospect',
    args: { prospect_id: 1, status: 'won' },
    check: (d) => expect(d.status).toBe('won'),
    bad: { prospect_id: 1, estimated_value: 'lots' },
  },
  {
    tool: 'list_document_templates',
    args: {},
    check: (d) => expect(d.items.map((t: any) => t.name)).toEqual(['Invoice letter', 'Payment reminder']),
    bad: { unexpected: 1 },
  },
  {
    tool: 'list_documents',
    args: {},
    check: (d) => expect(d).toEqual({ total: 0, items: [] }),
    bad: { limit: 0 },
  },
  { tool: 'get_document', args: { document_id: 1 }, check: () => undefined, bad: { document_id: 'latest' } },
  {
    // Through the document renderer, with a token exchanged for it (example-app/renderer/).
    tool: 'render_document',
    args: { document_id: 1 },
    check: (d) =>
      expect(d).toMatchObject({ id: 1, format: 'text/html', html: expect.stringContaining('<pre>') }),
    bad: { document_id: 0 },
  },
  {
    tool: 'generate_document',
    args: { template_id: 2, invoice_id: 2 },
    check: (d) =>
      expect(d.content).toMatch(/Dear Bistro du Port,[\s\S]*invoice INV-\d{4}-0002 of 104\.40 EUR/),
    bad: { template_id: 2 },
  },
];
