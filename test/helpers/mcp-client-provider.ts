// An OAuthClientProvider of the official MCP SDK that keeps everything in memory and records where it was told to
// send the user: the client side of the journeys. Overrides make it a metadata-document or private_key_jwt client.
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export interface ProviderState {
  client: OAuthClientInformationMixed | undefined;
  tokens: OAuthTokens | undefined;
  verifier: string;
  authorizationUrls: URL[];
}

export function memoryProvider(redirectUrl: string, overrides: Partial<OAuthClientProvider> = {}) {
  const state: ProviderState = { client: undefined, tokens: undefined, verifier: '', authorizationUrls: [] };
  const provider: OAuthClientProvider = {
    redirectUrl,
    clientMetadata: {
      client_name: 'MCP SDK journey',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    },
    clientInformation: () => state.client,
    saveClientInformation: (client) => {
      state.client = client;
    },
    tokens: () => state.tokens,
    saveTokens: (tokens) => {
      state.tokens = tokens;
    },
    redirectToAuthorization: (url) => {
      state.authorizationUrls.push(url);
    },
    saveCodeVerifier: (verifier) => {
      state.verifier = verifier;
    },
    codeVerifier: () => state.verifier,
    // As real clients do: the SDK calls it when the server says a credential is dead (invalid_grant drops the tokens).
    invalidateCredentials: (scope) => {
      if (scope === 'all' || scope === 'tokens') state.tokens = undefined;
      if (scope === 'all' || scope === 'client') state.client = undefined;
      if (scope === 'all' || scope === 'verifier') state.verifier = '';
    },
    ...overrides,
  };
  return { provider, state };
}
