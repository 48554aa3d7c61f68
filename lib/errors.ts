// OAuth errors: one class, a closed union of RFC error codes, and the one table that maps them to HTTP statuses.

/**
 * Every error code this server can return, from RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 6750 §3.1,
 * RFC 7009 §2.2.1, RFC 8707 §2, RFC 8628 §3.5 and RFC 9449 §5 and §8.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'invalid_target'
  | 'unsupported_token_type'
  | 'method_not_allowed'
  | 'too_many_requests'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token';

/** The HTTP status of each code when it is answered directly (not by redirect). */
export const OAUTH_ERROR_STATUS: Readonly<Record<OAuthErrorCode, number>> = Object.freeze({
  invalid_request: 400,
  invalid_client: 401, // RFC 6749 §5.2
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  server_error: 500,
  temporarily_unavailable: 503,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  invalid_token: 401, // RFC 6750 §3.1
  insufficient_scope: 403, // RFC 6750 §3.1
  invalid_target: 400,
  unsupported_token_type: 400, // RFC 7009 §2.2.1
  method_not_allowed: 405,
  too_many_requests: 429,
  invalid_dpop_proof: 400, // RFC 9449 §5 (a protected resource answers 401, §7.1)
  use_dpop_nonce: 400, // RFC 9449 §8
  authorization_pending: 400, // RFC 8628 §3.5, as every token endpoint error (RFC 6749 §5.2)
  slow_down: 400,
  expired_token: 400,
});

/** Extra details of an OAuthError. */
export interface OAuthErrorOptions {
  headers?: Record<string, string>;
  status?: number;
  cause?: unknown;
}

/** An OAuth protocol error. Handlers throw it; the error handler alone turns it into a response. */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  /** The RFC error code, sent as `error`. */
  readonly code: OAuthErrorCode;
  /** A human-readable explanation, sent as `error_description`; never contains secrets. */
  readonly description: string;
  /** Extra response headers, such as `Allow` or `WWW-Authenticate`. */
  readonly headers: Readonly<Record<string, string>>;
  /** The HTTP status: the code's own from OAUTH_ERROR_STATUS unless a more precise one was given (413, 415). */
  readonly status: number;

  constructor(code: OAuthErrorCode, description: string, options: OAuthErrorOptions = {}) {
    super(description, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.description = description;
    this.headers = Object.freeze({ ...options.headers });
    this.status = options.status ?? OAUTH_ERROR_STATUS[code];
  }

  /** The RFC 6749 §5.2 JSON body. */
  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}

/** Whether `value` is an OAuthError (also across copies of this package). */
export function isOAuthError(value: unknown): value is OAuthError {
  return (
    value instanceof OAuthError || (value instanceof Error && value.name === 'OAuthError' && 'code' in value)
  );
}
