// PostgreSQL lost while the app runs (reproduced: 500 server_error): cut through a local TCP proxy, the token,
// authorization, revocation and tool-server paths answer 503 temporarily_unavailable with Retry-After (a page in the
// browser), and everything works again once the database is back.
import request from 'supertest';
import { ALL_SCOPES, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

describeWith('the database lost while running', { postgres: true }, () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let app: RunningExampleApp;
  let warnings: jest.SpyInstance;
  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    proxy = await startTcpProxy(Number(url.port || 5432), url.hostname);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    app = await startExampleApp({ DATABASE_URL: url.href });
    warnings = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });
  afterAll(async () => {
    warnings?.mockRestore();
    await app?.stop();
    await proxy?.stop();
    await database?.drop();
  });

  test('token, authorize, revoke, /mcp and the account page answer 503 with Retry-After, then recover', async () => {
    const client = (
      await request(app.baseUrl)
        .post('/v1/oauth/register')
        .send({ redirect_uris: ['https://client.example/cb'], token_endpoint_auth_method: 'none' })
    ).body as { client_id: string };
    // A first token request makes the client known to this process; its refresh then needs the database.
    await request(app.baseUrl)
      .post('/v1/oauth/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'g.x', client_id: client.client_id });
    const token = await app.mintToken(ALL_SCOPES);
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);

    await proxy.cut();
    const calls = {
      token: () =>
        request(app.baseUrl)
          .post('/v1/oauth/token')
          .type('form')
          .send({ grant_type: 'refresh_token', refresh_token: 'g.x', client_id: client.client_id }),
      revoke: () => request(app.baseUrl).post('/v1/oauth/revoke').send({ token: 'g.some-token' }),
      authorize: () =>
        request(app.baseUrl).get(
          `/v1/oauth/authorize?client_id=not-yet-known&redirect_uri=${encodeURIComponent('https://client.example/cb')}`,
        ),
      mcp: () =>
        request(app.baseUrl)
          .post('/mcp')
          .set('Authorization', `Bearer ${token}`)
          .set('Accept', 'application/json, text/event-stream')
          .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    };
    for (const [name, call] of Object.entries(calls)) {
      const res = await call();
      expect({ name, status: res.status, retryAfter: res.headers['retry-after'] }).toEqual({
        name,
        status: 503,
        retryAfter: '5',
      });
      if (name === 'authorize') expect(res.text).toContain('briefly unavailable');
      else expect(res.body.error).toBe('temporarily_unavailable');
    }
    const account = await request(app.baseUrl)
      .post('/account/sign-in')
      .type('form')
      .send({ email: 'a@b.example', password: 'x' });
    expect([403, 503]).toContain(account.status); // the CSRF check comes first; no 500 either way
    errors.mockRestore();

    await proxy.restore();
    expect((await calls.revoke()).status).toBe(200);
    expect((await calls.mcp()).status).toBe(200);
    expect((await calls.token()).status).toBe(400); // an unknown refresh token again, no longer an outage
  });
});
