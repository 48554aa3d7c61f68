// The router's public options, parsed once into an internal config. Every mistake fails here, at startup, with a
// message that says how to fix it.
import { randomBytes } from 'node:crypto';
import { isAbsolute } from 'node:path';
import type { Request } from 'express';
import type { Store } from 'express-rate-limit';
import type { MaybePromise, TokenEndpointAuthMethod } from './store/types';
import { OFFLINE_ACCESS, type ScopeCatalogue } from './util/scopes';
import type { OAuthEvent } from './events';
import { parsePaths, type EndpointPaths } from './paths';
import {
  parseRefreshTokenReuse,
  type RefreshTokenReuseOptions,
  type RefreshTokenReusePolicy,
} from './grants/reuse-options';
import { parseRateLimits, type RateLimitConfig, type RateLimitOptions } from './rate-limit-options';
import {
  parseClientDocumentOptions,
  type ClientDocumentConfig,
  type ClientMetadataDocumentOptions,
} from './cimd/options';
import { parseEnterpriseIdps, type EnterpriseIdpConfig, type EnterpriseIdpOptions } from './id-jag/options';
import { parseDpopOptions, type DpopConfig, type DpopOptions } from './dpop/options';
import { parsePageOptions, type PageOptions, type PagesConfig } from './i18n/options';
import { parseUpstreamOptions, type UpstreamConfig, type UpstreamOptions } from './upstream/options';
import {
  parseTokenExchange,
  type TokenExchangeConfig,
  type TokenExchangeOptions,
} from './token-exchange/options';
import {
  parseWorkloadIdentity,
  type WorkloadIdentityConfig,
  type WorkloadIdentityOptions,
} from './workload/options';
import { parseStepUpWindowMs } from './grants/step-up-window';
import {
  parseOperatorResources,
  type OperatorResource,
  type OperatorResourceConfig,
} from './grants/operator-resources';
import {
  parseDeviceAuthorization,
  type DeviceAuthorizationConfig,
  type DeviceAuthorizationOptions,
} from './device/options';

export interface BearerCacheOptions {
  /** How many verified tokens to remember (the oldest go first). 0 turns the token cache off. Default 10,000. */
  accessTokens?: number;
  /** How long an "active" answer about a grant is trusted, in milliseconds. 0 asks the store every time. Default 1000. */
  grantStatusMs?: number;
}

/** A signed-in user, as the host app describes it. */
export interface OAuthUser {
  /** A stable id: it becomes the access token's `sub`. */
  id: string;
  /** Shown on the consent page. */
  name?: string;
  email?: string;
}

/** Lifetimes, in seconds. */
export interface LifetimeOptions {
  /** Default 600 (10 minutes). */
  authorizationCode?: number;
  /** Default 3600 (60 minutes). */
  accessToken?: number;
  /** How long a grant and its refresh tokens last. Default 2,592,000 (30 days). */
  refreshToken?: number;
  /** How long the sign-in cookie remembers the user. Default 1800 (30 minutes). */
  signIn?: number;
}

