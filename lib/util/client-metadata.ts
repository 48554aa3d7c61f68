// Validation of a dynamic client registration request (RFC 7591 §2): what a client may declare about itself.
import { OAuthError } from '../errors';
import type { TokenEndpointAuthMethod } from '../store/types';
import { redirectUriProblem } from './redirect-uri';
import { parseScope } from './scopes';

/** The validated metadata of a new client. */
export interface ClientMetadata {
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  grantTypes: string[];
  responseTypes: string[];
  clientName: string | null;
  scope: string;
  /** Optional descriptive fields, echoed back and kept. */
  extra: Record<string, unknown>;
}

const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'none',
];
const GRANT_TYPES = ['authorization_code', 'refresh_token'];
const MAX_REDIRECT_URIS = 10;
const URL_FIELDS = ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri'] as const;
const TEXT_FIELDS = ['software_id', 'software_version'] as const;

const invalid = (description: string) => new OAuthError('invalid_client_metadata', description);

function stringList(body: Record<string, unknown>, name: string, max: number): string[] | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (
    !Array.isArray(value) ||
    value.length > max ||
    value.some((item) => typeof item !== 'string' || item.length > 200)
  ) {
    throw invalid(`${name} must be an array of at most ${max} strings.`);
  }
  return [...new Set(value as string[])];
}

function text(body: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > max)
    throw invalid(`${name} must be a string of at most ${max} characters.`);
  return value;
}

export function validateClientMetadata(body: unknown, scopeCatalogue: ReadonlySet<string>): ClientMetadata {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid('Send the client metadata as a JSON object with Content-Type: application/json.');
  }
  const fields = body as Record<string, unknown>;

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

  const method = fields.token_endpoint_auth_method ?? 'client_secret_basic';
  if (!AUTH_METHODS.includes(method as TokenEndpointAuthMethod)) {
    throw invalid(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}.`);
  }
  // RFC 7591 defaults grant_types to authorization_code alone; MCP clients that omit it still expect to refresh,
  // and the service's flow always issues a refresh token, so both are the default here.
  const grantTypes = stringList(fields, 'grant_types', 5) ?? GRANT_TYPES;
  const unsupportedGrant = grantTypes.find((type) => !GRANT_TYPES.includes(type));
  if (unsupportedGrant)
    throw invalid(`The grant type "${unsupportedGrant}" is not supported; use ${GRANT_TYPES.join(', ')}.`);
  if (!grantTypes.includes('authorization_code'))
    throw invalid('grant_types must include authorization_code.');
  const responseTypes = stringList(fields, 'response_types', 5) ?? ['code'];
  if (responseTypes.length !== 1 || responseTypes[0] !== 'code')
    throw invalid('response_types must be ["code"].');

  const scopeText = text(fields, 'scope', 2000);
  let scope: string;
  try {
    scope = (scopeText === undefined ? [...scopeCatalogue] : parseScope(scopeText, scopeCatalogue)).join(' ');
  } catch (error) {
    throw invalid((error as OAuthError).description);
  }
  if (!scope) throw invalid('scope must name at least one scope.');

  const extra: Record<string, unknown> = {};
  for (const name of URL_FIELDS) {
    const value = text(fields, name, 2000);
    if (value === undefined) continue;
    if (!/^https:\/\//i.test(value) || !URL.canParse(value)) throw invalid(`${name} must be an https URL.`);
    extra[name] = value;
  }
  for (const name of TEXT_FIELDS) {
    const value = text(fields, name, 200);
    if (value !== undefined) extra[name] = value;
  }
  const contacts = stringList(fields, 'contacts', 10);
  if (contacts) extra.contacts = contacts;

  return {
    redirectUris: redirectUris as string[],
    tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
    grantTypes,
    responseTypes,
    clientName: text(fields, 'client_name', 200)?.trim() || null,
    scope,
    extra,
  };
}
