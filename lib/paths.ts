// Where each endpoint lives, relative to the issuer: one table, read by the option parser (the metadata's URLs), the
// router (the routes) and the browser session (the cookies' path). The defaults are the service's own paths.

/** Each endpoint's path below the issuer. */
export interface EndpointPaths {
  /** The authorization endpoint (RFC 6749 §3.1); its sign-in and consent forms post to `<path>/sign-in` and `<path>/decision`. */
  authorization: string;
  /** The token endpoint (RFC 6749 §3.2). */
  token: string;
  /** Dynamic client registration (RFC 7591). */
  registration: string;
  /** Token revocation (RFC 7009). */
  revocation: string;
  /** Token introspection (RFC 7662), for confidential clients such as other resource servers. */
  introspection: string;
  /** The public keys (RFC 7517 JWK Set). */
  jwks: string;
  /** Where upstream providers send the browser back (the `upstream` option): register `<issuer><path>` with them. */
  upstreamCallback: string;
  /** The device authorization endpoint (RFC 8628 §3.1), with the `deviceAuthorization` option. */
  deviceAuthorization: string;
  /**
   * The page where a person types a device's user code (RFC 8628 §3.3, its verification_uri), with the
   * `deviceAuthorization` option. Its form, and the sign-in and consent that follow, live under the authorization
   * endpoint's path, where the browser's cookies are.
   */
  device: string;
}

export const DEFAULT_PATHS: Readonly<EndpointPaths> = Object.freeze({
  authorization: '/v1/oauth/authorize',
  token: '/v1/oauth/token',
  registration: '/v1/oauth/register',
  revocation: '/v1/oauth/revoke',
  introspection: '/v1/oauth/introspect',
  jwks: '/v1/oauth/jwks',
  upstreamCallback: '/v1/oauth/upstream/callback',
  deviceAuthorization: '/v1/oauth/device_authorization',
  device: '/device',
});

/** The two forms behind the authorization endpoint. */
export const signInPath = (paths: EndpointPaths) => `${paths.authorization}/sign-in`;
export const decisionPath = (paths: EndpointPaths) => `${paths.authorization}/decision`;
/** The sign-in page's "Continue with <provider>" links. */
export const upstreamStartPath = (paths: EndpointPaths) => `${paths.authorization}/upstream`;
/** The device flow's pages below the authorization endpoint: the code looked up, then sign-in and consent. */
export const deviceCodePath = (paths: EndpointPaths) => `${paths.authorization}/device`;
export const deviceSignInPath = (paths: EndpointPaths) => `${paths.authorization}/device/sign-in`;
export const deviceDecisionPath = (paths: EndpointPaths) => `${paths.authorization}/device/decision`;

const PATH = /^(\/[A-Za-z0-9\-._~]+)+$/;

/** Parses the `paths` option over the defaults: absolute, plain segments, no trailing slash, distinct. */
export function parsePaths(input: unknown, fail: (message: string) => never): Readonly<EndpointPaths> {
  if (input === undefined) return DEFAULT_PATHS;
  if (!input || typeof input !== 'object') fail('paths must be an object such as { token: "/oauth/token" }.');
  const paths = { ...DEFAULT_PATHS };
  for (const [name, value] of Object.entries(input)) {
    if (!(name in DEFAULT_PATHS))
      fail(`paths.${name} is not an endpoint; use ${Object.keys(DEFAULT_PATHS).join(', ')}.`);
    if (typeof value !== 'string' || !PATH.test(value) || value.startsWith('/.well-known'))
      fail(`paths.${name} must be a path such as "/oauth/${name}" (plain segments, no trailing slash).`);
    paths[name as keyof EndpointPaths] = value;
  }
  const all = [
    ...Object.values(paths),
    signInPath(paths),
    decisionPath(paths),
    upstreamStartPath(paths),
    deviceCodePath(paths),
    deviceSignInPath(paths),
    deviceDecisionPath(paths),
  ];
  if (new Set(all).size !== all.length) fail('paths must give every endpoint a path of its own.');
  return Object.freeze(paths);
}

/** The well-known URL path of a protected resource's metadata (RFC 9728 §3.1): inserted before the path. */
export function protectedResourceMetadataPath(resource: string): string {
  const path = new URL(resource).pathname.replace(/\/+$/, '');
  return `/.well-known/oauth-protected-resource${path}`;
}

/** The absolute URL of a resource's metadata, as the bearer check announces it. */
export function protectedResourceMetadataUrl(resource: string): string {
  return new URL(resource).origin + protectedResourceMetadataPath(resource);
}
