// The /mcp endpoint as the contract states it: 401 with resource_metadata, RFC 9728 metadata, DNS rebinding
// protection, CORS for browser-based clients, and clear errors for what is not MCP.
import express from 'express';
import request from 'supertest';
import { readConfig } from '../../example-app/config';
import { checkHost } from '../../example-app/http/guards';
import { checkOrigin } from '../../example-app/mcp/endpoint';
import { createUser } from '../../example-app/users';
import { ALL_SCOPES, startExampleApp, type RunningExampleApp } from '../helpers/example-app';

let app: RunningExampleApp;
beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(() => app.stop());

const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const mcpPost = (token?: string) => {
  const req = request(app.baseUrl).post('/mcp').set('Accept', 'application/json, text/event-stream');
  return token ? req.set('Authorization', `Bearer ${token}`) : req;
};

test('without a token: 401 with WWW-Authenticate naming the resource metadata (contract)', async () => {
  const res = await mcpPost().send(listTools);
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toMatch(
    new RegExp(`^Bearer .*resource_metadata="${app.baseUrl}/\\.well-known/oauth-protected-resource/mcp"`),
  );
  expect(res.headers['access-control-expose-headers']).toMatch(/WWW-Authenticate/);
  expect(res.headers['access-control-expose-headers']).toMatch(/Mcp-Session-Id/);
});

// A client may probe the MCP URL with HEAD or GET before it posts anything, to read the challenge of the 401: it gets
// the same answer as a POST (RFC 9728 §5.1), whatever the method.
test.each(['head', 'get'] as const)(
  '%s without a token: the same 401 and challenge as a POST',
  async (method) => {
    const res = await request(app.baseUrl)[method]('/mcp');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer .*resource_metadata="[^"]+\/mcp"/);
  },
);

test('the protected-resource metadata names {base}/mcp and the issuer (contract)', async () => {
  const res = await request(app.baseUrl).get('/.well-known/oauth-protected-resource/mcp');
  expect(res.body).toMatchObject({ resource: `${app.baseUrl}/mcp`, authorization_servers: [app.baseUrl] });
  const metadata = await request(app.baseUrl).get('/.well-known/oauth-authorization-server');
  expect(metadata.body).toMatchObject({
    issuer: app.baseUrl,
    registration_endpoint: `${app.baseUrl}/v1/oauth/register`,
    revocation_endpoint: `${app.baseUrl}/v1/oauth/revoke`,
    authorization_endpoint: `${app.baseUrl}/v1/oauth/authorize`,
    token_endpoint: `${app.baseUrl}/v1/oauth/token`,
    jwks_uri: `${app.baseUrl}/v1/oauth/jwks`,
    client_id_metadata_document_supported: true,
  });
  expect(metadata.body.token_endpoint_auth_methods_supported).toEqual(
    expect.arrayContaining(['none', 'private_key_jwt']),
  );
});

test('DNS rebinding: a request whose Host is not this server is refused, token or not', async () => {
  const token = await app.mintToken(ALL_SCOPES);
  const res = await mcpPost(token).set('Host', 'attacker.example').send(listTools);
  expect(res.status).toBe(403);
  expect(res.headers['www-authenticate']).toMatch(
    /^Bearer resource_metadata="[^"]+", error="invalid_request"/,
  );
  expect((await mcpPost(token).send(listTools)).status).toBe(200);
});

test('DNS rebinding: a token request the fast path takes (a plain form) is refused too, with its request id', async () => {
  const form = 'grant_type=refresh_token&client_id=nobody&refresh_token=x';
  const post = (host?: string) => {
    const call = request(app.baseUrl)
      .post('/v1/oauth/token')
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .set('X-Request-Id', 'trace-7');
    return (host ? call.set('Host', host) : call).send(form);
  };
  const refused = await post('rebound.attacker.example');
  expect(refused.status).toBe(403);
  expect(refused.body).toEqual({
    error: 'invalid_request',
    error_description: expect.stringMatching(/host/),
  });
  expect(refused.headers['x-request-id']).toBe('trace-7');
  // The same request with this server's name reaches the endpoint: the client is unknown.
  const answered = await post();
  expect(answered.status).toBe(401);
  expect(answered.body.error).toBe('invalid_client');
  expect(answered.headers['x-request-id']).toBe('trace-7');
});

test.each([
  ['GET', '/.well-known/oauth-authorization-server'],
  ['POST', '/v1/oauth/token'],
  ['POST', '/v1/oauth/register'],
  ['GET', '/v1/oauth/authorize'],
  ['GET', '/account/sign-in'],
  ['POST', '/account/connected-apps/revoke'],
])('DNS rebinding: %s %s with a foreign Host is refused like /mcp', async (method, path) => {
  const res = await request(app.baseUrl)
    [method === 'GET' ? 'get' : 'post'](path)
    .set('Host', 'rebound.attacker.example:80');
  expect(res.status).toBe(403);
  expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/host/) });
  // This server's own names still work, with or without a port.
  const ok = await request(app.baseUrl)
    .get('/.well-known/oauth-authorization-server')
    .set('Host', 'localhost:1234');
  expect(ok.status).toBe(200);
});

test('a CORS preflight is answered for browser-based MCP clients', async () => {
  const res = await request(app.baseUrl)
    .options('/mcp')
    .set('Origin', 'http://localhost:6274')
    .set('Access-Control-Request-Method', 'POST')
    .set('Access-Control-Request-Headers', 'authorization, content-type, mcp-protocol-version');
  expect(res.status).toBe(204);
  expect(res.headers['access-control-allow-origin']).toBe('*');
  expect(res.headers['access-control-allow-headers']).toMatch(/Authorization/);
  expect(res.headers['access-control-allow-headers']).toMatch(/MCP-Protocol-Version/);
});

