// offline_access from start to finish. The MCP authorization spec ("Refresh Tokens", 2026-07-28 revision, from
// SEP-2207) lets a client add offline_access to the scope of its authorization and token requests when the
// authorization server lists it in scopes_supported, and tells MCP servers not to list it as a resource's scope.
// This server gives refresh tokens by the client's refresh_token grant type (OAuth 2.1), so it does not list it;
// a client that sends it anyway (claude.ai does when a server lists it, OpenID-minded clients always) is served,
// and offline_access is dropped: never an unknown scope, never a permission on the consent page, never in a token.
import request from 'supertest';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  formOf,
  ISSUER,
  RESOURCE,
  registerClient,
  tokenRequest,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';

const CLAUDE_AI = {
  client_name: 'Claude',
  redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_post',
};

describe('offline_access (MCP authorization, Refresh Tokens; SEP-2207)', () => {
  let server: TestServer;
  beforeEach(() => {
    server = createTestServer();
  });
  afterEach(() => server.close());

  /** Authorizes with `scope`, exchanges the code, and returns the consent page's scopes and the tokens. */
  async function connect(client: RegisteredClient, scope: string) {
    const { code, pkce, page } = await authorizeInBrowser(server.app, client, { scope });
    expect(code).toBeDefined();
    const token = await tokenRequest(server.app, client, {
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: client.redirect_uris[0]!,
      code_verifier: pkce.verifier,
    });
    expect(token.status).toBe(200);
    return { consentScopes: formOf(page).fields.scope, consent: page, tokens: token.body };
  }

  test('the server does not list it: not in either metadata document, nor in a challenge', async () => {
    const as = await request(server.app).get('/.well-known/oauth-authorization-server');
    const prm = await request(server.app).get('/.well-known/oauth-protected-resource/mcp');
    const challenge = await request(server.app).post('/mcp');
    expect(as.body.scopes_supported).not.toContain('offline_access');
    expect(prm.body.scopes_supported).not.toContain('offline_access');
    expect(challenge.headers['www-authenticate']).not.toMatch(/offline_access/);
  });

  test('claude.ai asking for every listed scope and offline_access: consent shows tool permissions only, the token carries none of it, and a refresh token comes', async () => {
    const claude = await registerClient(server.app, CLAUDE_AI);
    const listed: string[] = (await request(server.app).get('/.well-known/oauth-authorization-server')).body
      .scopes_supported;
    const { consentScopes, consent, tokens } = await connect(claude, [...listed, 'offline_access'].join(' '));
    expect(consentScopes).toEqual(listed);
    expect(consent).not.toMatch(/offline_access/);
    expect(tokens.scope.split(' ')).toEqual(listed);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const claims = server.signer.verifyAccessToken(tokens.access_token, {
      issuer: ISSUER,
      audience: RESOURCE,
    });
    expect(claims.scope).toBe(listed.join(' '));
    const invoices = await request(server.app)
      .get('/mcp/invoices')
      .set('Authorization', `Bearer ${tokens.access_token}`);
    expect(invoices.status).toBe(200);
  });

  test('offline_access alone asks for no permission in particular: consent covers the client’s registered scope', async () => {
    const client = await registerClient(server.app, { scope: 'fakture:read clients:read' });
    const { consentScopes, tokens } = await connect(client, 'offline_access');
    expect(consentScopes).toEqual(['fakture:read', 'clients:read']);
    expect(tokens.scope).toBe('fakture:read clients:read');
  });

  test.each([
    ['beside the granted scope: the granted scope', 'fakture:read offline_access', 'fakture:read'],
    ['alone: the grant’s whole scope', 'offline_access', 'fakture:read clients:read'],
  ])('a refresh request asking offline_access %s', async (_name, scope, expected) => {
    const client = await registerClient(server.app, CLAUDE_AI);
    const { tokens } = await connect(client, 'fakture:read clients:read offline_access');
    const refreshed = await tokenRequest(server.app, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.scope).toBe(expected);
  });

  test('it never widens: a refresh asking offline_access and a scope outside the grant is invalid_scope', async () => {
    const client = await registerClient(server.app, CLAUDE_AI);
    const { tokens } = await connect(client, 'fakture:read offline_access');
    const refreshed = await tokenRequest(server.app, client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope: 'fakture:read company:write offline_access',
    });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_scope');
  });

  test('a client without the refresh_token grant gets no refresh token for asking offline_access', async () => {
    const client = await registerClient(server.app, { grant_types: ['authorization_code'] });
    const { tokens } = await connect(client, 'fakture:read offline_access');
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.scope).toBe('fakture:read');
  });

  test('it does not excuse an unknown scope beside it at the authorization endpoint', async () => {
    const client = await registerClient(server.app, { scope: 'fakture:read' });
    const res = await request(server.app).get(
      `/v1/oauth/authorize?${authorizeQuery(client, { scope: 'fakture:read clients:read offline_access' }).query}`,
    );
    expect(res.status).toBe(400);
    expect(res.text).toContain('invalid_scope');
    expect(res.text).toContain('The scope &#34;clients:read&#34; is not available to this client.');
  });

  test('a registration naming offline_access in its scope registers without it', async () => {
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .send({ redirect_uris: ['https://a.example/cb'], scope: 'fakture:read offline_access' });
    expect(res.status).toBe(201);
    expect(res.body.scope).toBe('fakture:read');
  });
});
