// The token endpoint: client authentication, the code grant with PKCE, the refresh grant with rotation.
import request from 'supertest';
import jwt from 'jsonwebtoken';
import { refreshTokenKey } from '../../lib/crypto/refresh-token';
import { hashSecret, randomSecret } from '../../lib/crypto/secrets';
import type { RefreshTokenKey } from '../../lib/store/types';
import { codeRecord } from '../../lib/testing/fixtures';
import {
  authorizeInBrowser,
  createTestServer,
  ISSUER,
  obtainTokens,
  registerClient,
  RESOURCE,
  tokenRequest,
  USER,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';
import { DAY, HOUR, MINUTE, SECOND } from '../helpers/clock';
import { pkcePair } from '../helpers/pkce';

let server: TestServer;
beforeEach(() => {
  server = createTestServer();
});
afterEach(() => server.close());

async function codeFor(client: RegisteredClient, overrides: Record<string, string | undefined> = {}) {
  const { code, pkce } = await authorizeInBrowser(server.app, client, overrides);
  return {
    code: code!,
    verifier: pkce.verifier,
    body: {
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: overrides.redirect_uri ?? client.redirect_uris[0]!,
      code_verifier: pkce.verifier,
    },
  };
}

describe('authorization_code grant', () => {
  test.each(['client_secret_basic', 'client_secret_post', 'none'])(
    'issues tokens to a %s client',
    async (method) => {
      const client = await registerClient(server.app, { token_endpoint_auth_method: method });
      const { body } = await codeFor(client);
      const res = await tokenRequest(server.app, client, body);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.pragma).toBe('no-cache');
      expect(res.body).toEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: expect.stringMatching(/^[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/),
        scope: 'fakture:read clients:read',
      });
      const { header, payload } = jwt.decode(res.body.access_token, { complete: true }) as jwt.Jwt & {
        payload: jwt.JwtPayload;
      };
      expect(header).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
      expect(payload).toMatchObject({
        iss: ISSUER,
        sub: USER.id,
        aud: RESOURCE,
        client_id: client.client_id,
        scope: 'fakture:read clients:read',
      });
      expect(payload.exp! - payload.iat!).toBe(3600);
    },
  );

  test('JSON bodies are accepted as well as forms', async () => {
    const client = await registerClient(server.app, { token_endpoint_auth_method: 'none' });
    const { body } = await codeFor(client);
    const res = await request(server.app)
      .post('/v1/oauth/token')
      .send({ ...body, client_id: client.client_id });
    expect(res.status).toBe(200);
  });

  test('code replay: a second redemption fails and revokes the tokens of the first', async () => {
    const client = await registerClient(server.app);
    const { body } = await codeFor(client);
    const first = await tokenRequest(server.app, client, body);
    expect(first.status).toBe(200);
    const second = await tokenRequest(server.app, client, body);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    const api = await request(server.app)
      .post('/mcp')
      .set('Authorization', `Bearer ${first.body.access_token}`);
    expect(api.status).toBe(401);
    const refresh = await tokenRequest(server.app, client, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  test('verifier brute force: a wrong verifier burns the code, so the right one fails afterwards', async () => {
    const client = await registerClient(server.app);
    const { body } = await codeFor(client);
    const guess = await tokenRequest(server.app, client, { ...body, code_verifier: pkcePair().verifier });
    expect(guess.body).toEqual({
      error: 'invalid_grant',
      error_description: 'code_verifier does not match the code_challenge.',
    });
    const right = await tokenRequest(server.app, client, body);
    expect(right.body.error).toBe('invalid_grant');
  });

  test('an intercepted code is useless without the verifier: PKCE is required at the token endpoint', async () => {
    const client = await registerClient(server.app);
    const { body } = await codeFor(client);
    const { code_verifier: _dropped, ...withoutVerifier } = body;
    const res = await tokenRequest(server.app, client, withoutVerifier);
    expect(res.body.error).toBe('invalid_request');
    // A request that is refused before the check does not burn the code: the real client still succeeds.
    expect((await tokenRequest(server.app, client, body)).status).toBe(200);
  });

  test('a code issued to another client is refused, and stays usable by its own client', async () => {
    const owner = await registerClient(server.app);
    const thief = await registerClient(server.app);
    const { body } = await codeFor(owner);
    const stolen = await tokenRequest(server.app, thief, body);
    expect(stolen.body.error).toBe('invalid_grant');
    expect((await tokenRequest(server.app, owner, body)).status).toBe(200);
  });

  test('an expired code (10 minutes) is refused', async () => {
    const client = await registerClient(server.app);
    const { body } = await codeFor(client);
    server.clock.advance(10 * MINUTE);
    expect((await tokenRequest(server.app, client, body)).body.error).toBe('invalid_grant');
  });

  test.each<[string, (body: Record<string, string>) => Record<string, string>, string]>([
    [
      'a different redirect_uri',
      (b) => ({ ...b, redirect_uri: 'https://client.example/other' }),
      'invalid_grant',
    ],
    ['no redirect_uri', ({ redirect_uri: _r, ...b }) => b, 'invalid_request'],
    ['no code', ({ code: _c, ...b }) => b, 'invalid_request'],
    ['an unknown code', (b) => ({ ...b, code: 'x'.repeat(43) }), 'invalid_grant'],
    ['a 42-character verifier', (b) => ({ ...b, code_verifier: 'a'.repeat(42) }), 'invalid_request'],
    ['a 129-character verifier', (b) => ({ ...b, code_verifier: 'a'.repeat(129) }), 'invalid_request'],
    ['another resource', (b) => ({ ...b, resource: 'https://elsewhere.example/mcp' }), 'invalid_target'],
    ['no grant_type', ({ grant_type: _g, ...b }) => b, 'invalid_request'],
    ['an unsupported grant_type', (b) => ({ ...b, grant_type: 'password' }), 'unsupported_grant_type'],
  ])('%s is %s', async (_name, change, error) => {
    const client = await registerClient(server.app);
    const { body } = await codeFor(client);
    const res = await tokenRequest(server.app, client, change(body));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
  });

  test('the resource, when repeated at the token endpoint, must be the one authorized', async () => {
    const client = await registerClient(server.app);
    const { body } = await codeFor(client);
    expect((await tokenRequest(server.app, client, { ...body, resource: RESOURCE })).status).toBe(200);
  });

  test('a loopback client redeems with the exact redirect URI it used, port included', async () => {
    const client = await registerClient(server.app, {
      redirect_uris: ['http://127.0.0.1:33418/cb'],
      token_endpoint_auth_method: 'none',
    });
    const { body } = await codeFor(client, { redirect_uri: 'http://127.0.0.1:50123/cb' });
    expect(
      (await tokenRequest(server.app, client, { ...body, redirect_uri: 'http://127.0.0.1:33418/cb' })).body
        .error,
    ).toBe('invalid_grant');
    expect((await tokenRequest(server.app, client, body)).status).toBe(200);
  });

  test('a client that did not register refresh_token gets no refresh token and cannot refresh', async () => {
    const client = await registerClient(server.app, { grant_types: ['authorization_code'] });
    const { body } = await codeFor(client);
    const res = await tokenRequest(server.app, client, body);
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('refresh_token');
    const refresh = await tokenRequest(server.app, client, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
    });
    expect(refresh.body.error).toBe('unauthorized_client');
  });
});

describe('client authentication', () => {
  test.each<[string, (client: RegisteredClient) => request.Test, boolean]>([
    [
      'a wrong secret (Basic)',
      (c) =>
        request(server.app)
          .post('/v1/oauth/token')
          .auth(c.client_id, 'wrong')
          .type('form')
          .send({ grant_type: 'refresh_token', refresh_token: 'x' }),
      true,
    ],
    [
      'an unknown client (Basic)',
      () =>
        request(server.app)
          .post('/v1/oauth/token')
          .auth('nobody', 'x')
          .type('form')
          .send({ grant_type: 'refresh_token', refresh_token: 'x' }),
      true,
    ],
    [
      'malformed Basic credentials',
      () =>
        request(server.app)
          .post('/v1/oauth/token')
          .set('Authorization', 'Basic !!!')
          .type('form')
          .send({ grant_type: 'refresh_token' }),
      true,
    ],
    [
      'a Basic client authenticating in the body',
      (c) =>
        request(server.app).post('/v1/oauth/token').type('form').send({
          grant_type: 'refresh_token',
          refresh_token: 'x',
          client_id: c.client_id,
          client_secret: c.client_secret!,
        }),
      false,
    ],
    [
      'a confidential client sending no secret',
      (c) =>
        request(server.app)
          .post('/v1/oauth/token')
          .type('form')
          .send({ grant_type: 'refresh_token', refresh_token: 'x', client_id: c.client_id }),
      false,
    ],
    [
      'no client at all',
      () =>
        request(server.app)
          .post('/v1/oauth/token')
          .type('form')
          .send({ grant_type: 'refresh_token', refresh_token: 'x' }),
      false,
    ],
  ])('%s is 401 invalid_client', async (_name, send, basic) => {
    const client = await registerClient(server.app);
    const res = await send(client);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    if (basic) expect(res.headers['www-authenticate']).toMatch(/^Basic/);
  });

  test('two authentication methods at once are invalid_request (RFC 6749 §2.3)', async () => {
    const client = await registerClient(server.app);
    const res = await request(server.app)
      .post('/v1/oauth/token')
      .auth(client.client_id, client.client_secret!)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'x', client_secret: client.client_secret! });
    expect(res.body.error).toBe('invalid_request');
  });

  test('Basic credentials are form-urldecoded (RFC 6749 §2.3.1)', async () => {
    const client = await registerClient(server.app);
    const encoded = Buffer.from(
      `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret!)}`,
    ).toString('base64');
    const res = await request(server.app)
      .post('/v1/oauth/token')
      .set('Authorization', `Basic ${encoded}`)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'unknown' });
    expect(res.body.error).toBe('invalid_grant');
  });

  test.each([
    ['an empty body', ''],
    ['malformed JSON', '{"grant_type":'],
    ['a JSON array', '[]'],
    ['a repeated parameter', 'grant_type=refresh_token&grant_type=authorization_code'],
  ])('%s is a clear 400 or 401, never a 5xx', async (_name, body) => {
    const type =
      body.startsWith('{') || body.startsWith('[') ? 'application/json' : 'application/x-www-form-urlencoded';
    const res = await request(server.app).post('/v1/oauth/token').set('Content-Type', type).send(body);
    expect([400, 401]).toContain(res.status);
    expect(res.body.error).toMatch(/^invalid_(request|client)$/);
  });
});

