// Dynamic client registration (RFC 7591): the real MCP clients register, bad metadata is refused with 400.
import request from 'supertest';
import { hashSecret } from '../../lib/crypto/secrets';
import { HIDDEN_FORMATTING, ORDINARY_NAMES } from '../helpers/display-text';
import { createTestServer, obtainTokens, type TestServer } from '../helpers/oauth-app';
import { generateKeyPairSync } from 'node:crypto';

const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const publicJwk = { ...pair.publicKey.export({ format: 'jwk' }), kid: 'k1' };
const privateJwk = pair.privateKey.export({ format: 'jwk' });

describe('POST /v1/oauth/register', () => {
  let server: TestServer;
  beforeAll(() => {
    server = createTestServer();
  });
  afterAll(() => server.close());
  const register = (body: unknown) =>
    request(server.app)
      .post('/v1/oauth/register')
      .send(body as object);

  test('returns 201 with the full registered metadata and a secret that is stored only as a hash', async () => {
    const res = await register({
      client_name: 'Acme Agent',
      redirect_uris: ['https://acme.example/cb'],
      client_uri: 'https://acme.example',
      contacts: ['ops@acme.example'],
      unknown_field: 'ignored (RFC 7591 §2)',
    });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      client_id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      client_id_issued_at: Math.floor(server.clock.now() / 1000),
      client_secret_expires_at: 0,
      redirect_uris: ['https://acme.example/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      client_name: 'Acme Agent',
      scope: expect.stringContaining('fakture:read'),
      client_uri: 'https://acme.example',
      contacts: ['ops@acme.example'],
    });
    const stored = await server.store.findClient(res.body.client_id);
    expect(stored?.clientSecretHash).toBe(hashSecret(res.body.client_secret));
  });

  test.each([
    [
      'Claude',
      {
        client_name: 'Claude',
        redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    [
      'VS Code',
      {
        client_name: 'Visual Studio Code',
        redirect_uris: ['http://127.0.0.1:33418', 'https://vscode.dev/redirect'],
        token_endpoint_auth_method: 'none',
      },
    ],
    [
      'Cursor',
      {
        client_name: 'Cursor',
        redirect_uris: ['cursor://anysphere.cursor-retrieval/oauth/user-server/callback'],
        token_endpoint_auth_method: 'none',
      },
    ],
    [
      'MCP Inspector',
      {
        client_name: 'MCP Inspector',
        redirect_uris: ['http://localhost:6274/oauth/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'fakture:read',
      },
    ],
  ])('%s registers as it really does', async (_name, body) => {
    const res = await register(body);
    expect(res.status).toBe(201);
    expect(res.body.redirect_uris).toEqual(body.redirect_uris);
    if (body.token_endpoint_auth_method === 'none') expect(res.body).not.toHaveProperty('client_secret');
  });

  // RFC 7591 §3.2.1: the response holds the metadata as registered, so the method asked for comes back as asked.
  // Open WebUI reads the answer with a schema that refuses any method but client_secret_post or none.
  test.each([
    ['client_secret_post', { token_endpoint_auth_method: 'client_secret_post' }, true],
    ['client_secret_basic', { token_endpoint_auth_method: 'client_secret_basic' }, true],
    ['none', { token_endpoint_auth_method: 'none' }, false],
    [
      'private_key_jwt',
      { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [publicJwk] } },
      false,
    ],
    ['client_secret_basic, the default (RFC 7591 §2), when none is named', {}, true],
  ])('token_endpoint_auth_method %s is registered and answered as asked', async (name, fields, secret) => {
    const res = await register({ redirect_uris: ['https://a.example/cb'], ...fields });
    expect(res.status).toBe(201);
    expect(res.body.token_endpoint_auth_method).toBe(name.split(',')[0]);
    expect('client_secret' in res.body).toBe(secret);
    const stored = await server.store.findClient(res.body.client_id);
    expect(stored?.tokenEndpointAuthMethod).toBe(name.split(',')[0]);
  });

  test('Open WebUI registers with client_secret_post, is answered client_secret_post, and authenticates that way', async () => {
    const openWebUi = {
      client_name: 'Open WebUI',
      redirect_uris: ['https://chat.example/oauth/clients/mcp:fakture/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    };
    const res = await register(openWebUi);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...openWebUi, client_secret: expect.any(String) });
    const { tokens } = await obtainTokens(server, openWebUi);
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });

  // RFC 7591 §2: the server MUST ignore metadata it does not understand; §3.2.1 answers what was registered.
  test('fields this server does not know are accepted and left out of the answer', async () => {
    const res = await register({
      client_name: 'Acme Agent',
      redirect_uris: ['https://acme.example/cb'],
      token_endpoint_auth_method: 'client_secret_post',
      application_type: 'web',
      default_max_age: 3600,
      post_logout_redirect_uris: ['https://acme.example/bye'],
      x_vendor_extension: { nested: [1, 2, { deep: true }] },
      software_statement: 'eyJhbGciOiJub25lIn0.e30.',
    });
    expect(res.status).toBe(201);
    for (const unknown of [
      'application_type',
      'default_max_age',
      'post_logout_redirect_uris',
      'x_vendor_extension',
      'software_statement',
    ])
      expect(res.body).not.toHaveProperty(unknown);
    expect(res.body.token_endpoint_auth_method).toBe('client_secret_post');
  });

  test('a registration of redirect_uris alone gets every optional field defaulted', async () => {
    const res = await register({ redirect_uris: ['https://a.example/cb'] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      client_id: expect.any(String),
      client_secret: expect.any(String),
      client_secret_expires_at: 0,
      client_id_issued_at: expect.any(Number),
      redirect_uris: ['https://a.example/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: expect.stringContaining('fakture:read'),
    });
  });

  test.each([
    ['no redirect_uris', { redirect_uris: undefined }, 'invalid_redirect_uri'],
    ['an empty redirect_uris', { redirect_uris: [] }, 'invalid_redirect_uri'],
    ['redirect_uris not an array', { redirect_uris: 'https://a.example/cb' }, 'invalid_redirect_uri'],
    ['a relative URI', { redirect_uris: ['/callback'] }, 'invalid_redirect_uri'],
    ['a fragment', { redirect_uris: ['https://a.example/cb#x'] }, 'invalid_redirect_uri'],
    ['plain http on a public host', { redirect_uris: ['http://a.example/cb'] }, 'invalid_redirect_uri'],
    ['javascript:', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    ['data:', { redirect_uris: ['data:text/html,<script>alert(1)</script>'] }, 'invalid_redirect_uri'],
    ['file:', { redirect_uris: ['file:///etc/passwd'] }, 'invalid_redirect_uri'],
    ['vbscript:', { redirect_uris: ['vbscript:msgbox(1)'] }, 'invalid_redirect_uri'],
    ['credentials in the URI', { redirect_uris: ['https://user:pw@a.example/cb'] }, 'invalid_redirect_uri'],
    ['a non-string URI', { redirect_uris: [42] }, 'invalid_redirect_uri'],
    ['a very long URI', { redirect_uris: [`https://a.example/${'x'.repeat(2100)}`] }, 'invalid_redirect_uri'],
    [
      'too many URIs',
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) },
      'invalid_redirect_uri',
    ],
    ['an unknown auth method', { token_endpoint_auth_method: 'tls_client_auth' }, 'invalid_client_metadata'],
    [
      'private_key_jwt without keys',
      { token_endpoint_auth_method: 'private_key_jwt' },
      'invalid_client_metadata',
    ],
    [
      'both jwks and jwks_uri',
      {
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [] },
        jwks_uri: 'https://a.example/jwks',
      },
      'invalid_client_metadata',
    ],
    ['an http jwks_uri', { jwks_uri: 'http://a.example/jwks' }, 'invalid_client_metadata'],
    ['an empty jwks', { jwks: { keys: [] } }, 'invalid_client_metadata'],
    [
      'a symmetric key in jwks',
      { jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } },
      'invalid_client_metadata',
    ],
    ['a private key in jwks', { jwks: { keys: [privateJwk] } }, 'invalid_client_metadata'],
    [
      'an unreadable key in jwks',
      { jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }] } },
      'invalid_client_metadata',
    ],
    ['the implicit grant', { grant_types: ['implicit'] }, 'invalid_client_metadata'],
    [
      'client_credentials',
      { grant_types: ['authorization_code', 'client_credentials'] },
      'invalid_client_metadata',
    ],
    ['refresh without code', { grant_types: ['refresh_token'] }, 'invalid_client_metadata'],
    ['response_type token', { response_types: ['token'] }, 'invalid_client_metadata'],
    ['an unknown scope', { scope: 'fakture:read bridge:write' }, 'invalid_client_metadata'],
    ['a malformed scope', { scope: 'fakture:read "x"' }, 'invalid_client_metadata'],
    ['a non-string client_name', { client_name: { en: 'x' } }, 'invalid_client_metadata'],
    ['an overlong client_name', { client_name: 'x'.repeat(201) }, 'invalid_client_metadata'],
    ['an http logo_uri', { logo_uri: 'http://a.example/logo.png' }, 'invalid_client_metadata'],
    ['contacts not strings', { contacts: [1, 2] }, 'invalid_client_metadata'],
  ])('refuses %s', async (_name, fields, error) => {
    const res = await register({ redirect_uris: ['https://a.example/cb'], ...fields });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
  });

  // A name holding U+202E runs into the consent page's "not verified" sentence and turns it around; a line
  // separator breaks the page's line, a format character hides text. Each class is refused (RFC 7591 §3.2.2).
  test.each(HIDDEN_FORMATTING)(
    'bidi spoofing: a client_name holding %s is refused',
    async (_name, code, char) => {
      const res = await register({
        client_name: `Acme${char} Agent`,
        redirect_uris: ['https://a.example/cb'],
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid_client_metadata',
        error_description: `client_name must not hold ${code}: a character that reorders, breaks or hides the text around it.`,
      });
    },
  );

  test.each([
    ['software_id', { software_id: 'acme‮agent' }],
    ['software_version', { software_version: '1.0 ' }],
    ['client_uri', { client_uri: 'https://acme.example/⁧' }],
    ['logo_uri', { logo_uri: 'https://acme.example/‏logo.png' }],
    ['contacts', { contacts: ['ops@acme.example', 'evil‮@acme.example'] }],
  ])('bidi spoofing: %s is checked like client_name', async (field, fields) => {
    const res = await register({ client_name: 'Acme', redirect_uris: ['https://a.example/cb'], ...fields });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
    expect(res.body.error_description).toMatch(new RegExp(`^${field} must not hold U\+`));
  });

  test.each(ORDINARY_NAMES)('a client_name with %s registers as it is', async (_name, clientName) => {
    const res = await register({ client_name: clientName, redirect_uris: ['https://a.example/cb'] });
    expect(res.status).toBe(201);
    expect(res.body.client_name).toBe(clientName);
  });

  test('a private_key_jwt client registers its public keys and gets no secret', async () => {
    const res = await register({
      redirect_uris: ['https://a.example/cb'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [publicJwk] },
    });
    expect(res.status).toBe(201);
    expect(res.body.client_secret).toBeUndefined();
    expect(res.body).toMatchObject({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [publicJwk] },
    });
    const byUri = await register({
      redirect_uris: ['https://a.example/cb'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://a.example/jwks.json',
    });
    expect(byUri.status).toBe(201);
    expect(byUri.body).toMatchObject({ jwks_uri: 'https://a.example/jwks.json' });
  });

  test('a body that is not valid JSON is invalid_client_metadata (RFC 7591 §3.2.2)', async () => {
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .set('Content-Type', 'application/json')
      .send('{"redirect_uris": [');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_client_metadata', error_description: expect.any(String) });
  });

  test.each([
    ['a JSON array', '[1,2]', 'application/json', 400],
    ['malformed JSON', '{"redirect_uris": [', 'application/json', 400],
    ['a form body', 'redirect_uris=https://a.example/cb', 'application/x-www-form-urlencoded', 400],
    [
      'a body over 16 KiB',
      JSON.stringify({ redirect_uris: ['https://a.example/cb'], pad: 'x'.repeat(20_000) }),
      'application/json',
      413,
    ],
  ])('answers %s with a clear 4xx, never a 5xx', async (_name, body, type, status) => {
    const res = await request(server.app).post('/v1/oauth/register').set('Content-Type', type).send(body);
    expect(res.status).toBe(status);
    expect(res.body.error).toMatch(/^invalid_(request|client_metadata|redirect_uri)$/);
  });

  test('a registration with no scope gets the whole catalogue; one with a scope keeps it', async () => {
    const all = await register({ redirect_uris: ['https://a.example/cb'] });
    expect(all.body.scope.split(' ')).toHaveLength(15);
    const some = await register({
      redirect_uris: ['https://a.example/cb'],
      scope: 'clients:read clients:read',
    });
    expect(some.body.scope).toBe('clients:read');
  });

  test.each([[''], ['  ']])(
    'a registration with scope %j (MCP Inspector, Gemini CLI when nothing named one) gets the whole catalogue',
    async (scope) => {
      const res = await register({ redirect_uris: ['https://a.example/cb'], scope });
      expect(res.status).toBe(201);
      expect(res.body.scope.split(' ')).toHaveLength(15);
    },
  );
});
