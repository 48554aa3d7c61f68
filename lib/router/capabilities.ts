// What the store can do decides what the router offers. OAuthStore has two optional methods; a store without one
// turns its features off, in the metadata and at every endpoint, the way the MCP SDK's optional provider methods
// switch endpoints off. The operator is told once, when the router is created, not on every refused request.
import type { OAuthConfig } from '../options';
import type { OAuthStore, UpstreamTokenStore } from '../store/types';

/** The config with the features the store cannot keep turned off; `warn` hears of each one. */
export function applyStoreCapabilities(
  store: OAuthStore,
  config: OAuthConfig,
  warn: (message: string) => void = console.warn,
): OAuthConfig {
  let adjusted = config;
  // Asked for by name, so refused at start rather than quietly turned off.
  if (config.upstream && typeof store.useAssertionId !== 'function')
    throw new TypeError(
      'createOAuthRouter: upstream sign-in needs a store with useAssertionId() (each provider callback is single-use ' +
        'across instances); the SQLite, PostgreSQL and memory stores have it.',
    );
  if (
    config.upstream?.keepsTokens &&
    typeof (store as Partial<UpstreamTokenStore>).saveUpstreamTokens !== 'function'
  )
    throw new TypeError(
      'createOAuthRouter: a provider keeps tokens (keepTokens), but the store does not keep them: implement ' +
        'UpstreamTokenStore (the SQLite, PostgreSQL and memory stores do), or drop keepTokens.',
    );
  // RFC 7523 §3 item 7: an assertion is single-use; without a store-wide record of its jti that cannot be kept.
  if (typeof store.useAssertionId !== 'function' && config.authMethods.includes('private_key_jwt')) {
    warn(
      'express-mcp-oauth: the store has no useAssertionId(), so private_key_jwt client authentication is off. ' +
        'Implement it (see OAuthStore) to offer it.',
    );
    adjusted = {
      ...adjusted,
      authMethods: adjusted.authMethods.filter((method) => method !== 'private_key_jwt'),
    };
  }
  // The extension §7.4.2 makes an ID-JAG's jti single-use: without the same record the grant cannot be offered.
  if (typeof store.useAssertionId !== 'function' && config.enterpriseIdps) {
    warn(
      'express-mcp-oauth: the store has no useAssertionId(), so the jwt-bearer grant (enterpriseIdps) is off. ' +
        'Implement it (see OAuthStore) to offer it.',
    );
    adjusted = { ...adjusted, enterpriseIdps: undefined };
  }
  // SEP-1933 asks for a jti "to prevent replay attacks": without the record, a copied workload JWT could be replayed.
  if (typeof store.useAssertionId !== 'function' && config.workloadIdentity) {
    warn(
      'express-mcp-oauth: the store has no useAssertionId(), so workload identity federation is off. ' +
        'Implement it (see OAuthStore) to offer it.',
    );
    adjusted = { ...adjusted, workloadIdentity: undefined };
  }
  // RFC 9449 §11.1: a proof is for one request; without a store-wide record of its jti, a copy could be replayed.
  if (typeof store.useAssertionId !== 'function' && config.dpop) {
    warn(
      'express-mcp-oauth: the store has no useAssertionId(), so DPoP is off (clients get bearer tokens). ' +
        'Implement it (see OAuthStore) to offer it.',
    );
    adjusted = { ...adjusted, dpop: undefined };
  }
  // A document client's grant must name a stored copy of the document, written in the same step as the grant.
  if (typeof store.createGrantWithClient !== 'function' && config.clientDocuments.enabled) {
    warn(
      'express-mcp-oauth: the store has no createGrantWithClient(), so Client ID Metadata Documents are off. ' +
        'Implement it (see OAuthStore) to accept them, or set clientMetadataDocuments: { enabled: false }.',
    );
    adjusted = { ...adjusted, clientDocuments: { ...adjusted.clientDocuments, enabled: false } };
  }
  // A device authorization is decided in one browser and redeemed by a device polling any instance; its polls are
  // spaced by a record of each one's time (useAssertionId), which must be shared too.
  const devices =
    typeof store.saveDeviceAuthorization === 'function' &&
    typeof store.findDeviceAuthorization === 'function' &&
    typeof store.decideDeviceAuthorization === 'function' &&
    typeof store.redeemDeviceAuthorization === 'function' &&
    typeof store.useAssertionId === 'function';
  if (!devices && adjusted.deviceAuthorization) {
    warn(
      'express-mcp-oauth: the store lacks the device authorization methods (saveDeviceAuthorization, ' +
        'findDeviceAuthorization, decideDeviceAuthorization, redeemDeviceAuthorization) or useAssertionId(), so the ' +
        'device authorization grant is off. Implement them (see OAuthStore) to offer it.',
    );
    const { deviceAuthorization: _endpoint, device: _page, ...endpoints } = adjusted.endpoints;
    adjusted = { ...adjusted, deviceAuthorization: undefined, endpoints };
  }
  // The mark a refused tool leaves on its grant must be seen by the refresh, on whichever instance it comes to.
  const marks =
    typeof store.markScopeChallenge === 'function' && typeof store.takeScopeChallenge === 'function';
  if (!marks && config.stepUpWindowMs > 0) {
    warn(
      'express-mcp-oauth: the store has no markScopeChallenge() and takeScopeChallenge(), so the step-up window is ' +
        'off (a client that refreshes after a scope refusal is not sent to ask the user). Implement them (see ' +
        'OAuthStore), or set stepUpWindowMs: 0.',
    );
    adjusted = { ...adjusted, stepUpWindowMs: 0 };
  }
  return adjusted;
}
