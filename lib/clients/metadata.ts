// Validation of client metadata (RFC 7591 §2): what a client may declare about itself, through dynamic registration
// or in a Client ID Metadata Document. Both share these rules; each throws invalid_client_metadata or
// invalid_redirect_uri with a sentence that says what to change.
import { createPublicKey } from 'node:crypto';
import { OAuthError } from '../errors';
import type { TokenEndpointAuthMethod } from '../store/types';
import { hiddenFormattingIn } from '../util/display-text';
import { containsControlCharacter } from '../util/params';
import { redirectUriProblem } from '../util/redirect-uri';
import { parseScope } from '../util/scopes';
import { DEVICE_CODE_GRANT } from '../device/options';

/** The validated metadata of a client. */
export interface ClientMetadata {
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  grantTypes: string[];
  responseTypes: string[];
  clientName: string | null;
  scope: string;
  /** Optional descriptive fields and the client's keys (jwks or jwks_uri), echoed back and kept. */
  extra: Record<string, unknown>;
}

/** Fields as they came, and whether they come from a document (shared by many servers) or a registration. */
type Fields = Record<string, unknown>;

const REGISTRATION_AUTH_METHODS: readonly TokenEndpointAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'none',
  'private_key_jwt',
];
const GRANT_TYPES = ['authorization_code', 'refresh_token'];
const MAX_REDIRECT_URIS = 10;
const MAX_KEYS = 10;
const URL_FIELDS = ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri'] as const;
const TEXT_FIELDS = ['software_id', 'software_version'] as const;
/** JWK members that only a private or symmetric key has: never accepted as a client's public key. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

export const invalidMetadata = (description: string) =>
  new OAuthError('invalid_client_metadata', description);

function stringList(body: Fields, name: string, max: number): string[] | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (
    !Array.isArray(value) ||
    value.length > max ||
    value.some((item) => typeof item !== 'string' || item.length > 200)
  ) {
    throw invalidMetadata(`${name} must be an array of at most ${max} strings.`);
  }
  if (value.some((item) => containsControlCharacter(item)))
    throw invalidMetadata(`${name} must not hold control characters.`);
  for (const item of value as string[]) refuseHiddenFormatting(name, item);
  return [...new Set(value as string[])];
}

export function text(body: Fields, name: string, max: number): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > max)
    throw invalidMetadata(`${name} must be a string of at most ${max} characters.`);
  // Checked here as well as on requests: a fetched metadata document never passes the request middleware.
  if (containsControlCharacter(value)) throw invalidMetadata(`${name} must not hold control characters.`);
  refuseHiddenFormatting(name, value);
  return value;
}

/**
 * What a client says about itself is shown to users (RFC 7591 §2: client_name, client_uri, contacts...), so none of
 * it may reorder, break or hide the page's text around it (display-text.ts); invalid_client_metadata otherwise.
 */
function refuseHiddenFormatting(name: string, value: string): void {
  const found = hiddenFormattingIn(value);
  if (found)
    throw invalidMetadata(
      `${name} must not hold ${found}: a character that reorders, breaks or hides the text around it.`,
    );
}

/** redirect_uris: required, each allowed by the redirect-URI rules (RFC 9700 §4.1, RFC 8252 §7). */
export function readRedirectUris(fields: Fields): string[] {
  const redirectUris = fields.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0) {
    throw new OAuthError(
      'invalid_redirect_uri',
      'redirect_uris is required: a non-empty array of absolute URIs.',
    );
  }
  if (redirectUris.length > MAX_REDIRECT_URIS) {
    throw new OAuthError('invalid_redirect_uri', `Register at most ${MAX_REDIRECT_URIS} redirect URIs.`);
  }
  for (const uri of redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `Invalid redirect URI: ${problem}.`);
  }
  return [...new Set(redirectUris as string[])];
}

/**
 * grant_types and response_types. A registration may name only what this server supports; a document is written
 * for many servers, so grant types this one lacks are left out instead of refused. With `deviceGrant` (the router's
 * deviceAuthorization), a registration may name the device_code grant (RFC 8628), with or without
 * authorization_code: a client with only the device grant has no redirect URIs and no response types.
 */
