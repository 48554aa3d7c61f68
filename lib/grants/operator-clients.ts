// Clients the operator registers (a machine client, an enterprise app): the only clients that may use the
// client_credentials grant, which acts without a user (RFC 6749 §4.4; MCP's client credentials extension, SEP-1046),
// or the jwt-bearer grant with an enterprise IdP's ID-JAG (MCP's Enterprise-Managed Authorization, SEP-990).
// Dynamic registration and metadata documents can never ask for either (clients/metadata.ts allows only
// authorization_code and refresh_token there), so a stranger cannot mint tokens without a user's consent.
import { randomBytes } from 'node:crypto';
import { isOAuthError } from '../errors';
import { hashSecret, randomSecret } from '../crypto/secrets';
import type { ClientRecord, OAuthStore, TokenEndpointAuthMethod } from '../store/types';
import { readDpopBinding, readKeys, readRedirectUris, readScope } from '../clients/metadata';
import { OFFLINE_ACCESS } from '../util/scopes';
import { JWT_BEARER_GRANT } from '../id-jag/options';
import { TOKEN_EXCHANGE_GRANT } from '../token-exchange/options';
import { OPERATOR_SCOPES } from './operator-resources';

/** The grant types an operator client may have. */
export type OperatorGrantType =
  | 'client_credentials'
  | 'authorization_code'
  | 'refresh_token'
  /** RFC 7523 §2.1 with an enterprise IdP's ID-JAG (the router's enterpriseIdps): tokens for the IdP's users. */
  // JWT_BEARER_GRANT, spelt out so that the public type names no internal constant.
  | 'urn:ietf:params:oauth:grant-type:jwt-bearer'
  /** RFC 8693 with the router's tokenExchange: trades a user's live access token for a downstream API's. */
  | 'urn:ietf:params:oauth:grant-type:token-exchange';

/** What the operator says of a client it registers. */
export interface OperatorClientOptions {
  /** Shown on pages and in logs. */
  name: string;
  /** At least one; `client_credentials` for a machine client. */
  grantTypes: readonly OperatorGrantType[];
  /**
   * The scopes the client may ask for: of the router's catalogue, and with client_credentials of its
   * operatorResources too. Default: the whole catalogue (never an operator resource's scope).
   */
  scope?: readonly string[];
  /** Required with authorization_code: where the browser comes back (the registration rules apply). */
  redirectUris?: readonly string[];
  /**
   * The client's public keys for private_key_jwt (RFC 7523 §2.2): an https jwks_uri (fetched like a document's) or a
   * JWK Set. Without either, the client gets a secret and authenticates with client_secret_basic.
   */
  jwksUri?: string;
  jwks?: { keys: unknown[] };
  /** RFC 9449 §5.2: the client always uses DPoP, and its token requests without a proof are refused. */
  dpopBoundAccessTokens?: boolean;
  /** Anything the host app wants to keep with the client (whose data a machine client acts on, say). */
  metadata?: Record<string, unknown>;
}

/** The registered client: its id, and its secret when it has one (shown once; only its hash is stored). */
export interface OperatorClient {
  clientId: string;
  clientSecret?: string;
  tokenEndpointAuthMethod: Extract<TokenEndpointAuthMethod, 'client_secret_basic' | 'private_key_jwt'>;
  record: ClientRecord;
}

const GRANT_TYPES: readonly OperatorGrantType[] = [
  'client_credentials',
  'authorization_code',
  'refresh_token',
  JWT_BEARER_GRANT,
  TOKEN_EXCHANGE_GRANT,
];

const fail = (message: string): never => {
  throw new TypeError(`registerOperatorClient: ${message}`);
};

/**
 * Registers a client on the operator's word. Throws a TypeError saying what to fix for bad options (a grant type it
 * cannot have, a redirect URI or a scope the rules refuse, keys and no keys...).
 */