describe('refresh_token grant', () => {
  const refresh = (client: RegisteredClient, token: string, extra: Record<string, string> = {}) =>
    tokenRequest(server.app, client, { grant_type: 'refresh_token', refresh_token: token, ...extra });

  test('rotates: a new refresh token each time, and the new access token works', async () => {
    const { client, tokens } = await obtainTokens(server);
    const res = await refresh(client, tokens.refresh_token);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(res.body.scope).toBe(tokens.scope);
    expect(
      (await request(server.app).post('/mcp').set('Authorization', `Bearer ${res.body.access_token}`)).status,
    ).toBe(200);
    // "<grant id>.<secret>", stored under the grant id and the token's hash, never in plain text.
    const [grantId, secret] = res.body.refresh_token.split('.');
    expect(jwt.decode(res.body.access_token)).toMatchObject({ grant_id: grantId });
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await server.store.findRefreshToken(refreshTokenKey(res.body.refresh_token))).toBeDefined();
    expect(
      await server.store.findRefreshToken(hashSecret(res.body.refresh_token) as string as RefreshTokenKey),
    ).toBeUndefined();
  });

  test('a refresh token of the old format (a bare secret) still rotates, into one of the new format', async () => {
    const { client, tokens } = await obtainTokens(server);
    const grantId = (jwt.decode(tokens.access_token) as { grant_id: string }).grant_id;
    // Tokens of the old format were stored under their bare hash; one is planted as the first token of a code.
    const old = randomSecret();
    const grant = (await server.store.findGrant(grantId))!;
    const code = codeRecord(Date.now(), grant, { clientId: client.client_id });
    await server.store.saveAuthorizationCode(code);
    await server.store.consumeAuthorizationCode(code.codeHash, {
      key: hashSecret(old) as string as RefreshTokenKey,
    });
    const res = await refresh(client, old);
    expect(res.status).toBe(200);
    expect(res.body.refresh_token.startsWith(`${grantId}.`)).toBe(true);
    expect((await refresh(client, res.body.refresh_token)).status).toBe(200);
  });

  test.each([
    [
      'another grant’s id in front of the secret',
      (token: string, other: string) => other + token.slice(token.indexOf('.')),
    ],
    ['no grant id', (token: string) => token.slice(token.indexOf('.') + 1)],
    ['an unknown secret', (token: string) => `${token.slice(0, token.indexOf('.'))}.${randomSecret()}`],
  ])('a token with %s is invalid_grant and changes nothing', async (_name, tamper) => {
    const { client, tokens } = await obtainTokens(server);
    const second = await obtainTokens(server);
    const otherGrant = second.tokens.refresh_token.slice(0, second.tokens.refresh_token.indexOf('.'));
    const res = await refresh(client, tamper(tokens.refresh_token, otherGrant));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
    expect((await refresh(second.client, second.tokens.refresh_token)).status).toBe(200);
  });

  test('a lost response: the same token retried within 60 s still works', async () => {
    const { client, tokens } = await obtainTokens(server);
    await refresh(client, tokens.refresh_token);
    server.clock.advance(30 * SECOND);
    const retry = await refresh(client, tokens.refresh_token);
    expect(retry.status).toBe(200);
    expect((await refresh(client, retry.body.refresh_token)).status).toBe(200);
  });

  test('an old token presented within the reuse window gets its own successor again: one chain, no branch', async () => {
    const { client, tokens } = await obtainTokens(server);
    const second = await refresh(client, tokens.refresh_token);
    server.clock.advance(50 * MINUTE);
    const third = await refresh(client, second.body.refresh_token);
    server.clock.advance(50 * MINUTE);
    // A second process that kept the first token catches up along the same chain (within the default two hours).
    const late = await refresh(client, tokens.refresh_token);
    expect(late.status).toBe(200);
    expect(late.body.refresh_token).toBe(second.body.refresh_token);
    expect((await refresh(client, late.body.refresh_token)).body.refresh_token).toBe(
      third.body.refresh_token,
    );
    expect((await refresh(client, third.body.refresh_token)).status).toBe(200);
  });

  test('refresh reuse: an old token presented after the reuse window revokes the whole grant', async () => {
    const { client, tokens } = await obtainTokens(server);
    const second = await refresh(client, tokens.refresh_token);
    const third = await refresh(client, second.body.refresh_token);
    server.clock.advance(2 * HOUR + SECOND);
    const replay = await refresh(client, tokens.refresh_token);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    // The whole grant is gone: the newest refresh token and the newest access token alike.
    expect((await refresh(client, third.body.refresh_token)).body.error).toBe('invalid_grant');
    expect(
      (await request(server.app).post('/mcp').set('Authorization', `Bearer ${third.body.access_token}`))
        .status,
    ).toBe(401);
  });

  test('the newest used token, its successor never used, still gets that successor days later', async () => {
    const { client, tokens } = await obtainTokens(server);
    const lost = await refresh(client, tokens.refresh_token);
    server.clock.advance(5 * DAY);
    const retried = await refresh(client, tokens.refresh_token);
    expect(retried.status).toBe(200);
    expect(retried.body.refresh_token).toBe(lost.body.refresh_token);
  });

  test('scope may narrow, never widen', async () => {
    const { client, tokens } = await obtainTokens(server);
    const wider = await refresh(client, tokens.refresh_token, { scope: 'fakture:read company:write' });
    expect(wider.body.error).toBe('invalid_scope');
    // The refused request did not use the token up.
    const narrower = await refresh(client, tokens.refresh_token, { scope: 'fakture:read' });
    expect(narrower.status).toBe(200);
    expect(narrower.body.scope).toBe('fakture:read');
    // The grant keeps its full scope: the next refresh may ask for all of it again.
    expect((await refresh(client, narrower.body.refresh_token)).body.scope).toBe('fakture:read clients:read');
  });

  test('a refresh token of another client is refused and left intact', async () => {
    const { client, tokens } = await obtainTokens(server);
    const other = await registerClient(server.app);
    expect((await refresh(other, tokens.refresh_token)).body.error).toBe('invalid_grant');
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
  });

  test('another resource is invalid_target', async () => {
    const { client, tokens } = await obtainTokens(server);
    expect(
      (await refresh(client, tokens.refresh_token, { resource: 'https://elsewhere.example/mcp' })).body.error,
    ).toBe('invalid_target');
  });

  test('nothing outlives the grant: the last access token expires with it, then refresh fails', async () => {
    const { client, tokens } = await obtainTokens(server);
    let current = tokens.refresh_token;
    for (let day = 0; day < 29; day += 1) {
      server.clock.advance(DAY);
      const res = await refresh(client, current);
      expect(res.status).toBe(200);
      current = res.body.refresh_token;
    }
    server.clock.advance(DAY - 30 * MINUTE);
    const last = await refresh(client, current);
    expect(last.body.expires_in).toBeLessThanOrEqual(30 * 60);
    server.clock.advance(30 * MINUTE);
    expect((await refresh(client, last.body.refresh_token)).body.error).toBe('invalid_grant');
  });
});