export function readFlows(
  fields: Fields,
  { lenient, deviceGrant = false }: { lenient: boolean; deviceGrant?: boolean },
) {
  const supported = deviceGrant && !lenient ? [...GRANT_TYPES, DEVICE_CODE_GRANT] : GRANT_TYPES;
  // RFC 7591 defaults grant_types to authorization_code alone; MCP clients that omit it still expect to refresh,
  // and the service's flow always issues a refresh token, so both are the default here.
  let grantTypes = stringList(fields, 'grant_types', 5) ?? GRANT_TYPES;
  const unsupported = grantTypes.find((type) => !supported.includes(type));
  if (unsupported && !lenient)
    throw invalidMetadata(`The grant type "${unsupported}" is not supported; use ${supported.join(', ')}.`);
  grantTypes = grantTypes.filter((type) => supported.includes(type));
  if (!grantTypes.includes('authorization_code')) {
    if (!grantTypes.includes(DEVICE_CODE_GRANT))
      throw invalidMetadata(
        `grant_types must include authorization_code${deviceGrant && !lenient ? ` or ${DEVICE_CODE_GRANT}` : ''}.`,
      );
    // RFC 7591 §2.1: response_types go with the authorization endpoint, which a device-only client never uses.
    const responseTypes = stringList(fields, 'response_types', 5) ?? [];
    if (responseTypes.length !== 0)
      throw invalidMetadata('response_types must be [] for a client without the authorization_code grant.');
    return { grantTypes, responseTypes: [] };
  }
  const responseTypes = stringList(fields, 'response_types', 5) ?? ['code'];
  if (lenient ? !responseTypes.includes('code') : responseTypes.length !== 1 || responseTypes[0] !== 'code')
    throw invalidMetadata(
      lenient ? 'response_types must include "code".' : 'response_types must be ["code"].',
    );
  return { grantTypes, responseTypes: ['code'] };
}

/**
 * scope: the scopes the client may ask for. A registration may name only scopes of this server. A document is
 * written for many servers: its scope narrows this server's catalogue when it names any of its scopes, and is
 * ignored when it names none (the user still chooses on the consent page). An empty scope is no scope: the MCP
 * Inspector and Gemini CLI register `scope: ""` when nothing told them one (RFC 7591 §2: omitted, a default set).
 */
export function readScope(fields: Fields, catalogue: ReadonlySet<string>, { lenient }: { lenient: boolean }) {
  const scopeText = text(fields, 'scope', 2000);
  const all = [...catalogue].join(' ');
  if (scopeText === undefined || scopeText.trim() === '') return all;
  if (lenient) {
    const known = [...new Set(scopeText.split(' ').filter((name) => catalogue.has(name)))];
    return known.length > 0 ? known.join(' ') : all;
  }
  try {
    return parseScope(scopeText, catalogue).join(' ');
  } catch (error) {
    throw invalidMetadata((error as OAuthError).description);
  }
}

/** The client's public keys for private_key_jwt (RFC 7591 §2): jwks_uri or jwks, never both. */
export function readKeys(fields: Fields, method: TokenEndpointAuthMethod): Record<string, unknown> {
  const { jwks, jwks_uri: jwksUri } = fields;
  if (jwks !== undefined && jwksUri !== undefined)
    throw invalidMetadata('Give jwks_uri or jwks, not both (RFC 7591 §2).');
  if (jwksUri !== undefined) {
    if (
      typeof jwksUri !== 'string' ||
      jwksUri.length > 2000 ||
      !/^https:\/\//i.test(jwksUri) ||
      !URL.canParse(jwksUri)
    )
      throw invalidMetadata('jwks_uri must be an https URL.');
    return { jwks_uri: jwksUri };
  }
  if (jwks !== undefined) return { jwks: validateJwks(jwks) };
  if (method === 'private_key_jwt')
    throw invalidMetadata(
      'token_endpoint_auth_method private_key_jwt needs jwks_uri or jwks: the keys to verify it.',
    );
  return {};
}

