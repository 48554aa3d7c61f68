// panva's oidc-provider as a token-endpoint baseline: the same public client and grants as ours, in memory (a plain
// Map adapter), access tokens as ES256 JWTs for RESOURCE, refresh tokens rotated on every use. Its codes and refresh
// tokens are seeded at startup through its own models, with values the load side rebuilds from the counts alone.
// oidc-provider is an ES module with no type declarations: imported dynamically, and typed by the little used here.
import { createPrivateKey } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import { s256Challenge } from '../lib/crypto/pkce';
import { ISSUER, RESOURCE, VERIFIER } from './fixtures';

/** What the load side needs to drive oidc-provider: ids it can rebuild from the counts alone. */
export const OIDC_CLIENT_ID = 'oidc-bench-client';
export const OIDC_REDIRECT_URI = 'http://127.0.0.1:9/callback';
export const OIDC_TOKEN_PATH = '/token';
/** oidc-provider stores an opaque token under its jti and hands the jti out as its value: seeded jtis are these. */
export const oidcCode = (i: number) => `oidc-code-${i}`;
export const oidcRefreshToken = (i: number) => `oidc-refresh-${i}`;

const ACCOUNT_ID = 'bench-user';
const SCOPE = 'fakture:read clients:read';
const DAY = 86_400;

interface Model {
  save(): Promise<string>;
}
interface OidcProvider {
  Grant: new (init: { accountId: string; clientId: string }) => Model & {
    addResourceScope(resource: string, scope: string): void;
  };
  AuthorizationCode: new (init: Record<string, unknown>) => Model;
  RefreshToken: new (init: Record<string, unknown>) => Model;
  Client: { find(id: string): Promise<unknown> };
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
}
type ProviderClass = new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;

type Payload = { grantId?: string; uid?: string; userCode?: string; consumed?: number };

/**
 * oidc-provider's storage interface over plain Maps, one adapter per model. Expiry is not tracked: the models check
 * `exp` themselves on every find, and nothing seeded or issued here expires during a run.
 */
class MapAdapter {
  readonly #entries = new Map<string, Payload>();
  readonly #byGrant = new Map<string, Set<string>>();
  readonly #byUid = new Map<string, string>();
  readonly #byUserCode = new Map<string, string>();

  async upsert(id: string, payload: Payload) {
    this.#entries.set(id, payload);
    if (payload.grantId !== undefined) {
      const ids = this.#byGrant.get(payload.grantId) ?? new Set();
      this.#byGrant.set(payload.grantId, ids.add(id));
    }
    if (payload.uid !== undefined) this.#byUid.set(payload.uid, id);
    if (payload.userCode !== undefined) this.#byUserCode.set(payload.userCode, id);
  }

  async find(id: string) {
    return this.#entries.get(id);
  }

  async findByUid(uid: string) {
    const id = this.#byUid.get(uid);
    return id === undefined ? undefined : this.#entries.get(id);
  }

  async findByUserCode(userCode: string) {
    const id = this.#byUserCode.get(userCode);
    return id === undefined ? undefined : this.#entries.get(id);
  }

  async consume(id: string) {
    const payload = this.#entries.get(id);
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }

  // The indexes may keep a destroyed id: every lookup through them ends in #entries, which no longer has it.
  async destroy(id: string) {
    this.#entries.delete(id);
  }

  async revokeByGrantId(grantId: string) {
    for (const id of this.#byGrant.get(grantId) ?? []) this.#entries.delete(id);
    this.#byGrant.delete(grantId);
  }
}

/** Ours issues ES256 JWTs for RESOURCE valid 3600 s, with the grant's scopes and no ID token: the same here. */
function configuration(keyPem: string): Record<string, unknown> {
  const jwk = {
    ...createPrivateKey(keyPem).export({ format: 'jwk' }),
    kid: 'bench',
    alg: 'ES256',
    use: 'sig',
  };
  return {
    adapter: MapAdapter,
    clients: [
      {
        client_id: OIDC_CLIENT_ID,
        redirect_uris: [OIDC_REDIRECT_URI],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [jwk] },
    // The client's default ID token algorithm (RS256) needs an RSA key, and without one the client is refused. No
    // ID token is issued here (no `openid` scope), but the only key must serve the default too.
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    routes: { token: OIDC_TOKEN_PATH },
    // Required, as ours requires it (already oidc-provider's default for a public client).
    pkce: { required: () => true },
    features: {
      // No interactions here (the codes are seeded), and enabled it prints a warning.
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: SCOPE,
          audience: RESOURCE,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    // As ours: a refresh token with every code (its default asks for offline_access), a new one on every refresh.
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    findAccount: (_ctx: unknown, accountId: string) => ({ accountId, claims: () => ({ sub: accountId }) }),
    // Ours: access tokens for an hour, codes for 10 minutes, grants and refresh tokens for 30 days. Numbers rather
    // than its default functions, which also print a notice on their first call.
    ttl: { AccessToken: 3600, AuthorizationCode: 600, Grant: 30 * DAY, RefreshToken: 30 * DAY },
  };
}

/** One grant per authorization, as a consent makes it, with the resource's scopes. */
function saveGrant(provider: OidcProvider): Promise<string> {
  const grant = new provider.Grant({ accountId: ACCOUNT_ID, clientId: OIDC_CLIENT_ID });
  grant.addResourceScope(RESOURCE, SCOPE);
  return grant.save();
}

/**
 * The codes and refresh tokens the bench redeems, each with its own grant. Codes last an hour rather than the 10
 * minutes of the configuration, as our own bench codes do: a run outlasts them.
 */
async function seed(provider: OidcProvider, counts: { codes: number; refreshTokens: number }) {
  const client = await provider.Client.find(OIDC_CLIENT_ID);
  const common = { client, accountId: ACCOUNT_ID, scope: SCOPE, resource: RESOURCE };
  const codeChallenge = s256Challenge(VERIFIER);
  for (let i = 0; i < counts.codes; i += 1) {
    const code = new provider.AuthorizationCode({
      ...common,
      jti: oidcCode(i),
      grantId: await saveGrant(provider),
      redirectUri: OIDC_REDIRECT_URI,
      codeChallenge,
      codeChallengeMethod: 'S256',
      expiresIn: 3600,
    });
    await code.save();
  }
  for (let i = 0; i < counts.refreshTokens; i += 1) {
    const refreshToken = new provider.RefreshToken({
      ...common,
      jti: oidcRefreshToken(i),
      grantId: await saveGrant(provider),
      gty: 'authorization_code',
      rotations: 0,
    });
    await refreshToken.save();
  }
}

/** oidc-provider mounted at the root of an Express app, its token endpoint at OIDC_TOKEN_PATH. */
export async function oidcProviderApp(
  keyPem: string,
  counts: { codes: number; refreshTokens: number },
): Promise<Express> {
  // A specifier TypeScript does not resolve, as the package has no type declarations: ProviderClass types it here.
  const specifier = 'oidc-provider';
  const { default: Provider } = (await import(specifier)) as { default: ProviderClass };
  const provider = new Provider(ISSUER, configuration(keyPem));
  await seed(provider, counts);
  const app = express();
  app.disable('x-powered-by');
  app.use(provider.callback());
  return app;
}
