// The scope catalogue of the business-management service: what the OAuth router offers and the consent page shows,
// and what the tools check (each tool names the scopes it needs in mcp/tools/).
import type { ScopeCatalogue } from 'express-mcp-oauth';

/** The 15 scopes of the service: <area>:<read|write>. There is deliberately no bank-write scope. */
export const BUSINESS_SCOPES: ScopeCatalogue = Object.freeze({
  'fakture:read': 'Read your invoices and quotes',
  'fakture:write': 'Create, update and delete invoices',
  'clients:read': 'Read your client records',
  'clients:write': 'Create and update clients',
  'products:read': 'Read your product catalog',
  'products:write': 'Create and update products',
  'company:read': 'Read your company information',
  'company:write': 'Update your company information',
  'bridge:read': 'View your bank accounts and transactions',
  'user:read': 'Read your user profile',
  'user:write': 'Update your user profile',
  'prospektor:read': 'Read your prospects and statistics',
  'prospektor:write': 'Create and update prospects',
  'dokument:read': 'Read your templates and documents',
  'dokument:write': 'Generate documents',
});

/**
 * The admin API's scope ({base}/admin/api, an operator resource): never in the catalogue above, so no consent page
 * offers it; only a client_credentials client acting for an administrator is given it (npm run client:create).
 */
export const ADMIN_API_SCOPES: Readonly<Record<string, string>> = Object.freeze({
  admin: 'List every client and grant; revoke grants, disable and enable clients, remove idle registrations',
});
