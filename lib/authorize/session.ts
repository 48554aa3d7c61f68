// The browser side of the authorization endpoint: the sign-in cookie, the CSRF cookie and token, and the sealed
// pending request that the sign-in and consent forms carry.
import type { Request, Response } from 'express';
import { randomSecret, constantTimeEqual } from '../crypto/secrets';
import type { Sealer } from './seal';
import type { OAuthConfig, OAuthUser } from '../options';

const SESSION_COOKIE = 'mcp_oauth_session';
const CSRF_COOKIE = 'mcp_oauth_csrf';
/**
 * On https the cookies carry the __Host- prefix, which browsers accept only with Secure, Path=/ and no Domain: a
 * sibling subdomain cannot plant a sign-in or a CSRF cookie here (login CSRF).
 */
const HOST_PREFIX = '__Host-';
/** How long a pending authorization request stays valid between the pages. */
const PENDING_REQUEST_MS = 30 * 60 * 1000;

/** The parameters of a validated authorization request, carried sealed between the pages. */
export type PendingRequest = Record<string, string>;

export interface BrowserSession {
  /** The user signed in through the host app's session or the built-in form, or undefined. */
  currentUser(req: Request): Promise<OAuthUser | undefined>;
  signIn(res: Response, user: OAuthUser): void;
  /** Seals the request parameters and makes the CSRF token bound to them and to this browser. */
  formFields(req: Request, res: Response, params: PendingRequest): { request: string; csrf_token: string };
  /** Checks the CSRF token and opens the pending request; undefined if either fails. */
  openForm(req: Request): { params?: PendingRequest; csrfValid: boolean };
}

export function createBrowserSession(config: OAuthConfig, sealer: Sealer): BrowserSession {
  const secure = config.secureCookies;
  const cookiePath = secure ? '/' : config.mountPath + config.paths.authorization;
  const sessionCookie = secure ? HOST_PREFIX + SESSION_COOKIE : SESSION_COOKIE;
  const csrfCookie = secure ? HOST_PREFIX + CSRF_COOKIE : CSRF_COOKIE;
  const cookie = (name: string, value: string, maxAgeSeconds: number) =>
    [
      `${name}=${value}`,
      `Path=${cookiePath}`,
      `Max-Age=${maxAgeSeconds}`,
      'HttpOnly',
      // Lax: the cookie must come along when the AI client sends the browser here (a cross-site navigation),
      // but never on a cross-site POST.
      'SameSite=Lax',
      ...(secure ? ['Secure'] : []),
    ].join('; ');
  const appendCookie = (res: Response, value: string) => {
    const existing = res.getHeader('Set-Cookie');
    res.setHeader('Set-Cookie', [
      ...(Array.isArray(existing) ? existing : existing ? [String(existing)] : []),
      value,
    ]);
  };
  const csrfSecret = (req: Request, res: Response): string => {
    const known = readCookie(req, csrfCookie);
    if (known && /^[A-Za-z0-9_-]{43}$/.test(known)) return known;
    const fresh = randomSecret();
    appendCookie(res, cookie(csrfCookie, fresh, 24 * 3600));
    return fresh;
  };

  return {
    async currentUser(req) {
      const hosted = config.getSessionUser ? await config.getSessionUser(req) : undefined;
      if (hosted) return hosted;
      if (!config.authenticateUser) return undefined;
      const session = sealer.open<{ sub: string; name?: string; email?: string }>(
        'sign-in',
        readCookie(req, sessionCookie),
      );
      return session && typeof session.sub === 'string'
        ? { id: session.sub, name: session.name, email: session.email }
        : undefined;
    },

    signIn(res, user) {
      const seconds = config.lifetimes.signIn;
      const value = sealer.seal(
        'sign-in',
        { sub: user.id, name: user.name, email: user.email },
        config.now() + seconds * 1000,
      );
      appendCookie(res, cookie(sessionCookie, value, seconds));
    },

    formFields(req, res, params) {
      const request = sealer.seal('pending-request', params, config.now() + PENDING_REQUEST_MS);
      return { request, csrf_token: sealer.mac('csrf', csrfSecret(req, res), request) };
    },

    openForm(req) {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const browser = readCookie(req, csrfCookie);
      const request = body.request;
      const token = body.csrf_token;
      const csrfValid =
        typeof browser === 'string' &&
        typeof request === 'string' &&
        typeof token === 'string' &&
        constantTimeEqual(token, sealer.mac('csrf', browser, request));
      return {
        csrfValid,
        params: csrfValid ? sealer.open<PendingRequest>('pending-request', request) : undefined,
      };
    },
  };
}

/** One cookie's value from the Cookie header, or undefined. */
function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}
