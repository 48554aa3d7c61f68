// The `upstream` option: sign-in through identity providers the users already have (OpenID Connect by discovery, or
// a plain OAuth 2 provider given its endpoints), parsed once and checked so that a mistake stops the app at start.
import type { Request } from 'express';
import type { OAuthUser } from '../options';
import type { MaybePromise } from '../store/types';

/** Who signed in at the upstream provider, as the host app's `findUser` sees it. */
export interface UpstreamIdentity {
  /** The provider's id (UpstreamProviderOptions.id). */
  provider: string;
  /** The provider's stable identifier of the person (OpenID `sub`; GitHub's numeric `id`, as a string). */
  sub: string;
  email?: string;
  /** Whether the provider says it verified `email`; false when it does not say. */
  emailVerified: boolean;
  name?: string;
  /** Every claim read: the ID token's and the user-info answer's (OpenID), or the user-info answer (plain OAuth 2). */
  claims: Readonly<Record<string, unknown>>;
}

/** What a plain OAuth 2 provider's `identity` reader is given besides the user-info answer. */
export interface UpstreamIdentityContext {
  /** The user's fresh upstream access token. */
  accessToken: string;
  /** GETs another URL of the provider's API with that token and returns its JSON (GitHub's /user/emails, say). */
  fetchJson(url: string): Promise<unknown>;
}

/** One upstream provider. Give `issuer` for OpenID Connect, or the endpoints for a plain OAuth 2 provider. */
interface UpstreamProviderOptions {
  /** A short id, `[a-z0-9-]`, unique: it names the provider in forms, events, identities and stored tokens. */
  id: string;
  /** The provider's name as people know it: the sign-in page offers "Continue with <name>". */
  name: string;
  /** OpenID Connect: the issuer, whose metadata is discovered (`/.well-known/openid-configuration`). */
  issuer?: string;
  /** Plain OAuth 2: where the browser is sent to sign in. */
  authorizationEndpoint?: string;
  /** Plain OAuth 2: where the code is exchanged. */
  tokenEndpoint?: string;
  /** Plain OAuth 2 (required) or OpenID (default: the discovered one): a GET with the token returns the profile. */
  userInfoEndpoint?: string;
  /** Plain OAuth 2: RFC 7009 revocation, called when a grant ends (an OpenID provider's is discovered). */
  revocationEndpoint?: string;
  clientId: string;
  /** The client secret (client_secret_basic); omit for a public client (PKCE alone). */
  clientSecret?: string;
  /** The scopes asked upstream. Default `openid email profile` (OpenID), none (plain OAuth 2). */
  scope?: string;
  /** More parameters of the upstream authorization request, e.g. `{ access_type: 'offline', prompt: 'consent' }`. */
  authorizationParams?: Readonly<Record<string, string>>;
  /**
   * Keep the user's upstream access and refresh tokens, sealed, with the grant, for tools to call the provider's API
   * (router.upstreamToken). Default false: the tokens are dropped once the identity is read.
   */
  keepTokens?: boolean;
  /**
   * Reads the identity from the user-info answer (plain OAuth 2). Default: `sub` or `id`, `email`, `email_verified`,
   * `name` or `login`. GitHub's verified email comes from /user/emails: read it with `context.fetchJson`.
   */
  identity?: (
    profile: Record<string, unknown>,
    context: UpstreamIdentityContext,
  ) => MaybePromise<Omit<UpstreamIdentity, 'provider' | 'claims'>>;
  /** Seconds an upstream request may take. Default 10. */
  timeoutSeconds?: number;
}

/** Sign-in through upstream providers (the `upstream` option). */
export interface UpstreamOptions {
  /** One or more providers, offered side by side on the sign-in page in this order. */
  providers: readonly UpstreamProviderOptions[];
  /**
   * The host app's user for an upstream identity, or null to refuse it (the browser gets a page saying no account
   * matches). Called only with a verified email unless `requireVerifiedEmail` is false.
   */
  findUser(identity: UpstreamIdentity, req: Request): MaybePromise<OAuthUser | null | undefined>;
  /**
   * Refuse an identity whose email is missing or not verified by the provider, before findUser. Default true: an
   * unverified email is anyone's claim (the usual account takeover through an upstream provider).
   */
  requireVerifiedEmail?: boolean;
}

/** A provider as the router uses it. */
export interface UpstreamProvider extends Readonly<Omit<UpstreamProviderOptions, 'timeoutSeconds'>> {
  kind: 'oidc' | 'oauth2';
  /**
   * After the callback path: '' for a lone provider, `/<id>` each when there are several. RFC 9700 §4.4.2: a redirect
   * URI per provider tells the callback which one answered, also from one that sends no `iss` (GitHub).
   */
  callbackSuffix: string;
  scope: string;
  keepTokens: boolean;
  timeoutSeconds: number;
}

