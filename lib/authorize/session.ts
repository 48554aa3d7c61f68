// The browser side of the authorization endpoint: the sign-in cookie, the CSRF cookie and token, and the sealed
// pending request that the sign-in and consent forms carry.
import type { Request, Response } from 'express';
import { randomSecret, constantTimeEqual } from '../crypto/secrets';
import type { Sealer } from '../crypto/signed-value';
import type { OAuthConfig, OAuthUser } from '../options';

const SESSION_COOKIE = 'mcp_oauth_session';
const CSRF_COOKIE = 'mcp_oauth_csrf';
const UPSTREAM_COOKIE = 'mcp_oauth_upstream';
/** How long the browser may take at an upstream provider. */
const UPSTREAM_MS = 10 * 60 * 1000;
/**
 * On https the cookies carry the __Host- prefix, which browsers accept only with Secure, Path=/ and no Domain: a
 * sibling subdomain cannot plant a sign-in or a CSRF cookie here (login CSRF).
 */
const HOST_PREFIX = '__Host-';
/** How long a pending authorization request stays valid between the pages. */
const PENDING_REQUEST_MS = 30 * 60 * 1000;

/** The parameters of a validated authorization request, carried sealed between the pages. */
type PendingRequest = Record<string, string>;

/**
 * A sign-in through an upstream provider that keeps the user's tokens: it holds for the one authorization request it
 * was made for (the tokens go to that request's grant), not for the next one.
 */
interface UpstreamSignIn {
  provider: string;
  /** The held tokens' id (see upstream/tokens.ts). */
  tokens: string;
  params: PendingRequest;
}

export interface BrowserSession {
  /**
   * The user signed in through the host app's session, the built-in form or an upstream provider, or undefined. A
   * sign-in bound to another authorization request than `params` (UpstreamSignIn) does not count.
   */
  currentUser(req: Request, params?: PendingRequest): Promise<OAuthUser | undefined>;
  /**
   * The held upstream tokens' id of the sign-in, when it is bound to `params` and was made for `userId` (the user
   * consenting: a host app's session may name someone else).
   */
  upstreamTokens(req: Request, params: PendingRequest, userId: string): string | undefined;
  signIn(res: Response, user: OAuthUser, upstream?: UpstreamSignIn): void;
  /** Seals the request parameters and makes the CSRF token bound to them and to this browser. */
  formFields(req: Request, res: Response, params: PendingRequest): { request: string; csrf_token: string };
  /** Keeps an upstream authorization's checks in this browser (sealed, for 10 minutes) until its callback. */
  beginUpstream(res: Response, transaction: UpstreamTransaction): void;
  /**
   * The browser's upstream transaction for `state`, cleared: undefined when there is none, it was altered or has
   * expired, or it is for another state (then it stays: a stray callback cannot cancel a sign-in in progress).
   */
  endUpstream(
    req: Request,
    res: Response,
    state: string | undefined,
  ): (UpstreamTransaction & { exp: number }) | undefined;
  /** Checks the CSRF token of a form (the body, or a link's query) and opens the pending request. */
  openForm(req: Request, fields?: unknown): { params?: PendingRequest; csrfValid: boolean };
}

/** What the upstream callback must find in the browser that started the sign-in. */
interface UpstreamTransaction extends Record<string, unknown> {
  provider: string;
  state: string;
  nonce?: string;
  codeVerifier: string;
  params: PendingRequest;
}

type SessionPayload = {
  sub: string;
  name?: string;
  email?: string;
  /** An upstream sign-in that keeps tokens: the provider, the held tokens and a MAC of the request it is bound to. */
  up?: { provider: string; tokens: string; request: string };
};

export function createBrowserSession(config: OAuthConfig, sealer: Sealer): BrowserSession {
  const secure = config.secureCookies;
  const cookiePath = secure ? '/' : config.mountPath + config.paths.authorization;
  const sessionCookie = secure ? HOST_PREFIX + SESSION_COOKIE : SESSION_COOKIE;
  const csrfCookie = secure ? HOST_PREFIX + CSRF_COOKIE : CSRF_COOKIE;
  const upstreamCookie = secure ? HOST_PREFIX + UPSTREAM_COOKIE : UPSTREAM_COOKIE;
  // Sent back only to the callback (a cross-site navigation from the provider: Lax lets it through).
  const upstreamPath = secure ? '/' : config.mountPath + config.paths.upstreamCallback;
  const cookie = (name: string, value: string, maxAgeSeconds: number, path = cookiePath) =>
    [
      `${name}=${value}`,
      `Path=${path}`,
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

  // The built-in session cookie exists when the router signs users in itself: by form or through a provider.
  const ownSession = Boolean(config.authenticateUser || config.upstream);
  const requestMac = (params: PendingRequest) =>
    sealer.mac('bound-request', JSON.stringify(Object.entries(params).sort(([a], [b]) => (a < b ? -1 : 1))));
  const readSession = (req: Request) => {
    const session = ownSession
      ? sealer.open<SessionPayload>('sign-in', readCookie(req, sessionCookie))
      : undefined;
    return session && typeof session.sub === 'string' ? session : undefined;
  };
  const boundTo = (session: SessionPayload, params: PendingRequest | undefined) =>
    params !== undefined && constantTimeEqual(String(session.up?.request), requestMac(params));

  return {
    async currentUser(req, params) {
      const hosted = config.getSessionUser ? await config.getSessionUser(req) : undefined;
      if (hosted) return hosted;
      const session = readSession(req);
      if (!session || (session.up && !boundTo(session, params))) return undefined;
      return { id: session.sub, name: session.name, email: session.email };
    },

    upstreamTokens(req, params, userId) {
      const session = readSession(req);
      return session?.up && session.sub === userId && boundTo(session, params)
        ? session.up.tokens
        : undefined;
    },

    signIn(res, user, upstream) {
      const seconds = config.lifetimes.signIn;
      const payload: SessionPayload = { sub: user.id, name: user.name, email: user.email };
      if (upstream)
        payload.up = {
          provider: upstream.provider,
          tokens: upstream.tokens,
          request: requestMac(upstream.params),
        };
      const value = sealer.seal('sign-in', { ...payload }, config.now() + seconds * 1000);
      appendCookie(res, cookie(sessionCookie, value, seconds));
    },

    beginUpstream(res, transaction) {
      const value = sealer.seal('upstream-transaction', transaction, config.now() + UPSTREAM_MS);
      appendCookie(res, cookie(upstreamCookie, value, UPSTREAM_MS / 1000, upstreamPath));
    },

    endUpstream(req, res, state) {
      const transaction = sealer.open<UpstreamTransaction & { exp: number }>(
        'upstream-transaction',
        readCookie(req, upstreamCookie),
      );
      if (
        !transaction ||
        typeof transaction.state !== 'string' ||
        typeof transaction.provider !== 'string' ||
        typeof state !== 'string' ||
        !constantTimeEqual(state, transaction.state)
      )
        return undefined;
      appendCookie(res, cookie(upstreamCookie, '', 0, upstreamPath));
      return transaction;
    },

    formFields(req, res, params) {
      const request = sealer.seal('pending-request', params, config.now() + PENDING_REQUEST_MS);
      return { request, csrf_token: sealer.mac('csrf', csrfSecret(req, res), request) };
    },

    openForm(req, fields = req.body) {
      const body = (fields ?? {}) as Record<string, unknown>;
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
