// The /mcp endpoint as the contract states it: 401 with resource_metadata, RFC 9728 metadata, DNS rebinding
// protection, CORS for browser-based clients, and clear errors for what is not MCP.
import request from 'supertest';
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
  });
});

test('DNS rebinding: a request whose Host is not this server is refused, token or not', async () => {
  const token = await app.mintToken(ALL_SCOPES);
  const res = await mcpPost(token).set('Host', 'attacker.example').send(listTools);
  expect(res.status).toBe(403);
  expect((await mcpPost(token).send(listTools)).status).toBe(200);
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
  expect((await mcpPost(token).send(listTools)).status).toBe(401);
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
  expect(res.headers['www-authenticate']).toContain('scope="fakture:write"');
});
