// Clients (clients:*), products (products:*) and prospects (prospektor:*), which share one record shape.
import { z } from 'zod';
import { clients, products, prospects, prospectStatistics, PROSPECT_STATUSES } from '../../services/records';
import { defineTool, email, id, limit, minorUnits, offset, shortText, vatRate } from '../tool';

const search = z.string().trim().min(1).max(100).describe('Text to look for in names and emails.').optional();

const clientFields = {
  name: shortText('The client’s name (a company or a person).'),
  email: email.optional(),
  phone: shortText('Phone number.', 50).optional(),
  address: shortText('Postal address.', 500).optional(),
  vat_number: shortText('VAT identification number.', 50).optional(),
};

const productFields = {
  name: shortText('Product or service name.'),
  description: shortText('Longer description.', 2000).optional(),
  unit: shortText('Unit sold, e.g. "hour", "month", "unit".', 30).optional(),
  unit_price: minorUnits('Price of one unit before VAT'),
  vat_rate: vatRate,
};

const prospectFields = {
  name: shortText('The contact person.'),
  organisation: shortText('Their organisation.').optional(),
  email: email.optional(),
  phone: shortText('Phone number.', 50).optional(),
  status: z
    .enum(PROSPECT_STATUSES)
    .describe('Pipeline stage: new, contacted, qualified, won or lost.')
    .optional(),
  source: shortText('Where the lead came from.', 100).optional(),
  estimated_value: minorUnits('Estimated deal value').optional(),
  notes: shortText('Notes.', 2000).optional(),
};

const partial = <T extends Record<string, z.ZodTypeAny>>(shape: T) =>
  Object.fromEntries(Object.entries(shape).map(([key, schema]) => [key, schema.optional()])) as {
    [K in keyof T]: z.ZodOptional<T[K]>;
  };

export const clientTools = [
  defineTool({
    name: 'list_clients',
    title: 'List clients',
    description: 'Lists the company’s clients, optionally searching names and emails.',
    scopes: ['clients:read'],
    readOnly: true,
    input: { search, limit, offset },
    run: ({ db, companyId }, args) => clients.list(db, companyId, args),
  }),
  defineTool({
    name: 'get_client',
    title: 'Get a client',
    description: 'One client record.',
    scopes: ['clients:read'],
    readOnly: true,
    input: { client_id: id('client') },
    run: ({ db, companyId }, args) => clients.get(db, companyId, args.client_id),
  }),
  defineTool({
    name: 'create_client',
    title: 'Create a client',
    description: 'Adds a client to invoice.',
    scopes: ['clients:write', 'clients:read'],
    readOnly: false,
    input: clientFields,
    run: ({ db, companyId }, args) => clients.create(db, companyId, args),
  }),
  defineTool({
    name: 'update_client',
    title: 'Update a client',
    description: 'Changes the given fields of a client.',
    scopes: ['clients:write', 'clients:read'],
    readOnly: false,
    input: { client_id: id('client'), ...partial(clientFields) },
    run: ({ db, companyId }, { client_id, ...fields }) => clients.update(db, companyId, client_id, fields),
  }),
];

export const productTools = [
  defineTool({
    name: 'list_products',
    title: 'List products',
    description: 'Lists the product catalog with unit prices (minor units) and VAT rates (basis points).',
    scopes: ['products:read'],
    readOnly: true,
    input: { search, limit, offset },
    run: ({ db, companyId }, args) => products.list(db, companyId, args),
  }),
  defineTool({
    name: 'get_product',
    title: 'Get a product',
    description: 'One product of the catalog.',
    scopes: ['products:read'],
    readOnly: true,
    input: { product_id: id('product') },
    run: ({ db, companyId }, args) => products.get(db, companyId, args.product_id),
  }),
  defineTool({
    name: 'create_product',
    title: 'Create a product',
    description: 'Adds a product or service to the catalog, priced in the company currency.',
    scopes: ['products:write', 'products:read'],
    readOnly: false,
    input: productFields,
    run: ({ db, companyId }, args) => products.create(db, companyId, args),
  }),
  defineTool({
    name: 'update_product',
    title: 'Update a product',
    description: 'Changes the given fields of a product. Existing invoices keep their prices.',
    scopes: ['products:write', 'products:read'],
    readOnly: false,
    input: { product_id: id('product'), ...partial(productFields) },
    run: ({ db, companyId }, { product_id, ...fields }) => products.update(db, companyId, product_id, fields),
  }),
];

export const prospectTools = [
  defineTool({
    name: 'list_prospects',
    title: 'List prospects',
    description: 'Lists sales prospects, optionally by pipeline status or searching names.',
    scopes: ['prospektor:read'],
    readOnly: true,
    input: { status: prospectFields.status, search, limit, offset },
    run: ({ db, companyId }, { status, ...query }) =>
      prospects.list(db, companyId, { ...query, filters: { status } }),
  }),
  defineTool({
    name: 'get_prospect',
    title: 'Get a prospect',
    description: 'One prospect.',
    scopes: ['prospektor:read'],
    readOnly: true,
    input: { prospect_id: id('prospect') },
    run: ({ db, companyId }, args) => prospects.get(db, companyId, args.prospect_id),
  }),
  defineTool({
    name: 'get_prospect_statistics',
    title: 'Prospect statistics',
    description:
      'Counts and estimated values by pipeline status, the open pipeline value, and the won/closed conversion rate.',
    scopes: ['prospektor:read'],
    readOnly: true,
    input: {},
    run: ({ db, companyId }) => prospectStatistics(db, companyId),
  }),
  defineTool({
    name: 'create_prospect',
    title: 'Create a prospect',
    description: 'Adds a sales prospect (status "new" unless given).',
    scopes: ['prospektor:write', 'prospektor:read'],
    readOnly: false,
    input: prospectFields,
    run: ({ db, companyId }, args) => prospects.create(db, companyId, args),
  }),
  defineTool({
    name: 'update_prospect',
    title: 'Update a prospect',
    description: 'Changes the given fields of a prospect, e.g. moves it along the pipeline.',
    scopes: ['prospektor:write', 'prospektor:read'],
    readOnly: false,
    input: { prospect_id: id('prospect'), ...partial(prospectFields) },
    run: ({ db, companyId }, { prospect_id, ...fields }) =>
      prospects.update(db, companyId, prospect_id, fields),
  }),
];
