// Revocation (RFC 7009): JSON as the spec shows, forms too; the client's whole grant ends at once.
import request from 'supertest';
import {
  createTestServer,
  obtainTokens,
  registerClient,
  tokenRequest,
  type TestServer,
} from '../helpers/oauth-app';

let server: TestServer;
beforeEach(() => {
  server = createTestServer();
});
afterEach(() => server.close());

const callApi = (token: string) => request(server.app).post('/mcp').set('Authorization', `Bearer ${token}`);
const refresh = (client: Parameters<typeof tokenRequest>[1], token: string) =>
  tokenRequest(server.app, client, { grant_type: 'refresh_token', refresh_token: token });

describe('POST /v1/oauth/revoke', () => {
  test('JSON {"token": refresh token}, with no credentials, as the spec shows: access ends at once', async () => {
    const { client, tokens } = await obtainTokens(server);
    expect((await callApi(tokens.access_token)).status).toBe(200);
    const res = await request(server.app)
      .post('/v1/oauth/revoke')
      .set('Content-Type', 'application/json')
      .send({ token: tokens.refresh_token });
    expect(res.status).toBe(200);
    expect((await callApi(tokens.access_token)).status).toBe(401);
    expect((await refresh(client, tokens.refresh_token)).body.error).toBe('invalid_grant');
  });

  test('a form-encoded body with client credentials works too', async () => {
    const { client, tokens } = await obtainTokens(server);
    const res = await request(server.app)
      .post('/v1/oauth/revoke')
      .auth(client.client_id, client.client_secret!)
      .type('form')
      .send({ token: tokens.refresh_token, token_type_hint: 'refresh_token' });
    expect(res.status).toBe(200);
    expect((await callApi(tokens.access_token)).status).toBe(401);
  });

  test('revoking an access token ends its grant (the hint only orders the lookups)', async () => {
    const { client, tokens } = await obtainTokens(server);
    for (const hint of ['access_token', 'refresh_token', 'something_else']) {
      const again = hint === 'access_token' ? tokens : (await obtainTokens(server)).tokens;
      const res = await request(server.app)
        .post('/v1/oauth/revoke')
        .send({ token: again.access_token, token_type_hint: hint });
      expect(res.status).toBe(200);
      expect((await callApi(again.access_token)).status).toBe(401);
    }
    expect((await refresh(client, tokens.refresh_token)).body.error).toBe('invalid_grant');
  });

  test('only that grant ends: another client of the same user keeps its access', async () => {
    const first = await obtainTokens(server);
    const second = await obtainTokens(server);
    await request(server.app).post('/v1/oauth/revoke').send({ token: first.tokens.refresh_token });
    expect((await callApi(second.tokens.access_token)).status).toBe(200);
  });

  test.each([
    ['an unknown token', 'x'.repeat(43)],
    ['a JWT from elsewhere', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl'],
  ])('%s is answered 200 (RFC 7009 §2.2)', async (_name, token) => {
    expect((await request(server.app).post('/v1/oauth/revoke').send({ token })).status).toBe(200);
  });

  test('revoking twice is 200 both times', async () => {
    const { tokens } = await obtainTokens(server);
    for (let i = 0; i < 2; i += 1) {
      expect(
        (await request(server.app).post('/v1/oauth/revoke').send({ token: tokens.refresh_token })).status,
      ).toBe(200);
    }
  });

  test('cross-client revocation: another client cannot revoke a token it does not hold', async () => {
    const { tokens } = await obtainTokens(server);
    const attacker = await registerClient(server.app);
    const res = await request(server.app)
      .post('/v1/oauth/revoke')
      .auth(attacker.client_id, attacker.client_secret!)
      .send({ token: tokens.refresh_token });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unauthorized_client');
    expect((await callApi(tokens.access_token)).status).toBe(200);
  });

  test('wrong client credentials are refused with 401, and nothing is revoked', async () => {
    const { client, tokens } = await obtainTokens(server);
    const res = await request(server.app)
      .post('/v1/oauth/revoke')
      .auth(client.client_id, 'wrong')
      .send({ token: tokens.refresh_token });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect((await callApi(tokens.access_token)).status).toBe(200);
  });

  test.each([
    ['no token', {}],
    ['an empty token', { token: '' }],
    ['a token that is not a string', { token: 42 }],
  ])('%s is invalid_request', async (_name, body) => {
    const res = await request(server.app).post('/v1/oauth/revoke').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('a revoked grant disappears from the user’s connected apps', async () => {
    const { tokens } = await obtainTokens(server);
    expect(await server.store.listActiveGrants('user-1')).toHaveLength(1);
    await request(server.app).post('/v1/oauth/revoke').send({ token: tokens.refresh_token });
    expect(await server.store.listActiveGrants('user-1')).toHaveLength(0);
  });
});
