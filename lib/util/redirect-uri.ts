// Redirect URI rules: which URIs a client may register (RFC 7591 §2, RFC 8252 §7, RFC 9700 §4.1), and how a
// requested URI is matched against the registered ones (exact, but for the port of http loopback, RFC 8252 §7.3).

import { containsControlCharacter } from './params';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** Schemes that run code or read local files in a browser: never a redirect target. */
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'file:',
  'vbscript:',
  'blob:',
  'about:',
  'filesystem:',
]);
/** Schemes that are not a native app's private-use scheme and are not allowed either. */
const OTHER_NETWORK_SCHEMES = new Set(['ftp:', 'ws:', 'wss:', 'mailto:', 'tel:']);
const MAX_URI_LENGTH = 2000;

/** Why a redirect URI cannot be registered, or null if it can. */
export function redirectUriProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0) return 'each redirect URI must be a non-empty string';
  if (value.length > MAX_URI_LENGTH) return `a redirect URI may have at most ${MAX_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value.slice(0, 100)}" is not an absolute URI`;
  }
  // RFC 6749 §3.1.2: the redirection endpoint URI MUST NOT include a fragment component.
  if (value.includes('#')) return 'a redirect URI must not contain a fragment';
  if (/[\s<>"'\\^`{|}]/.test(value) || containsControlCharacter(value))
    return 'a redirect URI must not contain spaces, quotes or angle brackets';
  const scheme = url.protocol;
  if (FORBIDDEN_SCHEMES.has(scheme) || OTHER_NETWORK_SCHEMES.has(scheme)) {
    return `the ${scheme} scheme is not allowed in a redirect URI`;
  }
  if (scheme === 'https:')
    return url.username || url.password ? 'a redirect URI must not carry credentials' : null;
  if (scheme === 'http:') {
    if (!LOOPBACK_HOSTS.has(url.hostname)) {
      return 'http redirect URIs are allowed only on a loopback host (127.0.0.1, [::1] or localhost); use https';
    }
    return url.username || url.password ? 'a redirect URI must not carry credentials' : null;
  }
  // A native app's private-use scheme (RFC 8252 §7.1), such as cursor:// or vscode://.
  // Stryker disable next-line Regex,StringLiteral: equivalent, new URL() only yields a protocol of this syntax (WHATWG URL scheme state); a guard should the parser change
  return /^[a-z][a-z0-9+.-]*:$/.test(scheme) ? null : `the scheme ${scheme} is not allowed`;
}

/** Whether a registered http redirect URI is on a loopback host, so its port may vary (RFC 8252 §7.3). */
function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** Whether a redirect URI leads to this computer (http on a loopback host). */
export function isLoopbackRedirect(uri: string): boolean {
  return URL.canParse(uri) && isLoopback(new URL(uri));
}

/**
 * The registered URI that `requested` matches, or undefined. Matching is exact string comparison, except that for
 * an http loopback URI the port may differ: native apps open an ephemeral port at the time of the request.
 */
export function matchRedirectUri(requested: string, registered: readonly string[]): string | undefined {
  if (registered.includes(requested)) return requested;
  let wanted: URL;
  try {
    wanted = new URL(requested);
  } catch {
    return undefined;
  }
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent, a shortcut: a request that is not http loopback or has a fragment never equals a loopback candidate's href below
  if (!isLoopback(wanted) || requested.includes('#')) return undefined;
  return registered.find((candidate) => {
    const known = new URL(candidate);
    // Stryker disable next-line ConditionalExpression: equivalent, a shortcut: only a loopback candidate can equal the loopback request once its port is copied
    if (!isLoopback(known)) return false;
    known.port = wanted.port;
    // Compare the serialisations, so that path, query and host must still be identical to the letter.
    // Stryker disable next-line ConditionalExpression: equivalent, two strings equal but for a loopback port parse to the same href once the port is copied; both checks are kept on purpose
    return known.href === wanted.href && sameExceptPort(candidate, requested);
  });
}

/** Guards against URL normalisation hiding a difference (e.g. "/a/../b"): only the port may differ. */
function sameExceptPort(registered: string, requested: string): boolean {
  const strip = (value: string) =>
    // Stryker disable next-line Regex,StringLiteral: equivalent, both sides start with the same loopback origin (href compared first), so anchoring, an absent port and keeping the origin change nothing
    value.replace(/^(http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost))(?::\d+)?/, '$1');
  return strip(registered) === strip(requested);
}

/** The origin a browser form may post or redirect to for this URI: "https://host:port", or "cursor:" for a scheme. */
export function formActionSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}

export interface RedirectTarget {
  redirectUri: string;
  state: string | undefined;
  /** Whether the host app vouches for the client: its errors may be redirected before the user has acted. */
  trusted: boolean;
}

/** Builds the redirect to the client with the response parameters and the issuer (RFC 9207 §2). */
export function clientRedirect(
  issuer: string,
  target: RedirectTarget,
  params: Record<string, string>,
): string {
  const url = new URL(target.redirectUri);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  if (target.state !== undefined) url.searchParams.set('state', target.state);
  url.searchParams.set('iss', issuer);
  return url.href;
}
