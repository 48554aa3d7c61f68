// Company (company:*), user profile (user:*), bank data (bridge:read only: there is no bank write) and documents
// (dokument:*).
import { z } from 'zod';
import {
  getBankAccount,
  getBankTransaction,
  getCompany,
  getProfile,
  listBankAccounts,
  listBankTransactions,
  updateCompany,
  updateProfile,
} from '../../services/company';
import { generateDocument, getDocument, listDocuments, listTemplates } from '../../services/documents';
import { defineTool, email, id, isoDate, limit, offset, shortText } from '../tool';

export const companyTools = [
  defineTool({
    name: 'get_company',
    title: 'Get company information',
    description: 'The company: name, VAT number, address, contact details and currency.',
    scopes: ['company:read'],
    readOnly: true,
    input: {},
    run: ({ db, companyId }) => getCompany(db, companyId),
  }),
  defineTool({
    name: 'update_company',
    title: 'Update company information',
    description: 'Changes the given fields of the company. The currency cannot be changed here.',
    scopes: ['company:write', 'company:read'],
    readOnly: false,
    input: {
      name: shortText('Company name.').optional(),
      vat_number: shortText('VAT identification number.', 50).optional(),
      address: shortText('Street address.', 500).optional(),
      city: shortText('City.', 100).optional(),
      country: z
        .string()
        .regex(/^[A-Z]{2}$/, 'Use an ISO 3166 two-letter code, e.g. FR.')
        .describe('Country, ISO 3166 code.')
        .optional(),
      email: email.optional(),
      phone: shortText('Phone number.', 50).optional(),
    },
    run: ({ db, companyId }, args) => updateCompany(db, companyId, args),
  }),
];

export const profileTools = [
  defineTool({
    name: 'get_profile',
    title: 'Get my profile',
    description: 'The signed-in user: name, email and company.',
    scopes: ['user:read'],
    readOnly: true,
    input: {},
    run: ({ db, userId }) => getProfile(db, userId),
  }),
  defineTool({
    name: 'update_profile',
    title: 'Update my profile',
    description: 'Changes the signed-in user’s display name.',
    scopes: ['user:write', 'user:read'],
    readOnly: false,
    input: { name: shortText('Display name.') },
    run: ({ db, userId }, args) => updateProfile(db, userId, args),
  }),
];

export const bankTools = [
  defineTool({
    name: 'list_bank_accounts',
    title: 'List bank accounts',
    description: 'The company’s bank accounts with IBAN and balance (minor units). Read only.',
    scopes: ['bridge:read'],
    readOnly: true,
    input: {},
    run: ({ db, companyId }) => listBankAccounts(db, companyId),
  }),
  defineTool({
    name: 'get_bank_account',
    title: 'Get a bank account',
    description: 'One bank account with its balance.',
    scopes: ['bridge:read'],
    readOnly: true,
    input: { account_id: id('bank account') },
    run: ({ db, companyId }, args) => getBankAccount(db, companyId, args.account_id),
  }),
  defineTool({
    name: 'list_bank_transactions',
    title: 'List bank transactions',
    description:
      'Transactions of one account, newest first; amounts in minor units, negative for money going out.',
    scopes: ['bridge:read'],
    readOnly: true,
    input: {
      account_id: id('bank account'),
      from: isoDate('First booking day').optional(),
      to: isoDate('Last booking day').optional(),
      limit,
      offset,
    },
    run: ({ db, companyId }, args) => listBankTransactions(db, companyId, args),
  }),
  defineTool({
    name: 'get_bank_transaction',
    title: 'Get a bank transaction',
    description: 'One bank transaction.',
    scopes: ['bridge:read'],
    readOnly: true,
    input: { transaction_id: id('bank transaction') },
    run: ({ db, companyId }, args) => getBankTransaction(db, companyId, args.transaction_id),
  }),
];

export const documentTools = [
  defineTool({
    name: 'list_document_templates',
    title: 'List document templates',
    description: 'Templates for letters generated from an invoice or quote, with their {{placeholders}}.',
    scopes: ['dokument:read'],
    readOnly: true,
    input: {},
    run: ({ db, companyId }) => listTemplates(db, companyId),
  }),
  defineTool({
    name: 'list_documents',
    title: 'List generated documents',
    description: 'Documents generated so far, newest first.',
    scopes: ['dokument:read'],
    readOnly: true,
    input: { limit, offset },
    run: ({ db, companyId }, args) => listDocuments(db, companyId, args),
  }),
  defineTool({
    name: 'get_document',
    title: 'Get a generated document',
    description: 'One generated document with its full text.',
    scopes: ['dokument:read'],
    readOnly: true,
    input: { document_id: id('document') },
    run: ({ db, companyId }, args) => getDocument(db, companyId, args.document_id),
  }),
  defineTool({
    name: 'render_document',
    title: 'Render a document',
    description:
      'A generated document as a printable HTML page, made by the document renderer, a separate service that acts ' +
      'for you with a token of its own (read-only, for documents only).',
    scopes: ['dokument:read'],
    readOnly: true,
    input: { document_id: id('document') },
    run: ({ renderDocument }, args) => renderDocument(args.document_id),
  }),
  defineTool({
    name: 'generate_document',
    title: 'Generate a document',
    description:
      'Fills a template with an invoice or quote (client, lines, totals) and stores the resulting document.',
    scopes: ['dokument:write', 'dokument:read', 'fakture:read'],
    readOnly: false,
    input: { template_id: id('document template'), invoice_id: id('invoice or quote') },
    run: ({ db, companyId }, args) => generateDocument(db, companyId, args),
  }),
];
