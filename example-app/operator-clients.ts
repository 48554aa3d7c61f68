// Clients the operator registers (`npm run client:create`): the input checked once, each refusal an
// OperatorClientInputError saying what to fix; a machine client's user found by email; the client registered through
// the library's registerOperatorClient with that user's id kept in its metadata (ACTS_FOR_USER), which /mcp reads.
// An enterprise app (the jwt-bearer grant) names no user: each ID-JAG it presents names one; nor does a service that
// exchanges tokens (RFC 8693): each subject token it presents names one.
import { emailKey, type OAuthStore, type OperatorGrantType, registerOperatorClient } from 'express-mcp-oauth';
import type { ClientRecord } from 'express-mcp-oauth/store';
import type { AppDb } from './db/database';
import { ADMIN_API_SCOPES, BUSINESS_SCOPES } from './scopes';
import { isAdmin } from './users';

/** The key of the client's metadata that names the user (by id) a machine client acts on. */
const ACTS_FOR_USER = 'acts_for_user';

/** A problem with the input of client creation, with a one-line message fit for the command line. */
export class OperatorClientInputError extends Error {
  override readonly name = 'OperatorClientInputError';
}

/** What the command line says, as given (strings, unparsed). */
export interface OperatorClientInput {
  name?: string;
  /** Comma-separated: client_credentials, authorization_code, refresh_token, the jwt-bearer and token-exchange URNs. */
  grantTypes?: string;
  /** The email of the user a client_credentials client acts on. */
  user?: string;
  /** Space-separated scopes; default: the whole catalogue. */
  scope?: string;
  jwksUri?: string;
  redirectUris?: readonly string[];
}

/** What the command prints: the wire names of RFC 7591's registration answer, plus whose account it acts on. */
export interface CreatedOperatorClient {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method: 'client_secret_basic' | 'private_key_jwt';
  grant_types: string[];
  scope: string;
  redirect_uris?: string[];
  jwks_uri?: string;
  /** The email of the user a client_credentials client acts on. */
  acts_for?: string;
}

/** RFC 7523 §2.1: an enterprise app's grant, with an ID-JAG from one of TRUSTED_IDPS. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer' satisfies OperatorGrantType;

/** RFC 8693 §2.1: a service trading a user's access token for one of DOWNSTREAM_RESOURCES. */
export const TOKEN_EXCHANGE_GRANT =
  'urn:ietf:params:oauth:grant-type:token-exchange' satisfies OperatorGrantType;

const GRANT_TYPES: readonly OperatorGrantType[] = [
  'client_credentials',
  'authorization_code',
  'refresh_token',
  JWT_BEARER_GRANT,
  TOKEN_EXCHANGE_GRANT,
];
const MAX_NAME = 200;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const refuse = (message: string): never => {
  throw new OperatorClientInputError(message);
};

