// The scope catalogue's type (the host app gives the catalogue), and parsing of scope strings (RFC 6749 §3.3).
import { OAuthError } from '../errors';

/** A scope and the plain words the consent page shows for it. */
export type ScopeCatalogue = Readonly<Record<string, string>>;

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * A client's request for a refresh token (OpenID Connect Core §11), not a permission. The MCP authorization spec
 * ("Refresh Tokens", from SEP-2207) lets a client add it to the scope of its authorization and token requests.
 * This server gives refresh tokens by the client's refresh_token grant type, so the value is accepted and dropped
 * wherever a scope is read: it never fails a request, and never reaches a grant, a token or a tool's scope check.
 */
export const OFFLINE_ACCESS = 'offline_access';

/**
 * Splits a scope parameter into its distinct tokens, in order, without offline_access. Throws invalid_scope for
 * malformed input or a scope outside `allowed`. A value naming only offline_access asks for nothing in particular
 * and is read as an absent scope parameter: every scope of `allowed`, as each caller does without one.
 */
export function parseScope(value: string, allowed: ReadonlySet<string>): string[] {
  const tokens = value.split(' ').filter((token) => token.length > 0);
  const scopes = tokens.filter((token) => token !== OFFLINE_ACCESS);
  for (const token of scopes) {
    if (!SCOPE_TOKEN.test(token) || !allowed.has(token)) {
      throw new OAuthError(
        'invalid_scope',
        `The scope "${token.slice(0, 64)}" is not available to this client.`,
      );
    }
  }
  if (scopes.length === 0 && tokens.length > 0) return [...allowed];
  return [...new Set(scopes)];
}
