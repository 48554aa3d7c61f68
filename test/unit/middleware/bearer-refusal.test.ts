// The challenges of a refusal (RFC 6750 §3, RFC 9449 §7.1 and §7.2): which scheme comes first, which carries the
// error, and that any description can be sent (Node refuses a header with a character outside Latin-1 outright).
import express from 'express';
import request from 'supertest';
import { OAuthError } from '../../../lib/errors';
import { refuseBearer, type DpopChallengeOptions } from '../../../lib/middleware/bearer-refusal';

const URL_ = 'https://api.example/.well-known/oauth-protected-resource/mcp';
const META = `resource_metadata="${URL_}"`;
const ALGS = 'algs="ES256 PS256"';

function answer(error: OAuthError | undefined, scope?: string, dpop?: DpopChallengeOptions) {
  const app = express();
  app.get('/', (_req, res) => refuseBearer(res, URL_, error, scope, dpop));
  return request(app).get('/');
}

const invalid = new OAuthError('invalid_token', 'Bad.');
const forbidden = new OAuthError('insufficient_scope', 'More.');
const algorithms = ['ES256', 'PS256'];

test.each<[string, OAuthError | undefined, DpopChallengeOptions | undefined, number, string]>([
  ['no DPoP, no token', undefined, undefined, 401, `Bearer ${META}`],
  ['no token: Bearer, then the DPoP scheme', undefined, { algorithms }, 401, `Bearer ${META}, DPoP ${ALGS}`],
  [
    'a Bearer request refused: the error in Bearer',
    invalid,
    { algorithms },
    401,
    `Bearer ${META}, error="invalid_token", error_description="Bad.", DPoP ${ALGS}`,
  ],
  [
    'a DPoP request refused: the error in DPoP, first',
    invalid,
    { algorithms, used: true },
    401,
    `DPoP ${META}, error="invalid_token", error_description="Bad.", ${ALGS}, Bearer ${META}`,
  ],
  [
    'a 403 names only the scheme used',
    forbidden,
    { algorithms, used: true },
    403,
    `DPoP ${META}, scope="a b", error="insufficient_scope", error_description="More.", ${ALGS}`,
  ],
  [
    'a 403 of a Bearer request',
    forbidden,
    { algorithms },
    403,
    `Bearer ${META}, scope="a b", error="insufficient_scope", error_description="More."`,
  ],
])('%s', async (_name, error, dpop, status, challenge) => {
  const res = await answer(error, error === forbidden ? 'a b' : undefined, dpop);
  expect(res.status).toBe(status);
  expect(res.headers['www-authenticate']).toBe(challenge);
});

test.each([
  ['a typographic apostrophe becomes an ASCII one', 'The proof’s key.', "The proof's key."],
  ['quotes and backslashes are dropped', 'a "quoted" \\ word', 'a quoted  word'],
  ['characters beyond ASCII are dropped', 'café ✓ \u202eevil', 'caf  evil'],
  ['control characters are dropped', 'line\r\nbreak\u0000', 'linebreak'],
])('a description that %s', async (_name, description, sent) => {
  const res = await answer(new OAuthError('invalid_token', description));
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toBe(
    `Bearer ${META}, error="invalid_token", error_description="${sent}"`,
  );
  // The body keeps the description as it was.
  expect(res.body.error_description).toBe(description);
});

test('without an error: 401 invalid_token "An access token is required.", no-store', async () => {
  const res = await answer(undefined);
  expect(res.body).toEqual({ error: 'invalid_token', error_description: 'An access token is required.' });
  expect(res.headers['cache-control']).toBe('no-store');
});

test.each([
  ['nothing exposed yet', undefined, 'WWW-Authenticate'],
  ['what the host app exposes is kept', 'Mcp-Session-Id', 'Mcp-Session-Id, WWW-Authenticate'],
  [
    'already exposed (in any case): unchanged',
    'Mcp-Session-Id, www-authenticate',
    'Mcp-Session-Id, www-authenticate',
  ],
])('CORS: %s', async (_name, before, after) => {
  const app = express();
  app.get('/', (_req, res) => {
    if (before !== undefined) res.setHeader('Access-Control-Expose-Headers', before);
    refuseBearer(res, URL_, invalid);
  });
  const res = await request(app).get('/');
  expect(res.headers['access-control-expose-headers']).toBe(after);
});
