// Discovery: RFC 8414 authorization-server metadata, RFC 9728 protected-resource metadata, and the JWKS.
import request from 'supertest';
import { createTestServer, ISSUER, RESOURCE, type TestServer } from '../helpers/oauth-app';

describe('discovery', () => {
  let server: TestServer;
  beforeAll(() => {
    server = createTestServer({ serviceDocumentation: 'https://docs.example/mcp' });
  });
  afterAll(() => server.close());

  test('authorization-server metadata lists every endpoint and capability (RFC 8414 §2)', async () => {
    const res = await request(server.app).get('/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.body).toEqual({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/v1/oauth/authorize`,
      token_endpoint: `${ISSUER}/v1/oauth/token`,
      registration_endpoint: `${ISSUER}/v1/oauth/register`,
      revocation_endpoint: `${ISSUER}/v1/oauth/revoke`,
      introspection_endpoint: `${ISSUER}/v1/oauth/introspect`,
      jwks_uri: `${ISSUER}/v1/oauth/jwks`,
      scopes_supported: expect.arrayContaining(['fakture:read', 'bridge:read', 'dokument:write']),
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
        'none',
      ],
      token_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256'],
      revocation_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
        'none',
      ],
      revocation_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256'],
      introspection_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ],
      introspection_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256'],
      authorization_response_iss_parameter_supported: true,
      dpop_signing_alg_values_supported: ['ES256', 'RS256', 'PS256'],
      client_id_metadata_document_supported: true,
      service_documentation: 'https://docs.example/mcp',
    });
    expect(res.body.scopes_supported).toHaveLength(15);
    expect(res.body.scopes_supported).not.toContain('bridge:write');
  });

  test('a CORS preflight is answered for browser-based clients', async () => {
    const res = await request(server.app)
      .options('/.well-known/oauth-authorization-server')
      .set('Origin', 'https://inspector.example')
      .set('Access-Control-Request-Method', 'GET');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toContain('GET');
  });

  test('protected-resource metadata names the resource and the issuer byte for byte (RFC 9728 §3)', async () => {
    const res = await request(server.app).get('/.well-known/oauth-protected-resource/mcp');
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.body).toMatchObject({
      resource: RESOURCE,
      authorization_servers: [ISSUER],
      bearer_methods_supported: ['header'],
      resource_documentation: 'https://docs.example/mcp',
      dpop_signing_alg_values_supported: ['ES256', 'RS256', 'PS256'],
      dpop_bound_access_tokens_required: false,
    });
    expect(res.body.scopes_supported).toHaveLength(15);
  });

  test('the JWKS serves the public signing keys only', async () => {
    const res = await request(server.app).get('/v1/oauth/jwks');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(server.signer.jwks())));
    expect(res.body.keys[0]).not.toHaveProperty('d');
  });

  test.each([
    ['POST', '/.well-known/oauth-authorization-server', 'GET, OPTIONS'],
    ['DELETE', '/.well-known/oauth-protected-resource/mcp', 'GET, OPTIONS'],
    ['PUT', '/v1/oauth/jwks', 'GET, OPTIONS'],
    ['GET', '/v1/oauth/register', 'POST, OPTIONS'],
    ['GET', '/v1/oauth/token', 'POST, OPTIONS'],
    ['GET', '/v1/oauth/revoke', 'POST, OPTIONS'],
    ['POST', '/v1/oauth/authorize', 'GET, OPTIONS'],
    ['GET', '/v1/oauth/authorize/decision', 'POST, OPTIONS'],
    ['GET', '/v1/oauth/authorize/sign-in', 'POST, OPTIONS'],
  ])('%s %s is 405 with Allow: %s', async (method, path, allow) => {
    const res = await request(server.app)[method.toLowerCase() as 'get'](path);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.body.error).toBe('method_not_allowed');
  });
});

describe('an issuer with a path (the router mounted under a prefix)', () => {
  let server: TestServer;
  const issuer = 'http://127.0.0.1:4000/tenant-a';
  beforeAll(() => {
    server = createTestServer({ issuer });
    // As README shows: the well-known documents at the root, everything else under the prefix.
    server.app.use(server.oauth.wellKnown);
    server.app.use('/tenant-a', server.oauth);
  });
  afterAll(() => server.close());

  test.each([
    [
      'the RFC 8414 location (well-known before the path)',
      '/.well-known/oauth-authorization-server/tenant-a',
    ],
    ['the appended location some clients try', '/tenant-a/.well-known/oauth-authorization-server'],
  ])('metadata is found at %s', async (_name, path) => {
    const res = await request(server.app).get(path);
    expect(res.status).toBe(200);
    expect(res.body.issuer).toBe(issuer);
    expect(res.body.token_endpoint).toBe(`${issuer}/v1/oauth/token`);
  });

  test('protected-resource metadata sits at the root with the resource path appended', async () => {
    const res = await request(server.app).get('/.well-known/oauth-protected-resource/tenant-a/mcp');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ resource: `${issuer}/mcp`, authorization_servers: [issuer] });
  });

  test('the endpoints answer under the prefix', async () => {
    const res = await request(server.app)
      .post('/tenant-a/v1/oauth/register')
      .send({ redirect_uris: ['https://client.example/cb'] });
    expect(res.status).toBe(201);
  });
});