/** The options of createOAuthRouter. */
export interface OAuthRouterOptions {
  /** The public base URL: the issuer (RFC 8414 §2). https, or http on a loopback host. */
  issuer: string;
  /** The protected resources (RFC 8707), such as `${issuer}/mcp`. The first is the default. Default [`${issuer}/mcp`]. */
  resources?: string[];
  /**
   * The scope catalogue (required): each scope your tools check, with the plain words the consent page shows,
   * e.g. `{ 'notes:read': 'Read your notes', 'notes:write': 'Change your notes' }`.
   */
  scopes: Record<string, string>;
  /** Where the endpoints live below the issuer. Default: `/v1/oauth/authorize`, `/v1/oauth/token`, ... (see README). */
  paths?: Partial<EndpointPaths>;
  lifetimes?: LifetimeOptions;
  /**
   * How a refresh token presented again after its first use is answered: with the same successor within `window`
   * seconds (default a day), and at any time while nobody has used its successor (`untilSuccessorUsed`, default
   * true); otherwise the grant is revoked as reuse. `'strict'`: a minute, and never after (README, "Refresh tokens").
   */
  refreshTokenReuse?: RefreshTokenReuseOptions | 'strict';
  /** Checks an email and password from the built-in sign-in form; returns the user, or null. */
  authenticateUser?: (
    email: string,
    password: string,
    req: Request,
  ) => MaybePromise<OAuthUser | null | undefined>;
  /** Returns the user already signed in to the host app (its own session), or null. */
  getSessionUser?: (req: Request) => MaybePromise<OAuthUser | null | undefined>;
  /** With getSessionUser and no authenticateUser: where to send a browser that is not signed in. */
  signInUrl?: (returnTo: string, req: Request) => string;
  /**
   * Sign-in through upstream providers (OpenID Connect by discovery, or plain OAuth 2 such as GitHub), offered as
   * "Continue with <name>" on the sign-in page, with `findUser` mapping who signed in to your user; optionally
   * keeping the user's upstream tokens for your tools (router.upstreamToken).
   */
  upstream?: UpstreamOptions;
  /**
   * Key for the sign-in cookie, CSRF tokens, pending requests and refresh-token successors: at least 32 bytes.
   * Default: random per process, so none of them survives a restart or reaches another instance: set it.
   */
  secret?: string | Buffer;
  /** Rate limits per endpoint, or false to turn them all off (load tests only). */
  rateLimits?: RateLimitOptions | false;
  /** Absolute paths of EJS templates that replace the built-in pages. */
  views?: { login?: string; consent?: string; error?: string };
  /**
   * The built-in pages' languages (English built in; each page in the one that best fits Accept-Language), a language
   * to force, a logo and an accent colour.
   */
  pages?: PageOptions;
  /** The service's name, shown on the pages. Default "this service". */
  serviceName?: string;
  /** A URL of human-readable documentation, published as service_documentation. */
  serviceDocumentation?: string;
  /** The clock, in milliseconds. Default Date.now. */
  now?: () => number;
  /** Called with every unexpected error (answered as server_error). Default: console.error. */
  onError?: (error: unknown, req: Request) => void;
  /**
   * Told of every audit event (a client registered, a sign-in, a consent, a code redeemed, a refresh, a reuse, a
   * revocation, an introspection, a rate limit hit): see OAuthEvent. Called synchronously; what it throws or
   * rejects goes to onError, never to the request. Default: none.
   */
  onEvent?: (event: OAuthEvent) => unknown;
  /** The bearer check's memory: verified tokens, and how long a grant's "active" state is trusted. */
  cache?: BearerCacheOptions;
  /**
   * Client ID Metadata Documents (https URLs as client_id), on by default, and how documents and clients' jwks_uri
   * are fetched: only from globally reachable addresses, https, no redirects, 5 KB, 5 s.
   */
  clientMetadataDocuments?: ClientMetadataDocumentOptions;
  /**
   * Clients the host app vouches for (client ids, or a test of one). An error in an authorization request of any other
   * client, before the user has done anything, is not redirected: a page names where the browser would go, with a
   * "Return to <host>" link (RFC 9700 §4.11.2: with open registration, error redirects make an open redirector).
   * Default: none; a trusted client's errors go back to it directly.
   */
  trustedClients?: readonly string[] | ((clientId: string) => boolean);
  /**
   * Confidential clients that are resource servers (another service, an API gateway), each with the resources whose
   * access tokens it may introspect (RFC 7662), e.g. `{ 'gateway-client-id': ['https://api.example.com/mcp'] }`.
   * Every other authenticated client introspects only tokens issued to itself. Default: none.
   */
  resourceServers?: Readonly<Record<string, readonly string[]>>;
  /**
   * Enterprise-Managed Authorization (MCP extension; ID-JAG): the enterprise IdPs whose ID-JAGs the jwt-bearer grant
   * accepts from operator clients that have it, and how their user is found. Default: none (the grant is off).
   */
  enterpriseIdps?: EnterpriseIdpOptions;
  /**
   * Token exchange (RFC 8693): the downstream APIs a live access token of this server may be traded for, by a client
   * the operator registered with the grant or by your tools (router.downstreamToken), and the policy that decides who
   * may exchange what for whom. Default: none (the grant is off).
   */
  tokenExchange?: TokenExchangeOptions;
  /**
   * Workload Identity Federation (MCP's extension, SEP-1933, draft): the platforms whose workload JWTs (a Kubernetes
   * service-account token, a cloud workload identity) the jwt-bearer grant accepts with no client secret, and the
   * rules mapping each workload to the operator client it acts as. Default: none.
   */
  workloadIdentity?: WorkloadIdentityOptions;
  /**
   * DPoP (RFC 9449): a client that sends a proof gets tokens bound to its key (`token_type: DPoP`), usable only
   * with a fresh proof from that key; clients that send none get bearer tokens as before. On by default (with a
   * store that keeps assertion ids); `{ requireNonce: true }` also asks token requests for a server nonce; false
   * turns it off.
   */
  dpop?: DpopOptions | boolean;
  /**
   * Step-up for clients that refresh instead of asking again (the MCP SDK 1.x client among them): for this long
   * after a tool is refused for want of scope (403 insufficient_scope from requireBearer or createMcpEndpoint), the
   * grant's next refresh is answered `invalid_grant`, so the client authorizes again for the challenge's scope. The
   * grant is not revoked. 0 turns this off; it is off, too, with a store without markScopeChallenge. Default
   * 120,000 (two minutes).
   */
  stepUpWindowMs?: number;
  /**
   * The device authorization grant (RFC 8628), for clients with no browser at hand (a CLI on a remote box, a CI job,
   * an agent in a container): true, or `{ expiresIn, interval }` in seconds (defaults 600 and 5). The device gets a
   * user code to show; the person types it at `<issuer>/device` (paths.device), signs in and consents there, and
   * the device polls the token endpoint. Off by default; it needs a store with the device authorization methods and
   * useAssertionId.
   */
  deviceAuthorization?: DeviceAuthorizationOptions | boolean;
  /**
   * Protected resources of your own for clients the operator registered (an admin API for automation, say), each
   * with scopes outside the consent catalogue, e.g. `[{ resource: `${issuer}/admin/api`, scopes: { admin: '...' } }]`.
   * Only the client_credentials grant issues tokens for them (`resource` names one), to a client whose registered
   * scope has theirs (registerOperatorClient); requireBearer({ resource }) guards their routes. Default: none.
   */
  operatorResources?: readonly OperatorResource[];
}