/** The input checked: every refusal says what to give instead. Pure: no database. */
export function readOperatorClientInput(input: OperatorClientInput) {
  const name = input.name?.trim() ?? '';
  if (!name) refuse('A client name is required: --name "Nightly export", for example.');
  if (name.length > MAX_NAME) refuse(`The name is too long: use at most ${MAX_NAME} characters.`);

  const listed = (input.grantTypes ?? '').split(',').map((type) => type.trim());
  if (listed.every((type) => !type))
    refuse(`Grant types are required: --grant-types with one or more of ${GRANT_TYPES.join(', ')}.`);
  const unknown = listed.find((type) => !GRANT_TYPES.includes(type as OperatorGrantType));
  if (unknown !== undefined)
    refuse(`"${unknown}" is not a grant type a client may have here: use ${GRANT_TYPES.join(', ')}.`);
  const grantTypes = [...new Set(listed)] as OperatorGrantType[];
  const machine = grantTypes.includes('client_credentials');
  const browser = grantTypes.includes('authorization_code');
  if (grantTypes.includes('refresh_token') && !browser)
    refuse(
      'refresh_token goes with authorization_code: a client_credentials or jwt-bearer client gets no refresh token.',
    );

  const user = input.user?.trim();
  if (machine && !user)
    refuse('--user EMAIL is required with client_credentials: the user whose account the client acts on.');
  if (!machine && user !== undefined)
    refuse(
      '--user goes with client_credentials only: an authorization_code client acts for whoever signs in, ' +
        'an enterprise app (jwt-bearer) for the user each ID-JAG names, a token-exchange client for the user of each ' +
        'subject token.',
    );
  if (user !== undefined && (!EMAIL.test(user) || user.length > 254 || /[\u0000-\u001f\u007f]/.test(user)))
    refuse(`"${user}" is not a valid email address (--user).`);

  const redirectUris = input.redirectUris ?? [];
  if (browser && redirectUris.length === 0)
    refuse(
      'authorization_code needs --redirect-uri URI (repeat it for several): where the browser comes back.',
    );
  if (!browser && redirectUris.length > 0) refuse('--redirect-uri goes with authorization_code only.');

  let scope: string[] | undefined;
  if (input.scope !== undefined) {
    scope = input.scope.split(/\s+/).filter(Boolean);
    if (scope.length === 0) refuse('--scope is empty: give one or more scopes, e.g. --scope "company:read".');
    const outside = scope.find(
      (name) => !Object.hasOwn(BUSINESS_SCOPES, name) && !Object.hasOwn(ADMIN_API_SCOPES, name),
    );
    if (outside !== undefined)
      refuse(
        `"${outside}" is not a scope of this service: use any of ${Object.keys(BUSINESS_SCOPES).join(' ')}, ` +
          `or ${Object.keys(ADMIN_API_SCOPES).join(' ')} for the admin API.`,
      );
    // The admin API's tokens come from client_credentials alone, and act for an administrator (checked below).
    if (!machine && scope.some((name) => Object.hasOwn(ADMIN_API_SCOPES, name)))
      refuse('--scope admin goes with --grant-types client_credentials and --user an administrator.');
  }

  const jwksUri = input.jwksUri?.trim();
  if (jwksUri !== undefined && (!/^https:\/\//i.test(jwksUri) || !URL.canParse(jwksUri)))
    refuse(`--jwks-uri must be an https URL where the client publishes its public keys, got "${jwksUri}".`);

  return { name, grantTypes, user, scope, jwksUri, redirectUris: [...redirectUris] };
}

/**
 * Registers the client the input describes. A machine client's user must exist; its id (not its email, which may
 * change) is kept in the client's metadata.
 */
export async function createOperatorClient(
  db: AppDb,
  store: Pick<OAuthStore, 'registerClient'>,
  input: OperatorClientInput,
): Promise<CreatedOperatorClient> {
  const checked = readOperatorClientInput(input);
  let actsFor: { id: number; email: string } | undefined;
  if (checked.user !== undefined) {
    const key = emailKey(checked.user);
    actsFor =
      key === undefined
        ? undefined
        : await db.get<{ id: number; email: string }>('SELECT id, email FROM users WHERE email_key = ?', [
            key,
          ]);
    if (!actsFor) refuse(`No user has the email ${checked.user}: create one first with npm run user:create.`);
    // The console's rule for the admin API too: only an administrator's client (each request checks it again).
    if (
      checked.scope?.some((name) => Object.hasOwn(ADMIN_API_SCOPES, name)) &&
      !(await isAdmin(db, String(actsFor!.id)))
    )
      refuse(
        `${actsFor!.email} is not an administrator, and --scope admin is for an administrator's client: make one ` +
          'with npm run user:create -- --admin.',
      );
  }
  let created;
  try {
    created = await registerOperatorClient(
      store,
      BUSINESS_SCOPES,
      {
        name: checked.name,
        grantTypes: checked.grantTypes,
        ...(checked.scope ? { scope: checked.scope } : {}),
        ...(checked.redirectUris.length ? { redirectUris: checked.redirectUris } : {}),
        ...(checked.jwksUri !== undefined ? { jwksUri: checked.jwksUri } : {}),
        ...(actsFor ? { metadata: { [ACTS_FOR_USER]: String(actsFor.id) } } : {}),
      },
      Date.now(),
      Object.keys(ADMIN_API_SCOPES),
    );
  } catch (error) {
    // The library's rules (a redirect URI it refuses, say) throw a TypeError that says what to fix.
    const prefix = 'registerOperatorClient: ';
    if (error instanceof TypeError && error.message.startsWith(prefix))
      refuse(error.message.slice(prefix.length));
    throw error;
  }
  const { record } = created;
  return {
    client_id: created.clientId,
    ...(created.clientSecret !== undefined ? { client_secret: created.clientSecret } : {}),
    token_endpoint_auth_method: created.tokenEndpointAuthMethod,
    grant_types: [...record.grantTypes],
    scope: record.scope,
    ...(record.redirectUris.length ? { redirect_uris: [...record.redirectUris] } : {}),
    ...(checked.jwksUri !== undefined ? { jwks_uri: checked.jwksUri } : {}),
    ...(actsFor ? { acts_for: actsFor.email } : {}),
  };
}

/**
 * The id of the user a client acts on, or null: only a client the operator registered for client_credentials with
 * a user. Neither a registration nor a metadata document can set this key (the library keeps only display fields and
 * keys from those), and such a client can never get a client_credentials token anyway.
 */
export function actingUserId(client: ClientRecord | undefined): string | null {
  // A disabled client acts for nobody, even with a token issued before another instance heard of it.
  if (!client || client.disabled || !client.grantTypes.includes('client_credentials')) return null;
  const userId = client.metadata[ACTS_FOR_USER];
  return typeof userId === 'string' && userId ? userId : null;
}

/** How a client came to be stored: a registration (RFC 7591), a metadata document, or the operator's own. */
export type ClientKind = 'registration' | 'document' | 'operator';

/** How this client came to be stored, for the administrators' console and admin API. */
export function clientKind(client: Pick<ClientRecord, 'clientId' | 'grantTypes'>): ClientKind {
  if (/^https:\/\//i.test(client.clientId)) return 'document';
  // Only registerOperatorClient gives these grants (or token exchange); a registration never has them.
  if (
    client.grantTypes.some(
      (type) => type === 'client_credentials' || type === JWT_BEARER_GRANT || type === TOKEN_EXCHANGE_GRANT,
    )
  )
    return 'operator';
  return 'registration';
}
