// authenticateClient, rule by rule (RFC 6749 §2.3, RFC 7523 §2.2 and §3): each case is a request an attacker could
// send (a second method beside the registered one, a malformed or smuggled Basic header, a client_id that disagrees
// with the credentials) and the answer that stops it. The context is a small fake: one client per method, keys given
// directly, a clock frozen in 2020, a jti register that records what it is asked.
import { createPublicKey } from 'node:crypto';
import { rsaKeyPair } from '../../helpers/rsa-keys';
import type { Request } from 'express';
import jwt from 'jsonwebtoken';
import type { OAuthContext } from '../../../lib/context';
import { JWT_BEARER_ASSERTION } from '../../../lib/clients/assertion';
import type { VerificationKey } from '../../../lib/jwt/verify';
import { hashSecret } from '../../../lib/crypto/secrets';
import { OAuthError } from '../../../lib/errors';
import { authenticateClient } from '../../../lib/clients/authentication';
import type { ClientRecord, TokenEndpointAuthMethod } from '../../../lib/store/types';

const ISSUER = 'https://as.example';
const TOKEN_ENDPOINT = 'https://as.example/v1/oauth/token';
const NOW = Date.UTC(2020, 0, 1, 12);
const NOW_S = NOW / 1000;
const SECRET = 'correct: secret';
const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="oauth"' };

const keyPair = rsaKeyPair('client-authentication');
const KEY: VerificationKey = {
  kid: 'k1',
  kty: 'RSA',
  crv: undefined,
  alg: undefined,
  use: undefined,
  key: createPublicKey(keyPair.privateKey),
};

const record = (clientId: string, method: TokenEndpointAuthMethod, secret = true): ClientRecord => ({
  clientId,
  clientSecretHash: secret ? hashSecret(SECRET) : null,
  clientName: null,
  redirectUris: [],
  grantTypes: [],
  responseTypes: [],
  tokenEndpointAuthMethod: method,
  scope: '',
  metadata: {},
  issuedAt: 0,
});

const CLIENTS: Record<string, ClientRecord> = {
  basic: record('basic', 'client_secret_basic'),
  post: record('post', 'client_secret_post'),
  public: record('public', 'none', false),
  keyed: record('keyed', 'private_key_jwt', false),
  // A confidential client whose hash was lost: no secret may authenticate it, not even an empty one.
  hashless: record('hashless', 'client_secret_post', false),
  'a b c+:%': record('a b c+:%', 'client_secret_basic'),
  x: record('x', 'client_secret_basic'),
};

interface Fake {
  ctx: OAuthContext;
  keyCalls: { refetch: boolean | undefined; req: Request | undefined }[];
  used: [string, string, number][];
}