/** A JWK Set of public signing keys, each of which Node can import. */
export function validateJwks(jwks: unknown): { keys: Record<string, unknown>[] } {
  const keys = (jwks as { keys?: unknown } | null)?.keys;
  if (
    !jwks ||
    typeof jwks !== 'object' ||
    !Array.isArray(keys) ||
    keys.length === 0 ||
    keys.length > MAX_KEYS
  )
    throw invalidMetadata(`jwks must be a JWK Set: {"keys": [...]} with 1 to ${MAX_KEYS} keys.`);
  for (const key of keys) {
    if (!key || typeof key !== 'object' || Array.isArray(key))
      throw invalidMetadata('Each key of jwks must be a JWK object.');
    const jwk = key as Record<string, unknown>;
    if (jwk.kty !== 'RSA' && jwk.kty !== 'EC')
      throw invalidMetadata('Each key of jwks must be an RSA or EC key.');
    if (PRIVATE_MEMBERS.some((member) => member in jwk))
      throw invalidMetadata('jwks holds a private key; publish only public keys.');
    try {
      createPublicKey({ key: jwk as never, format: 'jwk' });
    } catch {
      throw invalidMetadata(
        `The key ${typeof jwk.kid === 'string' ? `"${jwk.kid}" ` : ''}of jwks cannot be read.`,
      );
    }
  }
  return { keys: keys as Record<string, unknown>[] };
}

/** Optional descriptive fields: https URLs for pages and the logo, short texts, contacts. */
export function readDisplayFields(fields: Fields): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  for (const name of URL_FIELDS) {
    const value = text(fields, name, 2000);
    if (value === undefined) continue;
    if (!/^https:\/\//i.test(value) || !URL.canParse(value))
      throw invalidMetadata(`${name} must be an https URL.`);
    extra[name] = value;
  }
  for (const name of TEXT_FIELDS) {
    const value = text(fields, name, 200);
    if (value !== undefined) extra[name] = value;
  }
  const contacts = stringList(fields, 'contacts', 10);
  if (contacts) extra.contacts = contacts;
  return extra;
}

/**
 * dpop_bound_access_tokens (RFC 9449 §5.2): a client that always uses DPoP says so, and the token endpoint then
 * refuses its requests without a proof. Kept only when true (false is the default).
 */
export function readDpopBinding(fields: Fields): Record<string, unknown> {
  const value = fields.dpop_bound_access_tokens;
  if (value === undefined || value === null || value === false) return {};
  if (value !== true) throw invalidMetadata('dpop_bound_access_tokens must be true or false.');
  return { dpop_bound_access_tokens: true };
}

/** A dynamic registration request (RFC 7591 §3.1); `deviceGrant` when the router offers the device grant. */
export function validateClientMetadata(
  body: unknown,
  scopeCatalogue: ReadonlySet<string>,
  { deviceGrant = false }: { deviceGrant?: boolean } = {},
): ClientMetadata {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidMetadata('Send the client metadata as a JSON object with Content-Type: application/json.');
  }
  const fields = body as Fields;
  const flows = readFlows(fields, { lenient: false, deviceGrant });
  // Redirect URIs are for the authorization endpoint: a device-only client (RFC 8628) has none to register.
  const redirectUris =
    flows.grantTypes.includes('authorization_code') || fields.redirect_uris !== undefined
      ? readRedirectUris(fields)
      : [];
  const method = fields.token_endpoint_auth_method ?? 'client_secret_basic';
  if (!REGISTRATION_AUTH_METHODS.includes(method as TokenEndpointAuthMethod)) {
    throw invalidMetadata(
      `token_endpoint_auth_method must be one of ${REGISTRATION_AUTH_METHODS.join(', ')}.`,
    );
  }
  const tokenEndpointAuthMethod = method as TokenEndpointAuthMethod;
  return {
    redirectUris,
    tokenEndpointAuthMethod,
    ...flows,
    clientName: text(fields, 'client_name', 200)?.trim() || null,
    scope: readScope(fields, scopeCatalogue, { lenient: false }),
    extra: {
      ...readDisplayFields(fields),
      ...readKeys(fields, tokenEndpointAuthMethod),
      ...readDpopBinding(fields),
    },
  };
}
