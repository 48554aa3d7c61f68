// Protected resources for the operator's own clients (an admin API, a billing export): their tokens come from the
// client_credentials grant alone, so only a client the operator registered with that grant can get one (RFC 6749
// §4.4), and their scopes stay out of the consent catalogue, so no person is ever asked for them and no other
// grant can carry them. Each is a resource of its own (RFC 8707): a token for it is refused everywhere else, and
// tokens for the tool server are refused by it.
import { OFFLINE_ACCESS } from '../util/scopes';

/** A resource only the operator's clients get tokens for, with scopes of its own. */
export interface OperatorResource {
  /**
   * Its resource identifier (RFC 8707): a URL on the issuer's origin, no query or fragment, such as
   * `${issuer}/admin/api`. Neither one of `resources` nor a downstream resource of `tokenExchange`.
   */
  resource: string;
  /**
   * Its scopes, each with what it allows (for the protected resource metadata and your docs; no consent page shows
   * them), e.g. `{ admin: 'List and end clients and grants' }`. At least one; none of them in `scopes`.
   */
  scopes: Record<string, string>;
}

/** Each operator resource, normalised (no trailing slash), with its scopes' names and descriptions. */
export type OperatorResourceConfig = ReadonlyMap<string, Readonly<Record<string, string>>>;

/**
 * The key of an operator client's metadata that lists the operator scopes it was given by name
 * (registerOperatorClient). A client's `scope` alone cannot say so: a scope moved out of the consent catalogue into
 * an operator resource would otherwise reach every client registered with the whole catalogue before. Registrations
 * and metadata documents never keep this key (clients/metadata.ts keeps display fields and keys only).
 */
export const OPERATOR_SCOPES = 'operator_scopes';

/** The operator scopes a client was given by name, from its metadata. */
export function operatorScopesOf(metadata: Readonly<Record<string, unknown>>): readonly string[] {
  const given = metadata[OPERATOR_SCOPES];
  return Array.isArray(given) ? given.filter((scope): scope is string => typeof scope === 'string') : [];
}

/**
 * Parses the `operatorResources` option. `parseUrl` is the router's own check of a public URL on the issuer's
 * origin (normalised); `taken` are the resources already named elsewhere.
 */
export function parseOperatorResources(
  given: readonly OperatorResource[] | undefined,
  parseUrl: (name: string, value: unknown) => string,
  taken: ReadonlySet<string>,
  catalogue: ReadonlySet<string>,
  fail: (message: string) => never,
): OperatorResourceConfig {
  const parsed = new Map<string, Readonly<Record<string, string>>>();
  // A scope names one resource: a client given `read` for one must not get tokens with it for another.
  const named = new Set<string>();
  if (given === undefined) return parsed;
  if (!Array.isArray(given))
    fail(
      "operatorResources must be an array such as [{ resource: `${issuer}/admin/api`, scopes: { admin: 'Administer the service' } }].",
    );
  for (const [index, entry] of given.entries()) {
    const name = `operatorResources[${index}]`;
    if (!entry || typeof entry !== 'object') fail(`${name} must be { resource, scopes }.`);
    const resource = parseUrl(`${name}.resource`, entry.resource);
    if (taken.has(resource) || parsed.has(resource))
      fail(`${name}.resource "${resource}" is named already; an operator resource is a resource of its own.`);
    const scopes = entry.scopes;
    if (!scopes || typeof scopes !== 'object' || Array.isArray(scopes) || Object.keys(scopes).length === 0)
      fail(
        `${name}.scopes must name at least one scope, with what it allows, e.g. { admin: 'Administer the service' }.`,
      );
    for (const [scope, description] of Object.entries(scopes)) {
      if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope))
        fail(`${name}.scopes: the scope "${scope}" has characters RFC 6749 §3.3 forbids.`);
      // A scope people may consent to would let the consent grants reach for it: the two sets stay apart.
      if (catalogue.has(scope) || scope === OFFLINE_ACCESS)
        fail(
          `${name}.scopes: "${scope}" is a scope of the consent catalogue; give the operator's scopes names of their own.`,
        );
      if (typeof description !== 'string' || !description)
        fail(`${name}.scopes: the scope "${scope}" needs a description.`);
      if (named.has(scope))
        fail(
          `${name}.scopes: "${scope}" is already a scope of another operator resource; a scope names one.`,
        );
      named.add(scope);
    }
    parsed.set(resource, Object.freeze({ ...scopes }));
  }
  return parsed;
}