/** The absolute URL of each endpoint, as the metadata publishes them. */
export interface OAuthEndpoints {
  authorization: string;
  token: string;
  registration: string;
  revocation: string;
  introspection: string;
  jwks: string;
  /** The device authorization endpoint and the page people type user codes on (RFC 8628), when offered. */
  deviceAuthorization?: string;
  device?: string;
}

/** The parsed configuration the handlers use. */
export interface OAuthConfig {
  issuer: string;
  /** The issuer's path ('' or '/tenant'): where the router is mounted. */
  mountPath: string;
  /** Each endpoint's path below the issuer. */
  paths: Readonly<EndpointPaths>;
  endpoints: OAuthEndpoints;
  resources: readonly string[];
  scopes: ScopeCatalogue;
  scopeNames: ReadonlySet<string>;
  lifetimes: Required<LifetimeOptions>;
  refreshTokenReuse: RefreshTokenReusePolicy;
  authenticateUser: OAuthRouterOptions['authenticateUser'];
  getSessionUser: OAuthRouterOptions['getSessionUser'];
  signInUrl: OAuthRouterOptions['signInUrl'];
  upstream: UpstreamConfig | undefined;
  secret: Buffer;
  rateLimits: RateLimitConfig | false;
  views: { login?: string; consent?: string; error?: string };
  pages: PagesConfig;
  serviceName: string;
  serviceDocumentation: string | undefined;
  secureCookies: boolean;
  now: () => number;
  onError: (error: unknown, req: Request) => void;
  onEvent: ((event: OAuthEvent) => unknown) | undefined;
  cache: Required<BearerCacheOptions>;
  clientDocuments: ClientDocumentConfig;
  /**
   * How clients may authenticate at the token, revocation and introspection endpoints, in the order the metadata
   * lists them; private_key_jwt is dropped for a store that keeps no assertion ids (see router/capabilities.ts).
   */
  authMethods: readonly TokenEndpointAuthMethod[];
  isTrustedClient: (clientId: string) => boolean;
  /** Resource-server clients and the resources whose access tokens each may introspect. */
  resourceServers: ReadonlyMap<string, ReadonlySet<string>>;
  /** The trusted ID-JAG issuers; undefined when none are configured or the store keeps no assertion ids. */
  enterpriseIdps: EnterpriseIdpConfig | undefined;
  /** Token exchange's downstream resources and policy; undefined when the option is not given. */
  tokenExchange: TokenExchangeConfig | undefined;
  /** The trusted workload issuers and rules; undefined when none, or the store keeps no assertion ids. */
  workloadIdentity: WorkloadIdentityConfig | undefined;
  /** DPoP's settings; undefined when it is off (by the option, or a store that keeps no assertion ids). */
  dpop: DpopConfig | undefined;
  stepUpWindowMs: number;
  /** The device authorization grant's settings; undefined when it is off. */
  deviceAuthorization: DeviceAuthorizationConfig | undefined;
  /** The operator's own resources (operatorResources), each with its scopes; empty when none. */
  operatorResources: OperatorResourceConfig;
}

