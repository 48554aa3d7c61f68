// A little realistic data for a new user's company, so that every tool answers with something meaningful.
import type { AppDb } from './db/database';
import { createInvoice, updateInvoice } from './services/invoices';
import { clients, products, prospects } from './services/records';

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

export async function seedDemoData(db: AppDb, companyId: number): Promise<void> {
  await db.run(
    'UPDATE companies SET vat_number = ?, address = ?, city = ?, country = ?, phone = ? WHERE id = ?',
    ['FR40303265045', '12 rue des Artisans', 'Lyon', 'FR', '+33 4 72 00 00 00', companyId],
  );
  const acme = await clients.create(db, companyId, {
    name: 'Acme Industries',
    email: 'billing@acme.example',
    address: '3 quai Perrache, Lyon',
    vat_number: 'FR12345678901',
  });
  const bistro = await clients.create(db, companyId, {
    name: 'Bistro du Port',
    email: 'contact@bistro.example',
    phone: '+33 4 91 00 00 00',
  });
  await clients.create(db, companyId, {
    name: 'Nordlicht GmbH',
    email: 'ap@nordlicht.example',
    address: 'Hafenstraße 5, Hamburg',
  });

  const consulting = await products.create(db, companyId, {
    name: 'Consulting (hour)',
    unit: 'hour',
    unit_price: 9500,
    vat_rate: 2000,
  });
  const audit = await products.create(db, companyId, {
    name: 'Website audit',
    description: 'Performance and accessibility review',
    unit_price: 120000,
    vat_rate: 2000,
  });
  const hosting = await products.create(db, companyId, {
    name: 'Hosting (month)',
    unit: 'month',
    unit_price: 2900,
    vat_rate: 2000,
  });
  await products.create(db, companyId, { name: 'Training handbook', unit_price: 3500, vat_rate: 550 });

  const paid = await createInvoice(db, companyId, {
    kind: 'invoice',
    client_id: acme.id,
    issue_date: daysAgo(40),
    due_date: daysAgo(10),
    lines: [
      { product_id: audit.id, quantity: 1 },
      { product_id: consulting.id, quantity: 6 },
    ],
  });
  await updateInvoice(db, companyId, paid.id, { status: 'paid' });
  const sent = await createInvoice(db, companyId, {
    kind: 'invoice',
    client_id: bistro.id,
    issue_date: daysAgo(5),
    due_date: daysAgo(-25),
    lines: [{ product_id: hosting.id, quantity: 3 }],
  });
  await updateInvoice(db, companyId, sent.id, { status: 'sent' });
  await createInvoice(db, companyId, {
    kind: 'quote',
    client_id: acme.id,
    issue_date: daysAgo(2),
    notes: 'Valid for 30 days.',
    lines: [
      { product_id: consulting.id, quantity: 20 },
      { description: 'Travel costs (flat fee)', quantity: 1, unit_price: 18000, vat_rate: 2000 },
    ],
  });

  const account = await db.insert(
    'INSERT INTO bank_accounts (company_id, name, iban, currency, balance) VALUES (?, ?, ?, ?, ?) RETURNING id',
    [companyId, 'Main business account', 'FR7630006000011234567890189', 'EUR', 1_845_230],
  );
  for (const [days, amount, counterparty, description] of [
    [9, 212_400, 'Acme Industries', `Payment ${paid.number}`],
    [12, -8_900, 'OVH SAS', 'Servers, monthly'],
    [15, -145_000, 'Loyer Bureaux Lyon', 'Office rent'],
    [20, -2_390, 'SNCF', 'Train Lyon-Paris'],
    [26, 96_000, 'Nordlicht GmbH', 'Payment INV-2025-0042'],
    [31, -31_250, 'URSSAF', 'Social contributions'],
  ] as const) {
    await db.run(
      'INSERT INTO bank_transactions (account_id, booked_on, amount, currency, counterparty, description) VALUES (?, ?, ?, ?, ?, ?)',
      [account, daysAgo(days), amount, 'EUR', counterparty, description],
    );
  }

  await prospects.create(db, companyId, {
    name: 'Claire Martin',
    organisation: 'Martin & Fils',
    email: 'claire@martin.example',
    status: 'qualified',
    source: 'referral',
    estimated_value: 450_000,
  });
  await prospects.create(db, companyId, {
    name: 'Jonas Weber',
    organisation: 'Weber Logistik',
    status: 'contacted',
    source: 'trade fair',
    estimated_value: 120_000,
  });
  await prospects.create(db, companyId, {
    name: 'Sofia Rossi',
    organisation: 'Rossi Design',
    status: 'won',
    source: 'website',
    estimated_value: 80_000,
  });
  await prospects.create(db, companyId, {
    name: 'Tom Baker',
    organisation: 'Baker Foods',
    status: 'lost',
    source: 'cold email',
    estimated_value: 60_000,
  });

  const template = (name: string, kind: string, lines: string[]) =>
    db.run('INSERT INTO document_templates (company_id, name, kind, body) VALUES (?, ?, ?, ?)', [
      companyId,
      name,
      kind,
      lines.join('\n'),
    ]);
  await template('Invoice letter', 'invoice', [
    '{{company_name}}',
    '',
    'To {{client_name}}',
    '{{kind}} {{number}} of {{issue_date}}, due {{due_date}}',
    '',
    '{{lines}}',
    '',
    'Subtotal: {{subtotal}}',
    'VAT: {{vat_total}}',
    'Total: {{total}}',
  ]);
  await template('Payment reminder', 'reminder', [
    'Dear {{client_name}},',
    '',
    'Our records show that {{kind}} {{number}} of {{total}}, due on {{due_date}}, is still open.',
    'We would be grateful for your payment.',
    '',
    '{{company_name}}',
  ]);
}
