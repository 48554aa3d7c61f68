// Validation of an authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 8707 §2). The client and its
// redirect URI are checked first: until both are trusted, errors are shown to the user and never redirected.
import type { Response } from 'express';
import type { OAuthContext } from '../context';
import { isClientIdUrl } from '../util/client-id';
import { isValidCodeChallenge } from '../crypto/pkce';
import { OAuthError } from '../errors';
import type { RedirectTarget } from '../util/redirect-uri';
import type { ClientRecord } from '../store/types';
import { readParam, readResource } from '../util/params';
import { matchRedirectUri } from '../util/redirect-uri';
import { parseScope } from '../util/scopes';

/** A validated authorization request. */
export interface AuthorizationRequest {
  client: ClientRecord;
  redirectUri: string;
  state: string | undefined;
  scopes: string[];
  resource: string;
  codeChallenge: string;
  /** RFC 9449 §10: the thumbprint of the DPoP key the code is to be bound to, when the client sent one. */
  dpopJkt: string | undefined;
  /** The request parameters to carry between the pages and validate again on every step. */
  params: Record<string, string>;
}

const CARRIED = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'dpop_jkt',
];

/** A JWK SHA-256 Thumbprint (RFC 7638 §3), base64url without padding: what dpop_jkt must be. */
const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

export async function validateAuthorizationRequest(
  { findClient, config }: Pick<OAuthContext, 'findClient' | 'config'>,
  source: unknown,
  res: Response,
): Promise<AuthorizationRequest> {
  const clientId = readParam(source, 'client_id');
  if (!clientId)
    throw new OAuthError('invalid_request', 'The request has no client_id. Start again from your app.');
  const client = await findClient(clientId, res.req);
  if (!client)
    throw new OAuthError(
      'invalid_request',
      'The app that sent you here is not registered with this service.',
    );
  const requestedUri = readParam(source, 'redirect_uri');
  if (!requestedUri)
    throw new OAuthError('invalid_request', 'The request has no redirect_uri. Start again from your app.');
  // RFC 9700 §4.1.3: exact matching; an unmatched URI could be an open redirect, so it is never followed.
  const redirectUri = matchRedirectUri(requestedUri, client.redirectUris);
  if (!redirectUri) throw unregisteredRedirect(requestedUri, client, config.clientDocuments.maxCacheMs);

  let state: string | undefined;
  try {
    state = readParam(source, 'state');
  } finally {
    // From here on the client is told about problems, by redirect (with state, when it could be read).
    res.locals.oauthRedirect = {
      redirectUri: requestedUri,
      state,
      trusted: config.isTrustedClient(client.clientId),
    } satisfies RedirectTarget;
  }

  const responseType = readParam(source, 'response_type');
  if (!responseType) throw new OAuthError('invalid_request', 'response_type is required; use "code".');
  if (responseType !== 'code' || !client.responseTypes.includes('code')) {
    throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported.');
  }

  const codeChallenge = readParam(source, 'code_challenge');
  const method = readParam(source, 'code_challenge_method');
  // RFC 9700 §2.1.1: PKCE is required, and only S256; "plain" or no method would allow a downgrade.
  if (!codeChallenge) throw new OAuthError('invalid_request', 'code_challenge is required (PKCE with S256).');
  if (method !== 'S256') throw new OAuthError('invalid_request', 'code_challenge_method must be S256.');
  if (!isValidCodeChallenge(codeChallenge)) {
    throw new OAuthError('invalid_request', 'code_challenge must be 43 to 128 base64url characters.');
  }

  const allowed = new Set(client.scope.split(' ').filter((scope) => config.scopeNames.has(scope)));
  const scopeParam = readParam(source, 'scope');
  const scopes = scopeParam === undefined ? [...allowed] : parseScope(scopeParam, allowed);
  if (scopes.length === 0) throw new OAuthError('invalid_scope', 'No scope was requested.');

  const resource = readResource(source, config.resources);
  // Read only while DPoP is on: a server without it ignores the parameter, as it would any unknown one.
  const dpopJkt = config.dpop ? readParam(source, 'dpop_jkt') : undefined;
  if (dpopJkt !== undefined && !THUMBPRINT.test(dpopJkt))
    throw new OAuthError(
      'invalid_request',
      'dpop_jkt must be the SHA-256 JWK thumbprint of your DPoP key (RFC 7638), 43 base64url characters.',
    );
  const params: Record<string, string> = {};
  for (const name of CARRIED) {
    const value = readParam(source, name);
    if (value !== undefined) params[name] = value;
  }
  return { client, redirectUri: requestedUri, state, scopes, resource, codeChallenge, dpopJkt, params };
}

/**
 * A redirect URI the client did not register: what happened, and what would fix it. Clients change their callbacks
 * (Cursor did twice) and keep the client_id registered with the old one; only a new registration, or for a document
 * client the document's next fetch, brings the new URI.
 */
function unregisteredRedirect(requestedUri: string, client: ClientRecord, documentLifetimeMs: number) {
  const uri = `The redirect URI "${requestedUri.slice(0, 200)}"`;
  const notSent = 'so this service will not send you there.';
  if (isClientIdUrl(client.clientId)) {
    return new OAuthError(
      'invalid_request',
      `${uri} is not listed in the app's metadata document (${client.clientId}), ${notSent} If the app has just ` +
        'changed its redirect URIs, try again later: the document is read again when the copy held here expires ' +
        `(within ${duration(documentLifetimeMs)}).`,
    );
  }
  return new OAuthError(
    'invalid_request',
    `${uri} is not registered for this app, ${notSent} The app must register with this service again (in most ` +
      'apps: remove this server and add it again).',
  );
}

/** "24 hours", "90 minutes". */
function duration(ms: number): string {
  const hours = ms / 3_600_000;
  if (Number.isInteger(hours)) return hours === 1 ? '1 hour' : `${hours} hours`;
  const minutes = Math.ceil(ms / 60_000);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}