export type { Store as RateLimitStore };

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function fail(message: string): never {
  throw new TypeError(`createOAuthRouter: ${message}`);
}

/** Parses a public URL: absolute, no query or fragment, https unless on a loopback host; no trailing slash. */
function parsePublicUrl(name: string, value: unknown): URL {
  if (typeof value !== 'string') fail(`${name} must be a URL string such as "https://api.example.com".`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(`${name} "${value}" is not an absolute URL; use e.g. "https://api.example.com".`);
  }
  if (url.search || url.hash || value.includes('#'))
    fail(`${name} "${value}" must not have a query or fragment.`);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    fail(`${name} "${value}" must use https (http is allowed only for localhost, 127.0.0.1 and [::1]).`);
  }
  return url;
}

const stripSlash = (value: string) => value.replace(/\/+$/, '');

function parseSeconds(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(`lifetimes.${name} must be a whole number of seconds from ${min} to ${max}, got ${String(value)}.`);
  }
  return value;
}

export function parseOptions(options: OAuthRouterOptions): OAuthConfig {
  if (!options || typeof options !== 'object')
    fail('pass options with at least { issuer, authenticateUser }.');
  const issuerUrl = parsePublicUrl('issuer', options.issuer);
  const issuer = stripSlash(issuerUrl.href);
  const mountPath = stripSlash(issuerUrl.pathname);
  const paths = parsePaths(options.paths, fail);

  const ownUrl = (name: string, value: unknown) => {
    const url = parsePublicUrl(name, value);
    if (url.origin !== issuerUrl.origin) fail(`${name} must be on the issuer's origin ${issuerUrl.origin}.`);
    return stripSlash(url.href);
  };
  const resources = (options.resources ?? [`${issuer}/mcp`]).map((resource, index) =>
    ownUrl(`resources[${index}]`, resource),
  );
  if (resources.length === 0)
    fail('resources must list at least one protected resource, e.g. [`${issuer}/mcp`].');

  const scopes = options.scopes;
  if (!scopes || typeof scopes !== 'object')
    fail(
      "scopes is required: each scope with the words the consent page shows, e.g. { 'notes:read': 'Read your notes' }.",
    );
  const scopeEntries = Object.entries(scopes);
  if (scopeEntries.length === 0) fail('scopes must name at least one scope.');
  if (Object.prototype.hasOwnProperty.call(scopes, OFFLINE_ACCESS)) {
    fail(
      'the scope "offline_access" is a request for a refresh token, which clients add and the server drops; name your scope otherwise.',
    );
  }
  for (const [scope, description] of scopeEntries) {
    if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope))
      fail(`the scope "${scope}" has characters RFC 6749 §3.3 forbids.`);
    if (typeof description !== 'string' || !description)
      fail(`the scope "${scope}" needs a plain-language description.`);
  }

  const lifetimes = options.lifetimes ?? {};
  if ('refreshRetryWindow' in lifetimes)
    fail(
      'lifetimes.refreshRetryWindow is now refreshTokenReuse.window (seconds; or refreshTokenReuse: "strict").',
    );
  const parsedLifetimes: Required<LifetimeOptions> = {
    authorizationCode: parseSeconds('authorizationCode', lifetimes.authorizationCode, 600, 1, 600),
    accessToken: parseSeconds('accessToken', lifetimes.accessToken, 3600, 1, 86_400),
    refreshToken: parseSeconds('refreshToken', lifetimes.refreshToken, 30 * 86_400, 60, 366 * 86_400),
    signIn: parseSeconds('signIn', lifetimes.signIn, 1800, 60, 86_400),
  };

  const { authenticateUser, getSessionUser, signInUrl } = options;
  if (!authenticateUser && !getSessionUser && !options.upstream) {
    fail(
      'say how users sign in: authenticateUser(email, password) for the built-in form, getSessionUser(req), or ' +
        'upstream providers.',
    );
  }
  for (const [name, value] of Object.entries({ authenticateUser, getSessionUser, signInUrl })) {
    if (value !== undefined && typeof value !== 'function') fail(`${name} must be a function.`);
  }
  if (getSessionUser && !authenticateUser && !options.upstream && !signInUrl) {
    fail(
      'with getSessionUser and no authenticateUser, give signInUrl(returnTo) so a signed-out browser has somewhere to go.',
    );
  }

  const now = options.now ?? Date.now;
  const secret = options.secret === undefined ? randomBytes(32) : Buffer.from(options.secret);
  if (secret.length < 32)
    fail('secret must be at least 32 bytes; generate one with `openssl rand -base64 32`.');

  const views = options.views ?? {};
  for (const [name, path] of Object.entries(views)) {
    if (!['login', 'consent', 'error'].includes(name))
      fail(`views.${name} is not a page; use login, consent or error.`);
    if (typeof path !== 'string' || !isAbsolute(path))
      fail(`views.${name} must be an absolute path to an EJS file.`);
  }
  if (options.serviceDocumentation !== undefined)
    parsePublicUrl('serviceDocumentation', options.serviceDocumentation);
  if (options.now !== undefined && typeof options.now !== 'function')
    fail('now must be a function returning milliseconds.');
  const cache = {
    accessTokens: options.cache?.accessTokens ?? 10_000,
    grantStatusMs: options.cache?.grantStatusMs ?? 1000,
  };
  if (!Number.isInteger(cache.accessTokens) || cache.accessTokens < 0 || cache.accessTokens > 1_000_000) {
    fail('cache.accessTokens must be a whole number from 0 (off) to 1,000,000.');
  }
  if (!Number.isInteger(cache.grantStatusMs) || cache.grantStatusMs < 0 || cache.grantStatusMs > 60_000) {
    fail(
      'cache.grantStatusMs must be a whole number of milliseconds from 0 (always ask the store) to 60,000.',
    );
  }
  const scopeNames = new Set(Object.keys(scopes));
  const tokenExchange = parseTokenExchange(options.tokenExchange, resources, scopeNames, fail);
  const deviceAuthorization = parseDeviceAuthorization(options.deviceAuthorization, fail);
  const operatorResources = parseOperatorResources(
    options.operatorResources,
    ownUrl,
    new Set([...resources, ...(tokenExchange ? tokenExchange.resources.keys() : [])]),
    scopeNames,
    fail,
  );

  return {
    issuer,
    mountPath,
    paths,
    endpoints: {
      authorization: issuer + paths.authorization,
      token: issuer + paths.token,
      registration: issuer + paths.registration,
      revocation: issuer + paths.revocation,
      introspection: issuer + paths.introspection,
      jwks: issuer + paths.jwks,
      ...(deviceAuthorization && {
        deviceAuthorization: issuer + paths.deviceAuthorization,
        device: issuer + paths.device,
      }),
    },
    resources,
    scopes: Object.freeze({ ...scopes }),
    scopeNames,
    lifetimes: parsedLifetimes,
    refreshTokenReuse: parseRefreshTokenReuse(
      options.refreshTokenReuse,
      parsedLifetimes.refreshToken,
      secret,
      fail,
      parsedLifetimes.accessToken,
    ),
    authenticateUser,
    getSessionUser,
    signInUrl,
    upstream: parseUpstreamOptions(options.upstream, fail),
    secret,
    rateLimits: options.rateLimits === false ? false : parseRateLimits(options.rateLimits ?? {}, fail),
    views,
    pages: parsePageOptions(options.pages, fail),
    serviceName: options.serviceName ?? 'this service',
    serviceDocumentation: options.serviceDocumentation,
    secureCookies: issuerUrl.protocol === 'https:',
    now,
    onError: options.onError ?? ((error) => console.error('express-mcp-oauth: unexpected error', error)),
    onEvent: parseOnEvent(options.onEvent),
    cache,
    clientDocuments: parseClientDocumentOptions(options.clientMetadataDocuments, fail),
    authMethods: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    isTrustedClient: parseTrustedClients(options.trustedClients),
    resourceServers: parseResourceServers(options.resourceServers, [
      ...resources,
      ...(tokenExchange ? tokenExchange.resources.keys() : []),
      ...operatorResources.keys(),
    ]),
    enterpriseIdps: parseEnterpriseIdps(options.enterpriseIdps, fail),
    tokenExchange,
    workloadIdentity: parseWorkloadIdentity(options.workloadIdentity, issuer, scopeNames, fail),
    dpop: parseDpopOptions(options.dpop, secret, now, fail),
    stepUpWindowMs: parseStepUpWindowMs(options.stepUpWindowMs, fail),
    deviceAuthorization,
    operatorResources,
  };
}