function fake(): Fake {
  const keyCalls: Fake['keyCalls'] = [];
  const used: Fake['used'] = [];
  const ctx = {
    config: {
      issuer: ISSUER,
      endpoints: { token: TOKEN_ENDPOINT },
      now: () => NOW,
      authMethods: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    },
    store: {
      useAssertionId: (clientId: string, jti: string, expiresAt: number) => {
        used.push([clientId, jti, expiresAt]);
        return true;
      },
    },
    findClient: async (clientId: string) => CLIENTS[clientId],
    clientKeys: async (_client: ClientRecord, options?: { refetch?: boolean; req?: Request }) => {
      keyCalls.push({ refetch: options?.refetch, req: options?.req });
      return [KEY];
    },
  } as unknown as OAuthContext;
  return { ctx, keyCalls, used };
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const raw = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

const request = (body: Record<string, unknown> = {}, authorization?: string) =>
  ({ headers: authorization === undefined ? {} : { authorization }, body }) as unknown as Request;

const assertion = (claims: Record<string, unknown> = {}) =>
  jwt.sign(
    { iss: 'keyed', sub: 'keyed', aud: ISSUER, iat: NOW_S, exp: NOW_S + 60, jti: 'j1', ...claims },
    keyPair.privateKey,
    { algorithm: 'RS256', keyid: 'k1' },
  );
const ASSERTED = () => ({ client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: assertion() });

async function refusal(req: Request, options?: { optional?: boolean }): Promise<OAuthError> {
  const error = await authenticateClient(fake().ctx, req, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OAuthError);
  return error as OAuthError;
}

describe('each method authenticates the client that registered it', () => {
  test.each([
    ['client_secret_basic', () => request({}, basic('basic', SECRET)), 'basic'],
    [
      'client_secret_basic, the scheme in capitals',
      () => request({}, `BASIC ${basic('basic', SECRET).slice(6)}`),
      'basic',
    ],
    [
      'client_secret_basic, extra spaces around the credentials',
      () => request({}, `Basic   ${basic('basic', SECRET).slice(6)}  `),
      'basic',
    ],
    [
      'client_secret_basic with the same client_id in the body',
      () => request({ client_id: 'basic' }, basic('basic', SECRET)),
      'basic',
    ],
    [
      'client_secret_basic, id and secret form-encoded (RFC 6749 §2.3.1)',
      () => request({}, basic('a b c+:%', SECRET)),
      'a b c+:%',
    ],
    [
      'client_secret_basic, "+" for a space, twice',
      () => request({}, raw('a+b+c%2B%3A%25:correct%3A+secret')),
      'a b c+:%',
    ],
    ['client_secret_basic, a one-character client_id', () => request({}, basic('x', SECRET)), 'x'],
    ['client_secret_basic, a secret with a colon, not encoded', () => request({}, raw(`x:${SECRET}`)), 'x'],
    ['client_secret_post', () => request({ client_id: 'post', client_secret: SECRET }), 'post'],
    [
      'client_secret_post beside a Bearer header that says "basic" (not a Basic header)',
      () => request({ client_id: 'post', client_secret: SECRET }, 'Bearer basic x'),
      'post',
    ],
    ['none (a public client)', () => request({ client_id: 'public' }), 'public'],
    ['private_key_jwt', () => request(ASSERTED()), 'keyed'],
    [
      'private_key_jwt with the same client_id',
      () => request({ ...ASSERTED(), client_id: 'keyed' }),
      'keyed',
    ],
    [
      'private_key_jwt beside a Bearer header (not a second client method)',
      () => request(ASSERTED(), 'Bearer basic x'),
      'keyed',
    ],
    [
      'private_key_jwt, aud the token endpoint',
      () =>
        request({
          client_assertion_type: JWT_BEARER_ASSERTION,
          client_assertion: assertion({ aud: TOKEN_ENDPOINT }),
        }),
      'keyed',
    ],
    [
      'private_key_jwt, aud the issuer with a trailing slash',
      () =>
        request({
          client_assertion_type: JWT_BEARER_ASSERTION,
          client_assertion: assertion({ aud: `${ISSUER}/` }),
        }),
      'keyed',
    ],
  ])('%s', async (_name, make, clientId) => {
    const client = await authenticateClient(fake().ctx, make());
    expect(client?.clientId).toBe(clientId);
  });

  test('private_key_jwt: the client keys, the clock and the jti register of the context are used', async () => {
    const { ctx, keyCalls, used } = fake();
    const req = request(ASSERTED());
    await authenticateClient(ctx, req);
    expect(keyCalls).toEqual([{ refetch: false, req }]);
    expect(used).toEqual([['keyed', 'j1', (NOW_S + 60 + 30) * 1000]]);
  });

  test('a request with no client identification is anonymous where that is allowed (RFC 7009)', async () => {
    await expect(authenticateClient(fake().ctx, request(), { optional: true })).resolves.toBeUndefined();
  });
});

describe('refused', () => {
  test.each([
    [
      'no credentials at all',
      request(),
      'invalid_client',
      'Client authentication is required: send client_id (and its secret).',
      {},
    ],
    [
      'an unknown client, Basic',
      request({}, basic('nobody', SECRET)),
      'invalid_client',
      'Client authentication failed.',
      BASIC_CHALLENGE,
    ],
    [
      'an unknown client, in the body',
      request({ client_id: 'nobody', client_secret: SECRET }),
      'invalid_client',
      'Client authentication failed.',
      {},
    ],
    [
      'a wrong secret, Basic',
      request({}, basic('basic', 'guess')),
      'invalid_client',
      'Client authentication failed.',
      BASIC_CHALLENGE,
    ],
    [
      'a wrong secret, in the body',
      request({ client_id: 'post', client_secret: 'guess' }),
      'invalid_client',
      'Client authentication failed.',
      {},
    ],
    [
      'any secret for a confidential client with no hash',
      request({ client_id: 'hashless', client_secret: SECRET }),
      'invalid_client',
      'Client authentication failed.',
      {},
    ],
    [
      'downgrade: a Basic client that sends its id alone, as a public client',
      request({ client_id: 'basic' }),
      'invalid_client',
      'This client registered token_endpoint_auth_method client_secret_basic; authenticate that way.',
      {},
    ],
    [
      'a post client that uses Basic (the challenge goes with the method used)',
      request({}, basic('post', SECRET)),
      'invalid_client',
      'This client registered token_endpoint_auth_method client_secret_post; authenticate that way.',
      BASIC_CHALLENGE,
    ],
    [
      'downgrade: a keyed client that sends its id alone',
      request({ client_id: 'keyed' }),
      'invalid_client',
      'This client registered token_endpoint_auth_method private_key_jwt; authenticate that way.',
      {},
    ],
    [
      'a public client that presents a secret',
      request({ client_id: 'public', client_secret: 'anything' }),
      'invalid_client',
      'This client registered token_endpoint_auth_method none; authenticate that way.',
      {},
    ],
  ])('%s', async (_name, req, code, description, headers) => {
    const error = await refusal(req);
    expect(error.code).toBe(code);
    expect(error.description).toBe(description);
    expect(error.headers).toEqual(headers);
  });

  test('a request with a secret but no client_id is refused even where anonymous requests are allowed', async () => {
    const error = await refusal(request({ client_secret: SECRET }), { optional: true });
    expect([error.code, error.description]).toEqual([
      'invalid_request',
      'client_secret was sent without client_id.',
    ]);
  });
});

describe('two methods in one request (RFC 6749 §2.3: a client MUST NOT use more than one)', () => {
  test.each([
    [
      'an assertion and client_secret',
      () => request({ ...ASSERTED(), client_secret: SECRET }),
      'Authenticate with a client assertion or a client secret, not both.',
    ],
    [
      'an assertion and a Basic header',
      () => request(ASSERTED(), basic('basic', SECRET)),
      'Authenticate with a client assertion or a client secret, not both.',
    ],
    [
      'an assertion and a basic header in lower case',
      () => request(ASSERTED(), basic('basic', SECRET).toLowerCase()),
      'Authenticate with a client assertion or a client secret, not both.',
    ],
    [
      'a Basic header and client_secret in the body',
      () => request({ client_secret: SECRET }, basic('basic', SECRET)),
      'Send the client secret either in the Authorization header or in the body, not both.',
    ],
    [
      'a Basic header and another client_id in the body',
      () => request({ client_id: 'post' }, basic('basic', SECRET)),
      'The client_id in the body differs from the one in the Authorization header.',
    ],
  ])('%s', async (_name, make, description) => {
    const error = await refusal(make());
    expect([error.code, error.description]).toEqual(['invalid_request', description]);
  });
});

describe('a client assertion that does not say clearly who it is', () => {
  test.each([
    [
      'the wrong assertion type',
      () => request({ client_assertion_type: 'urn:x', client_assertion: assertion() }),
      'invalid_request',
      `client_assertion_type must be ${JWT_BEARER_ASSERTION}.`,
    ],
    [
      'an assertion without its type',
      () => request({ client_assertion: assertion() }),
      'invalid_request',
      `client_assertion_type must be ${JWT_BEARER_ASSERTION}.`,
    ],
    [
      'the type without an assertion',
      () => request({ client_assertion_type: JWT_BEARER_ASSERTION }),
      'invalid_request',
      'client_assertion is missing.',
    ],
    [
      'an assertion that is not a JWT',
      () => request({ client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: 'garbage' }),
      'invalid_client',
      'The client assertion is not a JWT with a sub claim.',
    ],
    [
      'an assertion whose payload is not JSON (a 500 before)',
      () =>
        request({
          client_assertion_type: JWT_BEARER_ASSERTION,
          client_assertion: `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from('{"sub":').toString('base64url')}.x`,
        }),
      'invalid_client',
      'The client assertion is not a JWT with a sub claim.',
    ],
    [
      'client impersonation: an assertion about another client than client_id',
      () => request({ ...ASSERTED(), client_id: 'basic' }),
      'invalid_client',
      'The client assertion is about another client than client_id.',
    ],
    [
      'an assertion the client did not sign',
      () =>
        request({
          client_assertion_type: JWT_BEARER_ASSERTION,
          client_assertion: assertion({ aud: 'https://other.example' }),
        }),
      'invalid_client',
      `The client assertion was refused: its aud must be the issuer, "${ISSUER}", as its only value.`,
    ],
  ])('%s', async (_name, make, code, description) => {
    const error = await refusal(make());
    expect([error.code, error.description]).toEqual([code, description]);
  });

  test('an assertion whose sub names a client that uses a secret is refused: it authenticates that way', async () => {
    const req = request({
      client_assertion_type: JWT_BEARER_ASSERTION,
      client_assertion: assertion({ iss: 'basic', sub: 'basic' }),
    });
    expect((await refusal(req)).description).toBe(
      'This client registered token_endpoint_auth_method client_secret_basic; authenticate that way.',
    );
  });
});

describe('a malformed or smuggled Basic header is refused, never read in part', () => {
  const B64 = Buffer.from(`basic:${encodeURIComponent(SECRET)}`).toString('base64');
  test.each([
    ['junk after the base64', `Basic ${B64}!!`],
    ['junk before the base64', `Basic !!${B64}`],
    ['a dot inside', `Basic ${B64.slice(0, 4)}.${B64.slice(4)}`],
    ['base64url characters', `Basic ${B64}-_`],
    ['padding in the middle', `Basic ${Buffer.from('x:').toString('base64')}${B64}`],
    ['an empty client_id', raw(`:${SECRET}`)],
    ['no colon', raw('basic')],
    ['an invalid percent-encoding', raw('basic:%E0%A4%A')],
    ['a control character in the client_id', raw(`basic%0A:${SECRET}`)],
    ['a control character in the secret', raw(`basic:${SECRET}%00`)],
    ['nothing after the scheme', 'Basic '],
  ])('%s', async (_name, header) => {
    const error = await refusal(request({}, header));
    expect([error.code, error.description]).toEqual([
      'invalid_client',
      'The Basic credentials are malformed.',
    ]);
    expect(error.headers).toEqual(BASIC_CHALLENGE);
  });
});

test('private_key_jwt is refused, before its assertion is read, when the server does not offer it', async () => {
  const { ctx, keyCalls, used } = fake();
  const offered = {
    ...ctx,
    config: { ...ctx.config, authMethods: ['client_secret_basic', 'none'] },
  } as OAuthContext;
  const error = await authenticateClient(offered, request(ASSERTED())).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(OAuthError);
  expect(error).toMatchObject({
    code: 'invalid_client',
    message: 'This server does not accept private_key_jwt client authentication.',
  });
  expect([keyCalls, used]).toEqual([[], []]);
});
