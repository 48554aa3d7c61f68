// OAuthError: codes, the status table, and the RFC 6749 §5.2 body.
import { isOAuthError, OAUTH_ERROR_STATUS, OAuthError, type OAuthErrorCode } from '../../lib/errors';

describe('OAuthError', () => {
  test.each<[OAuthErrorCode, number]>([
    ['invalid_request', 400],
    ['invalid_client', 401],
    ['invalid_grant', 400],
    ['invalid_token', 401],
    ['insufficient_scope', 403],
    ['method_not_allowed', 405],
    ['too_many_requests', 429],
    ['server_error', 500],
    ['temporarily_unavailable', 503],
  ])('%s answers %i', (code, status) => {
    expect(new OAuthError(code, 'x').status).toBe(status);
    expect(OAUTH_ERROR_STATUS[code]).toBe(status);
  });

  test('serialises to the RFC 6749 §5.2 body and keeps headers and cause', () => {
    const cause = new Error('inner');
    const error = new OAuthError('invalid_client', 'Client authentication failed.', {
      headers: { 'WWW-Authenticate': 'Basic' },
      cause,
    });
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      error: 'invalid_client',
      error_description: 'Client authentication failed.',
    });
    expect(error.headers).toEqual({ 'WWW-Authenticate': 'Basic' });
    expect(error.cause).toBe(cause);
    expect(Object.isFrozen(error.headers)).toBe(true);
  });

  test('is recognised, also as a copy from another instance of the package', () => {
    expect(isOAuthError(new OAuthError('invalid_grant', 'x'))).toBe(true);
    const foreign = Object.assign(new Error('x'), { name: 'OAuthError', code: 'invalid_grant' });
    expect(isOAuthError(foreign)).toBe(true);
    expect(isOAuthError(new Error('x'))).toBe(false);
    expect(isOAuthError('invalid_grant')).toBe(false);
  });
});
