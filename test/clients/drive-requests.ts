// The requests a client sends by its habits: the authorization request (its scope, its resource, PKCE and state),
// the authorization response it reads back, and token requests with its authentication method.
import { randomBytes } from 'node:crypto';
import { pkcePair } from '../helpers/pkce';
import { readJson, refusal } from './drive-discovery';
import type { Discovery, Identity, Tokens } from './drive-types';
import type { ClientProfile } from './profile';

/** The scope of the authorization request, by the client's habit (the SDK falls back on scopes_supported). */
export function scopeToAsk(profile: ClientProfile, discovery: Discovery): string | undefined {
  const supported = (discovery.resource.scopes_supported ??
    discovery.server.scopes_supported ??
    []) as string[];
  let scopes: string[];
  switch (profile.scopeOnAuthorize) {
    case 'none':
      scopes = [];
      break;
    case 'from-challenge':
      scopes = discovery.challenge.scope?.split(' ') ?? supported;
      break;
    case 'scopes-supported':
      scopes = supported;
      break;
    default:
      scopes = profile.scopeOnAuthorize.split(' ');
  }
  const serverScopes = (discovery.server.scopes_supported ?? []) as string[];
  if (
    profile.asksOfflineAccess &&
    serverScopes.includes('offline_access') &&
    !scopes.includes('offline_access')
  ) {
    scopes = [...scopes, 'offline_access'];
  }
  return scopes.length ? scopes.join(' ') : undefined;
}

/** Whether the client sends `resource` at this step; `sometimes` sends it on authorize and exchange, on odd refreshes. */
export function sendsResource(
  profile: ClientProfile,
  at: 'authorize' | 'exchange' | { refresh: number },
): boolean {
  switch (profile.resource) {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'authorize-only':
      return at === 'authorize';
    case 'token-only':
      return at !== 'authorize';
    case 'sometimes':
      return typeof at === 'string' || at.refresh % 2 === 1;
  }
}

/** The `resource` parameter, when the client sends it at this step. */
export function resourceAt(
  profile: ClientProfile,
  discovery: Discovery,
  at: Parameters<typeof sendsResource>[1],
): Record<string, string> {
  return sendsResource(profile, at) ? { resource: discovery.resource.resource } : {};
}

/** The authorization request's URL, with a fresh PKCE pair and state (kept for the exchange and the response). */
export function authorizationRequest(
  profile: ClientProfile,
  discovery: Discovery,
  identity: Identity,
  redirectUri: string,
): { url: URL; state: string; codeVerifier: string } {
  const pkce = pkcePair();
  const state = randomBytes(16).toString('base64url');
  const url = new URL(discovery.server.authorization_endpoint);
  const scope = scopeToAsk(profile, discovery);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: identity.clientId,
    redirect_uri: redirectUri,
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    state,
    ...(scope ? { scope } : {}),
    ...resourceAt(profile, discovery, 'authorize'),
  }).toString();
  return { url, state, codeVerifier: pkce.verifier };
}

/** Where the browser came back: the code, once state, iss and the redirect URI are what the client expects. */
export function readAuthorizationResponse(
  location: string,
  redirectUri: string,
  state: string,
  issuer: string,
) {
  if (location.split('?')[0] !== redirectUri.split('?')[0]) {
    throw new Error(`sent back to ${location}, not to ${redirectUri}`);
  }
  const query = new URL(location).searchParams;
  if (query.get('error')) throw new Error(`${query.get('error')} ${query.get('error_description') ?? ''}`);
  if (query.get('state') !== state) throw new Error(`state came back as ${query.get('state')}`);
  // RFC 9207: the response names its issuer.
  if (query.get('iss') !== issuer) throw new Error(`iss came back as ${query.get('iss')}`);
  const code = query.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

/** A token request with the client's authentication method (RFC 6749 §2.3, RFC 7523 §2.2). */
export async function tokenRequest(
  discovery: Discovery,
  profile: ClientProfile,
  identity: Identity,
  params: Record<string, string>,
): Promise<Tokens> {
  const body = new URLSearchParams(params);
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-www-form-urlencoded',
    Accept: 'application/json',
  };
  switch (profile.authMethod) {
    case 'none':
      body.set('client_id', identity.clientId);
      break;
    case 'client_secret_post':
      body.set('client_id', identity.clientId);
      body.set('client_secret', identity.clientSecret ?? '');
      break;
    case 'client_secret_basic': {
      // RFC 6749 §2.3.1: both form-urlencoded before the Basic encoding.
      const pair = `${encodeURIComponent(identity.clientId)}:${encodeURIComponent(identity.clientSecret ?? '')}`;
      headers.Authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
      break;
    }
    case 'private_key_jwt':
      body.set('client_id', identity.clientId);
      body.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      // RFC 7523 §3: the token endpoint's URL as the audience (ChatGPT's, and accepted beside the issuer).
      body.set('client_assertion', identity.assertion!(discovery.server.token_endpoint));
      break;
  }
  const response = await fetch(discovery.server.token_endpoint, { method: 'POST', headers, body });
  const answer = await readJson(response, 'token endpoint');
  if (response.status !== 200) throw refusal(response.status, answer);
  for (const field of ['access_token', 'refresh_token'] as const) {
    if (typeof answer[field] !== 'string') {
      throw new Error(`200 without ${field} (it answered ${Object.keys(answer).join(', ')})`);
    }
  }
  return {
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token,
    scope: answer.scope ?? '',
    expiresIn: answer.expires_in,
  };
}
