// The client side of upstream sign-in, done by openid-client (panva): discovery, the authorization URL, the code
// exchange with its checks (PKCE, state, nonce, RFC 9207 iss, the ID token), user info, refresh and revocation.
// openid-client is an ES module, loaded on first use so that a router without upstream providers never needs it.
import type { UpstreamIdentity, UpstreamProvider } from './options';

type OpenIdClient = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });
type Configuration = InstanceType<OpenIdClient['Configuration']>;

let loading: Promise<OpenIdClient> | undefined;
/** openid-client, imported once. */
function openIdClient(): Promise<OpenIdClient> {
  loading ??= import('openid-client').catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** The upstream tokens a grant may keep: what a refresh replaces. */
export interface UpstreamTokenSet {
  accessToken: string;
  tokenType: string;
  refreshToken?: string;
  /** When the access token expires (ms since the epoch), or absent when the provider did not say. */
  expiresAt?: number;
  scope?: string;
}

/** Why an upstream step failed: the provider could not be reached, or it answered something we refuse. */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  constructor(
    readonly kind: 'unavailable' | 'invalid',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The checks of one authorization request, kept by the browser between the start and the callback. */
interface UpstreamChecks {
  state: string;
  nonce?: string;
  codeVerifier: string;
}

export interface UpstreamConnection {
  /** A fresh authorization request: its URL and the checks the callback needs. */
  authorize(redirectUri: string): Promise<{ url: URL; checks: UpstreamChecks }>;
  /** Redeems the callback's code (all checks made) and reads who signed in. */
  exchange(
    callbackUrl: URL,
    redirectUri: string,
    checks: UpstreamChecks,
    now: number,
  ): Promise<{ tokens: UpstreamTokenSet; identity: Omit<UpstreamIdentity, 'provider'> }>;
  refresh(refreshToken: string, now: number): Promise<UpstreamTokenSet>;
  /** RFC 7009 revocation when the provider offers it; false when it does not. */
  revoke(token: string, hint: 'refresh_token' | 'access_token'): Promise<boolean>;
}

/** Connections to each provider, made on first use; a failed discovery is tried again at the next use. */
export function createUpstreamConnector(): (provider: UpstreamProvider) => Promise<UpstreamConnection> {
  const connections = new Map<string, Promise<UpstreamConnection>>();
  return (provider) => {
    let connection = connections.get(provider.id);
    if (!connection) {
      connection = connect(provider).catch((error: unknown) => {
        connections.delete(provider.id);
        throw classify(error, `${provider.name} could not be discovered`);
      });
      connections.set(provider.id, connection);
    }
    return connection;
  };
}

/** Whether the provider answered with this OAuth error code (RFC 6749 §5.2), anywhere in the error's chain. */
export function isOAuthErrorAnswer(error: unknown, codes: readonly string[]): boolean {
  for (let link: unknown = error, depth = 0; link && depth < 4; depth++) {
    const failure = link as { error?: unknown; cause?: unknown };
    if (typeof failure.error === 'string' && codes.includes(failure.error)) return true;
    link = failure.cause;
  }
  return false;
}

/** An openid-client error as an UpstreamError: a network failure or timeout is `unavailable`, the rest `invalid`. */
export function classify(error: unknown, what: string): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  // openid-client wraps a network failure ("something went wrong", caused by fetch's TypeError): read the chain.
  // Names, not instanceof: its errors may come from another realm (a VM context under a test runner).
  let unreachable = false;
  for (let link: unknown = error, depth = 0; link && depth < 4; depth++) {
    const failure = link as { name?: unknown; message?: unknown; status?: unknown; cause?: unknown };
    unreachable ||=
      (failure.name === 'TypeError' && failure.message === 'fetch failed') ||
      /^(TimeoutError|AbortError)$/.test(String(failure.name)) ||
      // A provider answering 5xx is down too, whatever its body says.
      (typeof failure.status === 'number' && failure.status >= 500);
    link = failure.cause;
  }
  return new UpstreamError(unreachable ? 'unavailable' : 'invalid', `${what}: ${text}`, { cause: error });
}

async function connect(provider: UpstreamProvider): Promise<UpstreamConnection> {
  const client = await openIdClient();
  const insecure = (url: string | undefined) => url?.startsWith('http:') === true;
  let config: Configuration;
  if (provider.kind === 'oidc') {
    // client_secret_basic: the default of RFC 6749 §2.3.1 and OpenID Connect; a public client proves PKCE alone.
    const auth = provider.clientSecret ? client.ClientSecretBasic(provider.clientSecret) : client.None();
    config = await client.discovery(new URL(provider.issuer!), provider.clientId, undefined, auth, {
      execute: insecure(provider.issuer) ? [client.allowInsecureRequests] : [],
      timeout: provider.timeoutSeconds,
    });
  } else {
    const server = {
      // A plain OAuth 2 provider has no issuer identifier; an `iss` in its callback is compared with this.
      issuer: new URL(provider.authorizationEndpoint!).origin,
      authorization_endpoint: provider.authorizationEndpoint,
      token_endpoint: provider.tokenEndpoint,
      revocation_endpoint: provider.revocationEndpoint,
    };
    // client_secret_post: what GitHub and most plain OAuth 2 providers document.
    const auth = provider.clientSecret ? client.ClientSecretPost(provider.clientSecret) : client.None();
    config = new client.Configuration(server, provider.clientId, undefined, auth);
    if (insecure(provider.authorizationEndpoint) || insecure(provider.tokenEndpoint))
      client.allowInsecureRequests(config);
  }
  config.timeout = provider.timeoutSeconds;
  const metadata = config.serverMetadata();
  const userInfoEndpoint = provider.userInfoEndpoint ?? metadata.userinfo_endpoint;

  const fetchJson = async (accessToken: string, url: string): Promise<unknown> => {
    const response = await client.fetchProtectedResource(config, accessToken, new URL(url), 'GET');
    if (!response.ok) throw new UpstreamError('invalid', `${url} answered HTTP ${response.status}`);
    return response.json();
  };
  const tokenSet = (
    answer: {
      access_token: string;
      token_type: string;
      refresh_token?: string;
      expires_in?: number;
      scope?: string;
    },
    now: number,
    previousRefresh?: string,
  ): UpstreamTokenSet => ({
    accessToken: answer.access_token,
    tokenType: answer.token_type,
    // RFC 6749 §6: a refresh answer without a refresh token leaves the one held valid.
    refreshToken: answer.refresh_token ?? previousRefresh,
    expiresAt: typeof answer.expires_in === 'number' ? now + answer.expires_in * 1000 : undefined,
    scope: answer.scope,
  });

  return {
    async authorize(redirectUri) {
      const codeVerifier = client.randomPKCECodeVerifier();
      const checks: UpstreamChecks = {
        state: client.randomState(),
        codeVerifier,
        ...(provider.kind === 'oidc' ? { nonce: client.randomNonce() } : {}),
      };
      const params: Record<string, string> = {
        // The host app's extra parameters first, so none of them can replace a check.
        ...provider.authorizationParams,
        redirect_uri: redirectUri,
        response_type: 'code',
        state: checks.state,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        ...(checks.nonce ? { nonce: checks.nonce } : {}),
        ...(provider.scope ? { scope: provider.scope } : {}),
      };
      return { url: client.buildAuthorizationUrl(config, params), checks };
    },

    async exchange(callbackUrl, redirectUri, checks, now) {
      const answer = await client.authorizationCodeGrant(
        config,
        callbackUrl,
        {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          ...(checks.nonce ? { expectedNonce: checks.nonce } : {}),
          idTokenExpected: provider.kind === 'oidc',
        },
        { redirect_uri: redirectUri },
      );
      const tokens = tokenSet(answer, now);
      if (provider.kind === 'oidc') {
        const idClaims = { ...answer.claims() } as Record<string, unknown>;
        let claims = idClaims;
        // Many providers (oidc-provider by default) put email only in user info: ask when the ID token lacks it.
        if ((idClaims.email === undefined || idClaims.email_verified === undefined) && userInfoEndpoint) {
          // fetchUserInfo checks that the answer is about the ID token's sub (OpenID Connect Core §5.3.2).
          const info = (await client.fetchUserInfo(
            config,
            tokens.accessToken,
            String(idClaims.sub),
          )) as Record<string, unknown>;
          // An email and the word that it is verified are one claim: never one address with another's verification.
          const pair = info.email !== undefined ? info : idClaims;
          claims = { ...info, ...idClaims, email: pair.email, email_verified: pair.email_verified };
        }
        return { tokens, identity: readIdentity(claims) };
      }
      const profile = (await fetchJson(tokens.accessToken, userInfoEndpoint!)) as Record<string, unknown>;
      if (!profile || typeof profile !== 'object')
        throw new UpstreamError('invalid', 'user info is not an object');
      const read = provider.identity
        ? await provider.identity(profile, {
            accessToken: tokens.accessToken,
            fetchJson: (url) => fetchJson(tokens.accessToken, url),
          })
        : readIdentity(profile);
      if (!read || typeof read.sub !== 'string' || !read.sub)
        throw new UpstreamError('invalid', 'the identity has no sub');
      return { tokens, identity: { ...read, emailVerified: read.emailVerified === true, claims: profile } };
    },

    async refresh(refreshToken, now) {
      return tokenSet(await client.refreshTokenGrant(config, refreshToken), now, refreshToken);
    },

    async revoke(token, hint) {
      if (!config.serverMetadata().revocation_endpoint) return false;
      await client.tokenRevocation(config, token, { token_type_hint: hint });
      return true;
    },
  };
}

/** The identity in OpenID claims (or a profile shaped like them: `id` and `login` as GitHub names them). */
function readIdentity(claims: Record<string, unknown>): Omit<UpstreamIdentity, 'provider'> {
  const sub = claims.sub ?? claims.id;
  if ((typeof sub !== 'string' && typeof sub !== 'number') || sub === '')
    throw new UpstreamError('invalid', 'the identity has no sub');
  const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  return {
    sub: String(sub),
    email: text(claims.email),
    // OpenID Connect Core §5.1: only `true` means verified (some providers send the string "true").
    emailVerified: claims.email_verified === true || claims.email_verified === 'true',
    name: text(claims.name) ?? text(claims.login),
    claims: Object.freeze({ ...claims }),
  };
}
