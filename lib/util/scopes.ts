// The scope catalogue of the business-management service, and parsing of scope strings (RFC 6749 §3.3).
import { OAuthError } from '../errors';

/** A scope and the plain words the consent page shows for it. */
export type ScopeCatalogue = Readonly<Record<string, string>>;

/** The 15 scopes of the service: <area>:<read|write>. There is deliberately no bank-write scope. */
export const DEFAULT_SCOPES: ScopeCatalogue = Object.freeze({
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

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Splits a scope parameter into its distinct tokens, in order. Throws invalid_scope for malformed input or a
 * scope outside `allowed`.
 */
export function parseScope(value: string, allowed: ReadonlySet<string>): string[] {
  const tokens = value.split(' ').filter((token) => token.length > 0);
  for (const token of tokens) {
    if (!SCOPE_TOKEN.test(token) || !allowed.has(token)) {
      throw new OAuthError(
        'invalid_scope',
        `The scope "${token.slice(0, 64)}" is not available to this client.`,
      );
    }
  }
  return [...new Set(tokens)];
}
