// Every tool of the reference app: success, bad input, and a missing scope (refused with 403, nothing changed).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TOOLS_BY_NAME } from '../../example-app/mcp/tools';
import { createUser } from '../../example-app/users';
import { ALL_SCOPES, snapshot, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { cases, type Result } from './tool-cases';

let app: RunningExampleApp;
let full: Client;
beforeEach(async () => {
  app = await startExampleApp();
  full = await app.connect(ALL_SCOPES);
});
afterEach(() => app.stop());

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<Result>;

test('the table covers every tool, and every tool declares scopes of the catalogue', () => {
  expect(cases.map((c) => c.tool).sort()).toEqual([...TOOLS_BY_NAME.keys()].sort());
  for (const tool of TOOLS_BY_NAME.values()) {
    expect(tool.scopes.length).toBeGreaterThan(0);
    for (const scope of tool.scopes) expect(ALL_SCOPES).toContain(scope);
  }
  expect(
    [...TOOLS_BY_NAME.values()]
      .filter((tool) => tool.scopes.includes('bridge:read'))
      .every((tool) => tool.readOnly),
  ).toBe(true);
});

// A write scope must never be a way to read: every write tool that answers with records needs their read scope.
test.each([...TOOLS_BY_NAME.values()].filter((tool) => !tool.readOnly && tool.name !== 'delete_invoice'))(
  '$name answers with records, so it needs their read scope as well',
  (tool) => {
    const area = tool.scopes[0]!.split(':')[0];
    expect(tool.scopes).toContain(`${area}:read`);
  },
);

test('generate_document needs fakture:read: a dokument:write token cannot read invoices through it', async () => {
  const documentsOnly = await app.connect(['dokument:write', 'dokument:read']);
  // Listed (calling it is how the client learns it may ask for more), but refused.
  expect((await documentsOnly.listTools()).tools.map((tool) => tool.name)).toContain('generate_document');
  await expect(
    call(documentsOnly, 'generate_document', { template_id: 1, invoice_id: 1 }),
  ).rejects.toMatchObject({
    code: 403,
    message: expect.stringContaining('needs the scopes dokument:write dokument:read fakture:read'),
  });
  const writeOnly = await app.connect(['fakture:write']);
  await expect(call(writeOnly, 'update_invoice', { invoice_id: 1 })).rejects.toMatchObject({ code: 403 });
});

describe.each(cases)('$tool', ({ tool, args, check, bad }) => {
  const scope = TOOLS_BY_NAME.get(tool)!.scopes[0]!;

  test('succeeds with valid input', async () => {
    if (tool === 'get_document' || tool === 'render_document')
      await call(full, 'generate_document', { template_id: 1, invoice_id: 1 });
    const result = await call(full, tool, args);
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(result.content[0]!.text!)).toEqual(result.structuredContent);
    check(result.structuredContent!);
  });

  test('refuses bad input with an error the model can read, and changes nothing', async () => {
    const before = await snapshot(app);
    const result = await call(full, tool, bad);
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/\w{8,}/);
    expect(await snapshot(app)).toBe(before);
  });

  test(`without ${scope}: listed, and a call is 403 insufficient_scope naming it, changing nothing`, async () => {
    const limited = await app.connect(ALL_SCOPES.filter((other) => other !== scope));
    const listed = (await limited.listTools()).tools.map((listedTool) => listedTool.name);
    expect(listed).toContain(tool);
    const before = await snapshot(app);
    await expect(call(limited, tool, args)).rejects.toMatchObject({
      code: 403,
      message: expect.stringContaining(`needs the scopes ${TOOLS_BY_NAME.get(tool)!.scopes.join(' ')}`),
    });
    expect(await snapshot(app)).toBe(before);
  });
});

describe('company isolation', () => {
  test('another company’s records are invisible and untouchable', async () => {
    const stranger = await createUser(app.db, {
      email: 'stranger@example.com',
      password: 'another long password',
    });
    const client = await app.connect(ALL_SCOPES, stranger);
    const own = (await call(client, 'list_invoices', {})).structuredContent!;
    expect(own.items.every((invoice: any) => invoice.id > 3)).toBe(true);
    for (const [tool, args] of [
      ['get_invoice', { invoice_id: 1 }],
      ['update_client', { client_id: 1, name: 'Hijacked' }],
      ['delete_invoice', { invoice_id: 3 }],
      ['get_bank_transaction', { transaction_id: 1 }],
      ['generate_document', { template_id: 1, invoice_id: 1 }],
      // The renderer reads the exchanged token's user, never a document id's company.
      ['render_document', { document_id: 1 }],
    ] as const) {
      const result = await call(client, tool, args);
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toMatch(/^No .* with id \d+ in your company\.$/);
    }
    expect((await call(full, 'get_client', { client_id: 1 })).structuredContent!.name).toBe(
      'Acme Industries',
    );
  });
});