function parseTrustedClients(given: OAuthRouterOptions['trustedClients']): (clientId: string) => boolean {
  if (given === undefined) return () => false;
  if (typeof given === 'function') return (clientId) => given(clientId) === true;
  if (!Array.isArray(given) || given.some((id) => typeof id !== 'string'))
    fail('trustedClients must be an array of client ids or a function (clientId) => boolean.');
  const trusted = new Set(given);
  return (clientId) => trusted.has(clientId);
}

function parseResourceServers(
  given: OAuthRouterOptions['resourceServers'],
  resources: readonly string[],
): ReadonlyMap<string, ReadonlySet<string>> {
  if (given === undefined) return new Map();
  if (!given || typeof given !== 'object' || Array.isArray(given))
    fail(
      "resourceServers must map client ids to resources, e.g. { 'gateway': ['https://api.example.com/mcp'] }.",
    );
  const servers = new Map<string, ReadonlySet<string>>();
  for (const [clientId, audiences] of Object.entries(given)) {
    if (!Array.isArray(audiences) || audiences.length === 0)
      fail(`resourceServers["${clientId}"] must list the resources whose tokens it may introspect.`);
    const known = audiences.map((resource) => (typeof resource === 'string' ? stripSlash(resource) : ''));
    const unknown = known.find((resource) => !resources.includes(resource));
    if (unknown !== undefined)
      fail(
        `resourceServers["${clientId}"] names "${unknown}", which is none of resources, tokenExchange's ` +
          `downstream resources and operatorResources (${resources.join(', ')}).`,
      );
    servers.set(clientId, new Set(known));
  }
  return servers;
}

function parseOnEvent(given: OAuthRouterOptions['onEvent']): OAuthConfig['onEvent'] {
  if (given !== undefined && typeof given !== 'function')
    fail('onEvent must be a function (event) => void, e.g. (event) => logger.info(event).');
  return given;
}