test.each(['get', 'delete'] as const)('%s /mcp is 405: the server is stateless', async (method) => {
  const token = await app.mintToken(ALL_SCOPES);
  const res = await request(app.baseUrl)[method]('/mcp').set('Authorization', `Bearer ${token}`);
  expect(res.status).toBe(405);
  expect(res.headers.allow).toBe('POST, OPTIONS');
});

test('malformed JSON is a 400 JSON-RPC parse error, not a 500', async () => {
  const token = await app.mintToken(ALL_SCOPES);
  const res = await mcpPost(token).set('Content-Type', 'application/json').send('{"jsonrpc": ');
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe(-32700);
});

test('a token whose user was deleted is refused', async () => {
  const ghost = await createUser(app.db, { email: 'ghost@example.com', password: 'a ghostly password' });
  const token = await app.mintToken(ALL_SCOPES, ghost);
  await app.db.run('DELETE FROM users WHERE id = ?', [Number(ghost.id)]);
  const res = await mcpPost(token).send(listTools);
  expect(res.status).toBe(401);
  // RFC 6750 §3: every refusal of the tool server says where to authorize.
  expect(res.headers['www-authenticate']).toBe(
    `Bearer resource_metadata="${app.baseUrl}/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="The user of this token no longer exists."`,
  );
});

test('a batch that hides an out-of-scope call among allowed ones is refused whole', async () => {
  const token = await app.mintToken(['clients:read']);
  const res = await mcpPost(token).send([
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_clients', arguments: {} } },
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'delete_invoice', arguments: { invoice_id: 3 } },
    },
  ]);
  expect(res.status).toBe(403);
  // The token's scope with the one the refused tool needs (delete_invoice needs fakture:write alone).
  expect(res.headers['www-authenticate']).toContain('scope="clients:read fakture:write"');
});

describe('Origin (MCP transport: a page the user visits must not drive the tool server)', () => {
  test.each([
    ['no Origin (not a browser)', undefined, 200],
    ['this server’s own origin', 'BASE', 200],
    ['another loopback origin, as BASE_URL is on loopback', 'http://localhost:6274', 200],
    ['a foreign site', 'https://evil.example', 403],
    ['an opaque origin', 'null', 403],
    ['a look-alike of loopback', 'http://127.0.0.1.evil.example', 403],
  ])('%s: %s', async (_name, origin, status) => {
    const token = await app.mintToken(ALL_SCOPES);
    const req = mcpPost(token);
    if (origin) req.set('Origin', origin === 'BASE' ? app.baseUrl : origin);
    const res = await req.send(listTools);
    expect(res.status).toBe(status);
    if (status === 403)
      expect(res.headers['www-authenticate']).toMatch(
        /^Bearer resource_metadata="[^"]+", error="invalid_request"/,
      );
  });

  test('a foreign origin is refused before the token is even looked at, preflights included', async () => {
    const res = await request(app.baseUrl)
      .options('/mcp')
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(res.status).toBe(403);
    expect((await mcpPost().set('Origin', 'https://evil.example').send(listTools)).status).toBe(403);
  });

  test.each([
    ['https://mcp.example.com', [], 'https://mcp.example.com', 200],
    ['https://mcp.example.com', [], 'http://localhost:3000', 403],
    ['https://mcp.example.com', ['https://inspector.example'], 'https://inspector.example', 200],
    ['https://mcp.example.com', ['https://inspector.example'], 'https://other.example', 403],
  ])('BASE_URL %s with ALLOWED_ORIGINS %j: Origin %s gets %i', async (base, extra, origin, status) => {
    const probe = express().use(
      checkOrigin(base, extra, `${base}/.well-known/oauth-protected-resource/mcp`),
      (_req, res) => res.sendStatus(200),
    );
    expect((await request(probe).post('/').set('Origin', origin)).status).toBe(status);
  });

  test('ALLOWED_ORIGINS and CIMD_ALLOW_LOOPBACK are read and checked from the environment', () => {
    expect(readConfig({ ALLOWED_ORIGINS: 'https://a.example, https://b.example/' }).allowedOrigins).toEqual([
      'https://a.example',
      'https://b.example',
    ]);
    expect(() => readConfig({ ALLOWED_ORIGINS: 'https://a.example/path' })).toThrow(/not an origin/);
    expect(readConfig({ CIMD_ALLOW_LOOPBACK: '1' }).cimdAllowLoopback).toBe(true);
    expect(readConfig({}).cimdAllowLoopback).toBe(false);
    expect(() => readConfig({ CIMD_ALLOW_LOOPBACK: 'yes' })).toThrow(/CIMD_ALLOW_LOOPBACK/);
  });
});

test('the Host check remembers allowed names, never a refused one, and stays right past its memory', async () => {
  const guarded = express();
  guarded.use(
    checkHost(['localhost', '127.0.0.1'], 'http://localhost/.well-known/oauth-protected-resource/mcp'),
  );
  guarded.get('/', (_req, res) => void res.send('ok'));
  const status = async (host: string) => (await request(guarded).get('/').set('Host', host)).status;
  for (let round = 0; round < 2; round += 1) {
    expect(await status('localhost:3000')).toBe(200);
    expect(await status('localhost@attacker.example')).toBe(403);
    expect(await status('attacker.example')).toBe(403);
  }
  for (let port = 1; port <= 150; port += 1) expect(await status(`127.0.0.1:${port}`)).toBe(200);
  expect(await status('127.0.0.1.attacker.example:1')).toBe(403);
});