export interface UpstreamConfig {
  providers: ReadonlyMap<string, UpstreamProvider>;
  findUser: UpstreamOptions['findUser'];
  requireVerifiedEmail: boolean;
  /** Whether any provider keeps tokens (the store must then keep them: UpstreamTokenStore). */
  keepsTokens: boolean;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Parses the `upstream` option; `fail` throws with the router's prefix. */
export function parseUpstreamOptions(
  given: UpstreamOptions | undefined,
  fail: (message: string) => never,
): UpstreamConfig | undefined {
  if (given === undefined) return undefined;
  if (!given || typeof given !== 'object' || !Array.isArray(given.providers) || given.providers.length === 0)
    fail(
      'upstream must be { providers: [{ id, name, issuer, clientId, clientSecret }], findUser(identity) }.',
    );
  if (typeof given.findUser !== 'function')
    fail(
      'upstream.findUser must be a function (identity, req) => user or null: it maps who signed in to a user.',
    );
  const providers = new Map<string, UpstreamProvider>();
  const several = given.providers.length > 1;
  for (const options of given.providers) {
    const provider = { ...parseProvider(options, fail), callbackSuffix: several ? `/${options.id}` : '' };
    if (providers.has(provider.id)) fail(`upstream.providers: the id "${provider.id}" is used twice.`);
    providers.set(provider.id, Object.freeze(provider));
  }
  return {
    providers,
    findUser: given.findUser,
    requireVerifiedEmail: given.requireVerifiedEmail !== false,
    keepsTokens: [...providers.values()].some((provider) => provider.keepTokens),
  };
}

function parseProvider(
  options: UpstreamProviderOptions,
  fail: (message: string) => never,
): Omit<UpstreamProvider, 'callbackSuffix'> {
  const id = options?.id;
  if (typeof id !== 'string' || !/^[a-z0-9][a-z0-9-]{0,31}$/.test(id))
    fail(
      `upstream.providers: id must be 1 to 32 of a-z, 0-9 and "-", e.g. "google"; got ${JSON.stringify(id)}.`,
    );
  const where = `upstream provider "${id}"`;
  if (typeof options.name !== 'string' || !options.name.trim())
    fail(`${where}: give a name, shown as "Continue with <name>".`);
  if (typeof options.clientId !== 'string' || !options.clientId)
    fail(`${where}: give the clientId registered at the provider.`);
  if (options.clientSecret !== undefined && typeof options.clientSecret !== 'string')
    fail(`${where}: clientSecret must be a string.`);
  const url = (name: keyof UpstreamProviderOptions) => {
    const value = options[name];
    if (value === undefined) return undefined;
    let parsed: URL | undefined;
    try {
      parsed = typeof value === 'string' ? new URL(value) : undefined;
    } catch {
      parsed = undefined;
    }
    // Tokens and codes travel to these URLs: https, or http on this machine only (a provider inside the tests).
    if (
      !parsed ||
      !(parsed.protocol === 'https:' || (parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname)))
    )
      fail(`${where}: ${name} must be an https URL (http only on localhost); got ${JSON.stringify(value)}.`);
    return value as string;
  };
  const issuer = url('issuer');
  const endpoints = {
    authorizationEndpoint: url('authorizationEndpoint'),
    tokenEndpoint: url('tokenEndpoint'),
    userInfoEndpoint: url('userInfoEndpoint'),
    revocationEndpoint: url('revocationEndpoint'),
  };
  if (!issuer && !(endpoints.authorizationEndpoint && endpoints.tokenEndpoint && endpoints.userInfoEndpoint))
    fail(
      `${where}: give issuer (OpenID Connect, discovered) or authorizationEndpoint, tokenEndpoint and ` +
        'userInfoEndpoint (plain OAuth 2).',
    );
  if (issuer && (endpoints.authorizationEndpoint || endpoints.tokenEndpoint))
    fail(`${where}: give issuer or the endpoints, not both: an OpenID provider's endpoints are discovered.`);
  if (options.identity !== undefined && typeof options.identity !== 'function')
    fail(`${where}: identity must be a function (profile, context) => { sub, email, emailVerified, name }.`);
  const timeoutSeconds = options.timeoutSeconds ?? 10;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 60)
    fail(`${where}: timeoutSeconds must be a whole number from 1 to 60.`);
  const params = options.authorizationParams ?? {};
  if (typeof params !== 'object' || Object.values(params).some((value) => typeof value !== 'string'))
    fail(`${where}: authorizationParams must map names to strings.`);
  const scope = options.scope ?? (issuer ? 'openid email profile' : '');
  if (typeof scope !== 'string') fail(`${where}: scope must be a string of space-separated scopes.`);
  if (issuer && !scope.split(' ').includes('openid'))
    fail(`${where}: an OpenID provider's scope must include "openid".`);
  return Object.freeze({
    ...options,
    ...endpoints,
    issuer,
    name: options.name.trim(),
    kind: issuer ? 'oidc' : 'oauth2',
    scope,
    authorizationParams: Object.freeze({ ...params }),
    keepTokens: options.keepTokens === true,
    timeoutSeconds,
  });
}
