// The scope catalogue's type (the host app gives the catalogue), and parsing of scope strings (RFC 6749 §3.3).
import { OAuthError } from '../errors';

/** A scope and the plain words the consent page shows for it. */
export type ScopeCatalogue = Readonly<Record<string, string>>;

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