describe('business rules', () => {
  // The attack: a sent (or paid) invoice set back to draft could then be deleted and leave the books.
  test('a sent invoice cannot be set back to draft, so it can never be deleted', async () => {
    const before = await snapshot(app);
    const back = await call(full, 'update_invoice', { invoice_id: 2, status: 'draft' });
    expect(back.isError).toBe(true);
    expect(back.content[0]!.text).toBe(
      'This invoice is sent, which cannot become draft: it can become paid or cancelled.',
    );
    expect((await call(full, 'delete_invoice', { invoice_id: 2 })).isError).toBe(true);
    expect(await snapshot(app)).toBe(before);
  });

  test.each([
    ['invoice', 'draft', 'sent', true],
    ['invoice', 'draft', 'paid', true],
    ['invoice', 'draft', 'cancelled', true],
    ['invoice', 'sent', 'paid', true],
    ['invoice', 'sent', 'cancelled', true],
    ['invoice', 'sent', 'draft', false],
    ['invoice', 'paid', 'draft', false],
    ['invoice', 'paid', 'sent', false],
    ['invoice', 'paid', 'cancelled', false],
    ['invoice', 'cancelled', 'draft', false],
    ['invoice', 'cancelled', 'sent', false],
    ['quote', 'draft', 'sent', true],
    ['quote', 'sent', 'accepted', true],
    ['quote', 'sent', 'declined', true],
    ['quote', 'sent', 'draft', false],
    ['quote', 'accepted', 'declined', false],
    ['quote', 'declined', 'sent', false],
  ])('a %s that is %s may become %s: %s', async (kind, from, to, allowed) => {
    const created = (
      await call(full, 'create_invoice', {
        kind,
        client_id: 1,
        lines: [{ description: 'Work', quantity: 1, unit_price: 1000, vat_rate: 0 }],
      })
    ).structuredContent!;
    const path: Record<string, string[]> = {
      draft: [],
      sent: ['sent'],
      paid: ['paid'],
      cancelled: ['cancelled'],
      accepted: ['sent', 'accepted'],
      declined: ['sent', 'declined'],
    };
    for (const step of path[from]!) {
      expect(
        (await call(full, 'update_invoice', { invoice_id: created.id, status: step })).isError,
      ).toBeFalsy();
    }
    const result = await call(full, 'update_invoice', { invoice_id: created.id, status: to });
    expect(Boolean(result.isError)).toBe(!allowed);
    if (!allowed)
      expect(result.content[0]!.text).toMatch(new RegExp(`is ${from}, which cannot become ${to}`));
  });

  test.each([
    ['a sent invoice cannot be deleted', 'delete_invoice', { invoice_id: 2 }, /only drafts can be deleted/],
    [
      'a paid invoice keeps its lines',
      'update_invoice',
      { invoice_id: 1, lines: [{ description: 'x', quantity: 1, unit_price: 1 }] },
      /Only a draft/,
    ],
    [
      'an invoice cannot become "accepted"',
      'update_invoice',
      { invoice_id: 1, status: 'accepted' },
      /status is one of/,
    ],
    [
      'a line needs a price',
      'create_invoice',
      { client_id: 1, lines: [{ description: 'Free?', quantity: 1 }] },
      /needs a unit_price/,
    ],
    [
      'an unknown client',
      'create_invoice',
      { client_id: 99, lines: [{ product_id: 1, quantity: 1 }] },
      /No client with id 99/,
    ],
    [
      'a due date before the issue date',
      'create_invoice',
      {
        client_id: 1,
        issue_date: '2026-05-10',
        due_date: '2026-05-01',
        lines: [{ product_id: 1, quantity: 1 }],
      },
      /due_date is before/,
    ],
    ['an empty update', 'update_client', { client_id: 1 }, /Nothing to update/],
  ])('%s', async (_name, tool, args, message) => {
    const result = await call(full, tool, args);
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(message);
  });

  test('invoice numbers follow each other per company and kind', async () => {
    const first = (
      await call(full, 'create_invoice', {
        client_id: 1,
        issue_date: '2026-03-01',
        lines: [{ product_id: 1, quantity: 1 }],
      })
    ).structuredContent!;
    const second = (
      await call(full, 'create_invoice', {
        client_id: 1,
        issue_date: '2026-03-02',
        lines: [{ product_id: 1, quantity: 1 }],
      })
    ).structuredContent!;
    const quote = (
      await call(full, 'create_invoice', {
        kind: 'quote',
        client_id: 1,
        issue_date: '2026-03-02',
        lines: [{ product_id: 1, quantity: 1 }],
      })
    ).structuredContent!;
    expect([first.number, second.number, quote.number]).toEqual([
      'INV-2026-0003',
      'INV-2026-0004',
      'QUO-2026-0002',
    ]);
  });
});
