// Control characters (NUL and the rest of C0, and DEL) in any parameter or registration field: a clear 400 from
// every endpoint, on SQLite and on PostgreSQL (which cannot store a NUL, and answered 500), and nothing reaches the
// store or the error log.
import request from 'supertest';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

interface Case {
  name: string;
  send(app: RunningExampleApp): request.Test;
  status: number;
  error?: string;
  html?: boolean;
}

const authorize = (params: Record<string, string>) => (app: RunningExampleApp) =>
  request(app.baseUrl).get(`/v1/oauth/authorize?${new URLSearchParams(params)}`);
const register = (body: unknown) => (app: RunningExampleApp) =>
  request(app.baseUrl)
    .post('/v1/oauth/register')
    .send(body as object);

const CASES: Case[] = [
  {
    name: 'a NUL client_id at the authorization endpoint',
    send: authorize({ client_id: '\u0000' }),
    status: 400,
    html: true,
  },
  {
    name: 'a NUL in redirect_uri',
    send: authorize({ client_id: 'x', redirect_uri: 'https://a.example/\u0000', response_type: 'code' }),
    status: 400,
    html: true,
  },
  {
    name: 'an escape character in state',
    send: authorize({ client_id: 'x', state: '\u001b[31m', code_challenge: CHALLENGE }),
    status: 400,
    html: true,
  },
  {
    name: 'a NUL client_name at registration',
    send: register({ client_name: 'Evil\u0000', redirect_uris: ['https://a.example/cb'] }),
    status: 400,
    error: 'invalid_client_metadata',
  },
  {
    name: 'a NUL in a redirect URI at registration',
    send: register({ redirect_uris: ['https://a.example/\u0000cb'] }),
    status: 400,
    error: 'invalid_client_metadata',
  },
  {
    name: 'a control character in contacts',
    send: register({ redirect_uris: ['https://a.example/cb'], contacts: ['a\u0007@b.example'] }),
    status: 400,
    error: 'invalid_client_metadata',
  },
  {
    name: 'a NUL in a field name',
    send: register({ redirect_uris: ['https://a.example/cb'], 'x\u0000': 1 }),
    status: 400,
    error: 'invalid_client_metadata',
  },
  {
    name: 'a DEL in software_id',
    send: register({ redirect_uris: ['https://a.example/cb'], software_id: 'a\u007f' }),
    status: 400,
    error: 'invalid_client_metadata',
  },
  {
    name: 'a NUL client_id at the token endpoint',
    send: (app) =>
      request(app.baseUrl)
        .post('/v1/oauth/token')
        .type('form')
        .send({ grant_type: 'refresh_token', client_id: '\u0000' }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'a NUL refresh token in JSON',
    send: (app) =>
      request(app.baseUrl)
        .post('/v1/oauth/token')
        .send({ grant_type: 'refresh_token', client_id: 'x', refresh_token: 'a\u0000b' }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'a NUL in Basic credentials',
    send: (app) =>
      request(app.baseUrl)
        .post('/v1/oauth/token')
        .set('Authorization', `Basic ${Buffer.from('client\u0000:secret').toString('base64')}`)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: 'x' }),
    status: 401,
    error: 'invalid_client',
  },
  {
    name: 'a NUL token at revocation',
    send: (app) => request(app.baseUrl).post('/v1/oauth/revoke').send({ token: '\u0000' }),
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'a NUL email on the OAuth sign-in form',
    send: (app) =>
      request(app.baseUrl)
        .post('/v1/oauth/authorize/sign-in')
        .type('form')
        .send({ email: 'a\u0000@b.example', password: 'x' }),
    status: 400,
    html: true,
  },
  {
    name: 'a NUL email on the account sign-in',
    send: (app) =>
      request(app.baseUrl)
        .post('/account/sign-in')
        .type('form')
        .send({ email: 'owner\u0000@example.com', password: 'whatever it is' }),
    status: 403, // the form's CSRF check comes first; the email never reaches the database either way
  },
];

function controlCharacterSuite(start: () => Promise<{ app: RunningExampleApp; stop(): Promise<void> }>) {
  let app: RunningExampleApp;
  let stop: () => Promise<void>;
  let errors: jest.SpyInstance;
  beforeAll(async () => {
    ({ app, stop } = await start());
  });
  afterAll(() => stop?.());
  beforeEach(() => {
    errors = jest.spyOn(console, 'error');
  });
  afterEach(() => errors.mockRestore());

  test.each(CASES)('$name: $status', async ({ send, status, error, html }) => {
    const res = await send(app);
    expect(res.status).toBe(status);
    if (error) expect(res.body.error).toBe(error);
    if (html) expect(res.headers['content-type']).toMatch(/html/);
    // Nothing unexpected happened underneath: no server_error was logged.
    expect(errors).not.toHaveBeenCalled();
  });

  test('the account sign-in with a valid form and a NUL email is a plain failed sign-in', async () => {
    const agent = request.agent(app.baseUrl);
    const page = await agent.get('/account/sign-in');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!;
    const res = await agent
      .post('/account/sign-in')
      .type('form')
      .send({ csrf_token: csrf, email: 'owner\u0000@example.com', password: 'whatever it is' });
    expect(res.status).toBe(401);
    expect(errors).not.toHaveBeenCalled();
  });
}

describe('control characters, on SQLite', () => {
  controlCharacterSuite(async () => {
    const app = await startExampleApp();
    return { app, stop: () => app.stop() };
  });
});

describeWith('control characters, on PostgreSQL', { postgres: true }, () => {
  let database: TestDatabase;
  controlCharacterSuite(async () => {
    database = await createTestDatabase();
    const app = await startExampleApp({ DATABASE_URL: database.url });
    return {
      app,
      stop: async () => {
        await app.stop();
        await database.drop();
      },
    };
  });
});