export async function registerOperatorClient(
  store: Pick<OAuthStore, 'registerClient'>,
  /** The router's scope catalogue (its `scopes` option), or its scope names. */
  scopes: Readonly<Record<string, string>> | readonly string[],
  options: OperatorClientOptions,
  now: number = Date.now(),
  /**
   * The scopes of the router's operatorResources, which a client_credentials client may be given by naming them in
   * `scope`; never by default, and never to a client without that grant (the only one that issues their tokens).
   */
  operatorScopes: readonly string[] = [],
): Promise<OperatorClient> {
  const scopeCatalogue = new Set(Array.isArray(scopes) ? scopes : Object.keys(scopes));
  if (!options || typeof options.name !== 'string' || !options.name.trim())
    fail('give the client a name, e.g. { name: "Nightly export", grantTypes: ["client_credentials"] }.');
  const grantTypes = [...new Set(options.grantTypes ?? [])];
  if (grantTypes.length === 0 || grantTypes.some((type) => !GRANT_TYPES.includes(type)))
    fail(`grantTypes must list one or more of ${GRANT_TYPES.join(', ')}.`);
  if (grantTypes.includes('refresh_token') && !grantTypes.includes('authorization_code'))
    fail(
      'refresh_token goes with authorization_code: a client credentials, jwt-bearer or token-exchange client ' +
        'gets no refresh token.',
    );
  // An empty list would read as "no scope asked", which a registration turns into the whole catalogue: an operator who
  // computed an empty list meant none, so it is an error, as is offline_access (no permission at all).
  if (
    options.scope !== undefined &&
    (!Array.isArray(options.scope) ||
      options.scope.length === 0 ||
      options.scope.some((scope) => typeof scope !== 'string' || !scope.trim() || scope === OFFLINE_ACCESS))
  )
    fail('scope must list one or more scopes of the catalogue (leave it out for the whole catalogue).');
  // The default (no scope named) stays the consent catalogue alone: an operator's scope is given only by name.
  const ownScopes = (options.scope ?? []).filter(
    (scope) => operatorScopes.includes(scope) && !scopeCatalogue.has(scope),
  );
  if (ownScopes.length > 0 && !grantTypes.includes('client_credentials'))
    fail(
      `the scope ${ownScopes.join(' ')} is an operator resource's, whose tokens only the client_credentials grant ` +
        'issues: add client_credentials to grantTypes.',
    );
  // The client_credentials grant trusts this key: only what is named in `scope` sets it, never options.metadata.
  const { [OPERATOR_SCOPES]: _fromHost, ...hostMetadata } = options.metadata ?? {};
  const keyed = options.jwksUri !== undefined || options.jwks !== undefined;
  const method = keyed ? 'private_key_jwt' : 'client_secret_basic';
  const fields: Record<string, unknown> = {
    ...(options.scope ? { scope: options.scope.join(' ') } : {}),
    ...(options.jwksUri !== undefined ? { jwks_uri: options.jwksUri } : {}),
    ...(options.jwks !== undefined ? { jwks: options.jwks } : {}),
    ...(grantTypes.includes('authorization_code') ? { redirect_uris: options.redirectUris } : {}),
    ...(options.dpopBoundAccessTokens === undefined
      ? {}
      : { dpop_bound_access_tokens: options.dpopBoundAccessTokens }),
  };
  let record: ClientRecord;
  const secret = keyed ? undefined : randomSecret();
  try {
    record = {
      clientId: randomBytes(16).toString('base64url'),
      clientSecretHash: secret === undefined ? null : hashSecret(secret),
      clientName: options.name.trim(),
      redirectUris: grantTypes.includes('authorization_code') ? readRedirectUris(fields) : [],
      grantTypes,
      responseTypes: grantTypes.includes('authorization_code') ? ['code'] : [],
      tokenEndpointAuthMethod: method,
      scope: readScope(
        fields,
        ownScopes.length ? new Set([...scopeCatalogue, ...ownScopes]) : scopeCatalogue,
        {
          lenient: false,
        },
      ),
      metadata: {
        ...hostMetadata,
        ...readKeys(fields, method),
        ...readDpopBinding(fields),
        ...(ownScopes.length ? { [OPERATOR_SCOPES]: ownScopes } : {}),
      },
      issuedAt: now,
    };
  } catch (error) {
    if (isOAuthError(error)) fail(error.description);
    throw error;
  }
  await store.registerClient(record);
  return {
    clientId: record.clientId,
    ...(secret === undefined ? {} : { clientSecret: secret }),
    tokenEndpointAuthMethod: method,
    record,
  };
}
