// Parsing a scope parameter (RFC 6749 §3.3), and offline_access: a client's request for a refresh token (MCP
// authorization, "Refresh Tokens", from SEP-2207), which is accepted and dropped, never read as a permission.
import { OAuthError } from '../../../lib/errors';
import { parseScope } from '../../../lib/util/scopes';

const ALLOWED = new Set(['notes:read', 'notes:write']);

describe('parseScope', () => {
  test.each([
    ['one scope', 'notes:read', ['notes:read']],
    ['two, in the order asked', 'notes:write notes:read', ['notes:write', 'notes:read']],
    ['a repeat, once', 'notes:read notes:read', ['notes:read']],
    ['extra spaces', ' notes:read  notes:write ', ['notes:read', 'notes:write']],
    ['an empty value', '', []],
  ])('%s', (_name, value, expected) => {
    expect(parseScope(value, ALLOWED)).toEqual(expected);
  });

  test.each([
    ['a scope outside the allowed ones', 'notes:read notes:delete'],
    ['a malformed token', 'notes:read "x"'],
    ['a backslash', 'notes\\read'],
  ])('refuses %s with invalid_scope', (_name, value) => {
    expect(() => parseScope(value, ALLOWED)).toThrow(OAuthError);
    expect(() => parseScope(value, ALLOWED)).toThrow(/is not available to this client/);
  });
});

// claude.ai adds offline_access when the server lists it; OpenID-minded clients add it anyway. It asks for a
// refresh token, which this server gives by the client's refresh_token grant type: it is not a permission, so it
// must never fail a request as an unknown scope, nor reach a grant, a token or a tool's scope check.
describe('offline_access', () => {
  test.each([
    ['beside scopes: dropped', 'notes:read offline_access', ['notes:read']],
    ['first: dropped', 'offline_access notes:write', ['notes:write']],
    ['twice: dropped', 'offline_access notes:read offline_access', ['notes:read']],
    // Alone, it asks for nothing but a refresh token: read as no scope parameter (every scope allowed).
    ['alone: as if no scope were asked', 'offline_access', ['notes:read', 'notes:write']],
  ])('%s', (_name, value, expected) => {
    expect(parseScope(value, ALLOWED)).toEqual(expected);
  });

  test('does not excuse an unknown scope beside it', () => {
    expect(() => parseScope('offline_access notes:delete', ALLOWED)).toThrow(/"notes:delete"/);
  });

  test('is matched exactly: another spelling is an unknown scope', () => {
    expect(() => parseScope('Offline_Access', ALLOWED)).toThrow(/is not available/);
    expect(() => parseScope('offline_access:x', ALLOWED)).toThrow(/is not available/);
  });
});
