// The one place where errors become responses: a redirect back to the client once its redirect URI is trusted,
// an HTML page for the browser before that, JSON (RFC 6749 §5.2) everywhere else.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Request } from 'express';
import { OAuthError, isOAuthError } from '../errors';
import type { OAuthConfig } from '../options';
import type { Pages } from '../pages/render';
import { clientRedirect, type RedirectTarget } from '../util/redirect-uri';
import { isStoreUnavailable } from '../store/unavailable';
import { writeJson } from '../util/json-response';
import { recordOAuthError } from '../telemetry/spans';

/** Set on res.locals by the authorization endpoint once client_id and redirect_uri are verified. */
/** Body-parser failures are the client's fault: say so in OAuth terms instead of answering 500. */
function fromBodyParser(error: { type?: string; status?: number; expose?: boolean }): OAuthError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return new OAuthError('invalid_request', 'The request body could not be parsed.');
    case 'entity.too.large':
      return new OAuthError('invalid_request', 'The request body is too large.', { status: 413 });
    case 'parameters.too.many':
      return new OAuthError('invalid_request', 'The request has too many parameters.', { status: 413 });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new OAuthError('invalid_request', 'The request body uses an unsupported encoding.', {
        status: 415,
      });
    default:
      // Any other client error from body parsing (a corrupt compressed body, an aborted upload) is still the
      // client's: http-errors marks those with expose and a 4xx status.
      return (error as { expose?: boolean }).expose &&
        error.status &&
        error.status >= 400 &&
        error.status < 500
        ? new OAuthError('invalid_request', 'The request body could not be read.', { status: error.status })
        : undefined;
  }
}

/** A store that cannot be reached: 503 with Retry-After (RFC 6749 §4.1.2.1 names temporarily_unavailable). */
export function storeUnavailable(cause: unknown): OAuthError {
  return new OAuthError(
    'temporarily_unavailable',
    'The service is briefly unavailable; try again in a moment.',
    {
      headers: { 'Retry-After': '5' },
      cause,
    },
  );
}

/**
 * Any error as the OAuth error it is answered with, its code also on the request's span; what is not the client's
 * fault is reported to onError.
 */
export function toOAuthError(
  error: unknown,
  req: IncomingMessage,
  config: Pick<OAuthConfig, 'onError'>,
): OAuthError {
  const answered = mapError(error, req, config);
  recordOAuthError(answered.code);
  return answered;
}

function mapError(error: unknown, req: IncomingMessage, config: Pick<OAuthConfig, 'onError'>): OAuthError {
  if (isOAuthError(error)) return error;
  const parsed = error && typeof error === 'object' ? fromBodyParser(error) : undefined;
  if (parsed) return parsed;
  if (isStoreUnavailable(error)) {
    // Reported (an operator wants to know), but answered as what it is: a moment's outage, not a server bug.
    config.onError(error, req as Request);
    return storeUnavailable(error);
  }
  config.onError(error, req as Request);
  return new OAuthError('server_error', 'An unexpected error occurred; try again later.');
}

export function createErrorHandler(config: OAuthConfig, pages: Pages): ErrorRequestHandler {
  return function oauthErrorHandler(error, req, res, next) {
    if (res.headersSent) return next(error);
    const oauthError = toOAuthError(error, req, config);
    const target = res.locals.oauthRedirect as RedirectTarget | undefined;

    // RFC 6749 §4.1.2.1: once the redirect URI is known to be the client's, errors go back to the client.
    if (target && oauthError.code !== 'too_many_requests') {
      const location = clientRedirect(config.issuer, target, {
        error: oauthError.code,
        error_description: oauthError.description,
      });
      res.setHeader('Cache-Control', 'no-store');
      // RFC 9700 §4.11.2: before the user has done anything (the page's GET), a client nobody vouched for gets no
      // automatic redirect, or anyone could register one and use this server to bounce browsers to any site.
      if (req.method === 'GET' && !target.trusted) {
        const page = {
          status: oauthError.status,
          error: oauthError.code,
          description: oauthError.description,
          returnTo: location,
          returnHost: new URL(target.redirectUri).host || new URL(target.redirectUri).protocol,
        };
        return void pages.render(res, 'error', page, oauthError.status).catch(next);
      }
      // RFC 9700 §4.12: 303 after a form post, so the browser does not re-send the form to the client.
      return res.redirect(req.method === 'GET' ? 302 : 303, location);
    }
    if (res.locals.oauthPage) {
      for (const [name, value] of Object.entries(oauthError.headers)) res.setHeader(name, value);
      const page = { status: oauthError.status, error: oauthError.code, description: oauthError.description };
      return void pages.render(res, 'error', page, oauthError.status).catch(next);
    }
    sendOAuthError(res, oauthError);
  };
}

/** RFC 6749 §5.2: the error as JSON, with its own headers (Retry-After, WWW-Authenticate), never cached. */
export function sendOAuthError(res: ServerResponse, error: OAuthError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.setHeader('Cache-Control', 'no-store');
  writeJson(res, error.status, error.toJSON());
}
