// The jwt-bearer grant with an ID-JAG (RFC 7523 §2.1; draft-ietf-oauth-identity-assertion-authz-grant §4.4; MCP's
// Enterprise-Managed Authorization extension, SEP-990): ID-JAGs minted by a real IdP whose metadata and JWKS are served
// over https on loopback; the success path end to end, and one refusal per rule, named after the attack it stops.
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import type { OAuthEvent } from '../../lib/events';
import { JWT_BEARER_GRANT } from '../../lib/id-jag/options';
import type { OAuthRouterOptions } from '../../lib/options';
import { createMemoryStore } from '../../lib/store/memory';
import { hashSecret } from '../../lib/crypto/secrets';
import { clientRecord } from '../../lib/testing/fixtures';
import { createFakeClock } from '../helpers/clock';
import {
  idpFetchSettings,
  startEnterpriseIdp,
  strayKey,
  type EnterpriseIdp,
} from '../helpers/enterprise-idp';
import {
  createTestServer,
  ISSUER,
  mountTestApp,
  RESOURCE,
  USER,
  type TestServer,
} from '../helpers/oauth-app';
import { stallTest } from '../helpers/edit-loop';

let idp: EnterpriseIdp;
beforeAll(async () => {
  idp = await startEnterpriseIdp();
});
afterAll(() => idp.stop());

let server: TestServer;
let events: OAuthEvent[];
const options = (extra: Partial<OAuthRouterOptions> = {}): Partial<OAuthRouterOptions> => ({
  onEvent: (event) => void events.push(event),
  clientMetadataDocuments: idpFetchSettings(),
  enterpriseIdps: {
    issuers: [
      idp.issuer,
      `${idp.issuer}/broken`,
      `${idp.issuer}/stalled`,
      `${idp.issuer}/oidc`,
      `${idp.issuer}/mixup`,
    ],
    findUser: (claims) => (claims.email === USER.email ? { id: USER.id, email: USER.email } : null),
  },
  ...extra,
});
beforeEach(() => {
  events = [];
  server = createTestServer(options());
});
afterEach(() => server.close());

const enterpriseClient = (
  grantTypes: Parameters<typeof server.oauth.registerOperatorClient>[0]['grantTypes'] = [JWT_BEARER_GRANT],
) =>
  server.oauth.registerOperatorClient({
    name: 'Chat for Work',
    grantTypes,
    scope: ['fakture:read', 'company:read'],
  });

/** Valid claims for `clientId` at the server's clock; each test spoils one. */
const claims = (clientId: string, overrides: Record<string, unknown> = {}) => {
  const now = Math.floor(server.clock.now() / 1000);
  return {
    sub: 'U019488227',
    email: USER.email,
    email_verified: true,
    aud: ISSUER,
    client_id: clientId,
    resource: RESOURCE,
    scope: 'fakture:read',
    iat: now,
    exp: now + 300,
    ...overrides,
  };
};

const exchange = (
  client: { clientId: string; clientSecret?: string },
  assertion: string,
  body: Record<string, string> = {},
  app = server.app,
) =>
  request(app)
    .post('/v1/oauth/token')
    .type('form')
    .auth(client.clientId, client.clientSecret ?? '')
    .send({ grant_type: JWT_BEARER_GRANT, assertion, ...body });

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

test('an operator client exchanges its user’s ID-JAG for an access token for that user (extension §5, draft §4.4)', async () => {
  const client = await enterpriseClient();
  const res = await exchange(client, idp.mint(claims(client.clientId)));
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  // Draft §4.4.3: no refresh token; the client presents a new ID-JAG.
  expect(res.body).toEqual({
    access_token: expect.any(String),
    token_type: 'Bearer',
    expires_in: 3600,
    scope: 'fakture:read',
  });
  expect(claimsOf(res.body.access_token)).toMatchObject({
    sub: USER.id,
    client_id: client.clientId,
    aud: RESOURCE,
  });
  const call = await request(server.app).post('/mcp').set('Authorization', `Bearer ${res.body.access_token}`);
  expect(call.body.auth).toMatchObject({ actor: 'user', userId: USER.id, clientId: client.clientId });
  expect(events.filter((event) => event.type === 'token.issued')).toEqual([
    expect.objectContaining({
      clientId: client.clientId,
      userId: USER.id,
      grantType: JWT_BEARER_GRANT,
      scopes: ['fakture:read'],
    }),
  ]);
  // A grant per token: revoking it ends the token at the bearer check.
  expect(await server.oauth.revokeGrant(claimsOf(res.body.access_token).grant_id)).toBe(true);
  expect(
    (await request(server.app).post('/mcp').set('Authorization', `Bearer ${res.body.access_token}`)).status,
  ).toBe(401);
});

test('metadata (extension §6, draft §7): the grant type and the id-jag profile only while IdPs are configured', async () => {
  const meta = (await request(server.app).get('/.well-known/oauth-authorization-server')).body;
  expect(meta.grant_types_supported).toContain(JWT_BEARER_GRANT);
  expect(meta.authorization_grant_profiles_supported).toEqual(['urn:ietf:params:oauth:grant-profile:id-jag']);
  const plain = createTestServer();
  try {
    const bare = (await request(plain.app).get('/.well-known/oauth-authorization-server')).body;
    expect(bare.grant_types_supported).not.toContain(JWT_BEARER_GRANT);
    expect(bare).not.toHaveProperty('authorization_grant_profiles_supported');
  } finally {
    plain.close();
  }
});

test('the client may narrow the scope (extension §7.2.1: the intersection), and pick one resource the ID-JAG grants', async () => {
  const client = await enterpriseClient();
  const res = await exchange(
    client,
    idp.mint(claims(client.clientId, { scope: 'fakture:read company:read' })),
    {
      scope: 'company:read',
      resource: `${RESOURCE}/`,
    },
  );
  expect(res.body.scope).toBe('company:read');
  expect(claimsOf(res.body.access_token).aud).toBe(RESOURCE);
});

test('an ID-JAG signed with a key the IdP has just rotated in is accepted after one refetch of its JWKS', async () => {
  const client = await enterpriseClient();
  expect((await exchange(client, idp.mint(claims(client.clientId)))).status).toBe(200);
  idp.rotate();
  server.clock.advance(11_000);
  const before = idp.server.hits(idp.jwksPath);
  expect((await exchange(client, idp.mint(claims(client.clientId)))).status).toBe(200);
  expect(idp.server.hits(idp.jwksPath)).toBe(before + 1);
});

test('an IdP that publishes its metadata only at the OpenID location is found there (OpenID Connect Discovery §4)', async () => {
  idp.server.json('/oidc/.well-known/openid-configuration', {
    issuer: `${idp.issuer}/oidc`,
    jwks_uri: idp.server.url(idp.jwksPath, 'localhost'),
  });
  const client = await enterpriseClient();
  const res = await exchange(client, idp.mint(claims(client.clientId, { iss: `${idp.issuer}/oidc` })));
  expect(res.status).toBe(200);
});

describe('refusals: each rule, named after the attack it stops', () => {
  const refused = async (res: request.Response, error = 'invalid_grant') => {
    expect(res.status).toBe(error === 'invalid_client' ? 401 : 400);
    expect(res.body.error).toBe(error);
    // The refusal is the request's last event: no token was issued on the way.
    expect(events.at(-1)).toMatchObject({
      type: 'token.refused',
      reason: error,
      grantType: JWT_BEARER_GRANT,
    });
  };

  test('an ID token or other JWT of the IdP passed off as a grant: typ must be oauth-id-jag+jwt (draft §4.4.1, RFC 8725 §3.11)', async () => {
    const client = await enterpriseClient();
    await refused(await exchange(client, idp.mint(claims(client.clientId), { header: { typ: 'JWT' } })));
  });

  test('a forged grant signed with HMAC (the public key as a secret) or with alg none (extension §7.4.1, RFC 8725 §3.1)', async () => {
    const client = await enterpriseClient();
    const hmac = jwt.sign(
      { iss: idp.issuer, jti: randomUUID(), ...claims(client.clientId) },
      'a shared secret',
      {
        algorithm: 'HS256',
        header: { alg: 'HS256', typ: 'oauth-id-jag+jwt', kid: 'idp-1' },
      },
    );
    // Refused for its algorithm, before any key is tried: the key-type pinning and jsonwebtoken are further walls.
    const byHmac = await exchange(client, hmac);
    await refused(byHmac);
    expect(byHmac.body.error_description).toMatch(/signed with HS256/);
    const none = `${b64({ alg: 'none', typ: 'oauth-id-jag+jwt' })}.${b64({ iss: idp.issuer, jti: randomUUID(), ...claims(client.clientId) })}.`;
    const unsigned = await exchange(client, none);
    await refused(unsigned);
    expect(unsigned.body.error_description).toMatch(/signed with none/);
  });

  test('a grant signed with a key the IdP never published: refused after at most one refetch per interval (extension §7.4.1)', async () => {
    const client = await enterpriseClient();
    expect((await exchange(client, idp.mint(claims(client.clientId)))).status).toBe(200);
    server.clock.advance(11_000);
    const before = idp.server.hits(idp.jwksPath);
    const forged = () => idp.mint(claims(client.clientId), { key: strayKey('stray') });
    await refused(await exchange(client, forged()));
    await refused(await exchange(client, forged()));
    expect(idp.server.hits(idp.jwksPath)).toBe(before + 1);
  });

  test('a grant from an issuer nobody trusts, signed with its own published keys: refused before anything is fetched', async () => {
    const client = await enterpriseClient();
    const before = idp.server.hits('/.well-known/oauth-authorization-server/evil');
    await refused(await exchange(client, idp.mint(claims(client.clientId, { iss: `${idp.issuer}/evil` }))));
    expect(idp.server.hits('/.well-known/oauth-authorization-server/evil')).toBe(before);
  });

  test.each([
    [
      'a grant meant for another authorization server (aud, draft §4.4.1)',
      { aud: 'https://other-as.example' },
    ],
    [
      'audience injection: several audiences, ours among them (draft §4.4.1)',
      { aud: [ISSUER, 'https://other-as.example'] },
    ],
    ['a grant issued for another client_id (draft §4.4.1, client continuity)', { client_id: 'someone-else' }],
    ['an expired grant (RFC 7523 §3 item 4)', { iat: 'now-200', exp: 'now-60' }],
    ['a grant dated in the future (RFC 7519 §4.1.6; extension §7.4.2)', { iat: 'now+120', exp: 'now+200' }],
    ['a long-lived grant kept for later (extension §7.4.2: short-lived)', { exp: 'now+3600' }],
    [
      'a grant for another MCP server (resource, extension §7.6.2)',
      { resource: 'https://other.example/mcp' },
    ],
    [
      'a grant wider than the client may have (scope, extension §7.6.2)',
      { scope: 'fakture:read clients:write' },
    ],
    ['a grant for a user this service does not know (findUser null)', { email: 'stranger@example.com' }],
    ['a grant with no jti (draft §3.1)', { jti: undefined }],
    // The jti is kept in the store, which may refuse it (PostgreSQL refuses NUL): refused first, never a 500.
    ['a grant whose jti holds a NUL', { jti: 'a\u0000b' }],
  ])('%s', async (_name, spoilt) => {
    const client = await enterpriseClient();
    const now = Math.floor(server.clock.now() / 1000);
    const resolved = Object.fromEntries(
      Object.entries(spoilt).map(([name, value]) => [
        name,
        typeof value === 'string' && value.startsWith('now') ? now + Number(value.slice(3)) : value,
      ]),
    );
    await refused(await exchange(client, idp.mint(claims(client.clientId, resolved))));
  });

  test('another client’s ID-JAG presented by a client of its own: refused, and left usable by its rightful client', async () => {
    const victim = await enterpriseClient();
    const thief = await enterpriseClient();
    const stolen = idp.mint(claims(victim.clientId));
    await refused(await exchange(thief, stolen));
    expect((await exchange(victim, stolen)).status).toBe(200);
  });

  test('a replayed ID-JAG (extension §7.4.2: jti single use), on this router and on another one over the same store', async () => {
    const client = await enterpriseClient();
    const assertion = idp.mint(claims(client.clientId));
    expect((await exchange(client, assertion)).status).toBe(200);
    await refused(await exchange(client, assertion));
    const other = mountTestApp(server.store, server.clock, options());
    const res = await exchange(client, assertion, {}, other.app);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('an exp with a fraction (RFC 7519 §2: a NumericDate may have one) is accepted, and the grant is single-use', async () => {
    const client = await enterpriseClient();
    const exp = Math.floor(server.clock.now() / 1000) + 60.5;
    const assertion = idp.mint(claims(client.clientId, { exp }));
    expect((await exchange(client, assertion)).status).toBe(200);
    await refused(await exchange(client, assertion));
  });

  test('a wider scope asked for than the ID-JAG grants (RFC 6749 §5.2): invalid_scope', async () => {
    const client = await enterpriseClient();
    await refused(
      await exchange(client, idp.mint(claims(client.clientId)), { scope: 'fakture:read company:read' }),
      'invalid_scope',
    );
  });

  test('a client the operator did not give the grant: unauthorized_client', async () => {
    const machine = await enterpriseClient(['client_credentials']);
    await refused(await exchange(machine, idp.mint(claims(machine.clientId))), 'unauthorized_client');
  });

  test('a public client, even with the grant type in its record (draft §8.1: confidential clients only)', async () => {
    const record = clientRecord({
      grantTypes: [JWT_BEARER_GRANT],
      tokenEndpointAuthMethod: 'none',
      scope: 'fakture:read',
    });
    await server.store.registerClient(record);
    const res = await request(server.app)
      .post('/v1/oauth/token')
      .type('form')
      .send({
        grant_type: JWT_BEARER_GRANT,
        client_id: record.clientId,
        assertion: idp.mint(claims(record.clientId)),
      });
    await refused(res, 'unauthorized_client');
    expect(res.body.error_description).toBe('A public client cannot use the jwt-bearer grant.');
  });

  test('dynamic registration asking for the grant is refused (RFC 7591 §3.2.2): strangers never get it', async () => {
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .send({
        redirect_uris: ['https://a.example/cb'],
        grant_types: ['authorization_code', JWT_BEARER_GRANT],
      });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });

  test('a user whose id is the client’s id: its token would read as the machine’s own', async () => {
    const client = await enterpriseClient();
    const router = mountTestApp(
      server.store,
      server.clock,
      options({
        enterpriseIdps: { issuers: [idp.issuer], findUser: () => ({ id: client.clientId }) },
      }),
    );
    expect((await exchange(client, idp.mint(claims(client.clientId)), {}, router.app)).body.error).toBe(
      'invalid_grant',
    );
  });

  test('an IdP whose metadata cannot be fetched: a clear invalid_grant, never a 500; the story in idp.fetch_failed', async () => {
    const client = await enterpriseClient();
    const res = await exchange(client, idp.mint(claims(client.clientId, { iss: `${idp.issuer}/broken` })));
    await refused(res);
    expect(res.body.error_description).toMatch(/keys of the issuer .* could not be fetched/);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'idp.fetch_failed', reason: 'http_status' }),
    );
  });

  test('metadata at the IdP naming another issuer (RFC 8414 §3.3: mix-up): its keys are not used', async () => {
    idp.server.json('/.well-known/oauth-authorization-server/mixup', {
      issuer: 'https://evil.test',
      jwks_uri: idp.server.url(idp.jwksPath, 'localhost'),
    });
    const client = await enterpriseClient();
    await refused(await exchange(client, idp.mint(claims(client.clientId, { iss: `${idp.issuer}/mixup` }))));
  });

  stallTest('a stalled IdP holds the request no longer than the fetch deadline', async () => {
    idp.server.serve('/.well-known/oauth-authorization-server/stalled', { delayMs: 20_000, body: {} });
    const client = await enterpriseClient();
    const started = Date.now();
    await refused(
      await exchange(client, idp.mint(claims(client.clientId, { iss: `${idp.issuer}/stalled` }))),
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(events).toContainEqual(expect.objectContaining({ type: 'idp.fetch_failed', reason: 'timeout' }));
  });

  test('a store that keeps no assertion ids turns the grant off (a replayable ID-JAG is no proof)', async () => {
    const warnings: string[] = [];
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation((message: string) => void warnings.push(message));
    try {
      const clock = createFakeClock(Date.now());
      const { app, oauth } = mountTestApp(
        createMemoryStore({ assertionIds: false, now: clock.now }),
        clock,
        options(),
      );
      expect(warnings.join('\n')).toMatch(/jwt-bearer grant \(enterpriseIdps\) is off/);
      expect(
        (await request(app).get('/.well-known/oauth-authorization-server')).body.grant_types_supported,
      ).not.toContain(JWT_BEARER_GRANT);
      const client = await oauth.registerOperatorClient({ name: 'Chat', grantTypes: [JWT_BEARER_GRANT] });
      const res = await exchange(client, idp.mint(claims(client.clientId)), {}, app);
      expect(res.body.error).toBe('unsupported_grant_type');
    } finally {
      warn.mockRestore();
    }
  });
});

/**
 * Which resource and scope the token gets (the extension §4.3, §7.2.1 and §7.6.2; RFC 8707 §2; RFC 6749 §3.3), on a
 * server with two resources: each row an ID-JAG's claims and the request's parameters, and what the client is told.
 */
describe('the resource and the scope of the token, rule by rule', () => {
  const OTHER = `${ISSUER}/reports`;
  beforeEach(() => {
    server.close();
    server = createTestServer(options({ resources: [RESOURCE, OTHER] }));
  });

  type Outcome = { aud: string; scope: string } | { error: string; description: RegExp };
  test.each<[string, Record<string, unknown>, Record<string, string>, Outcome]>([
    [
      'no resource claim, no parameter: the default resource',
      { resource: undefined },
      {},
      { aud: RESOURCE, scope: 'fakture:read' },
    ],
    [
      'no resource claim, a parameter picks a served one',
      { resource: undefined },
      { resource: OTHER },
      { aud: OTHER, scope: 'fakture:read' },
    ],
    [
      'no resource claim, a parameter naming a resource not served',
      { resource: undefined },
      { resource: 'https://other.example/mcp' },
      { error: 'invalid_target', description: /./ },
    ],
    [
      'a claim with trailing slashes names the same resource',
      { resource: `${OTHER}//` },
      {},
      { aud: OTHER, scope: 'fakture:read' },
    ],
    [
      'a claim of two served resources: the first',
      { resource: [OTHER, RESOURCE] },
      {},
      { aud: OTHER, scope: 'fakture:read' },
    ],
    [
      'a claim of two, the parameter picks the second',
      { resource: [RESOURCE, OTHER] },
      { resource: OTHER },
      { aud: OTHER, scope: 'fakture:read' },
    ],
    [
      'a parameter naming a served resource the ID-JAG does not grant',
      { resource: [RESOURCE] },
      { resource: OTHER },
      { error: 'invalid_target', description: /^The resource is not one the ID-JAG grants\.$/ },
    ],
    [
      'a claim of ours and another server’s (all must be ours)',
      { resource: [RESOURCE, 'https://other.example/mcp'] },
      {},
      { error: 'invalid_grant', description: /^The ID-JAG is for a resource this server does not serve\.$/ },
    ],
    [
      'an empty resource claim',
      { resource: [] },
      {},
      { error: 'invalid_grant', description: /^The ID-JAG is for a resource this server does not serve\.$/ },
    ],
    [
      'a resource claim that is no string',
      { resource: [42] },
      {},
      { error: 'invalid_grant', description: /^The ID-JAG is for a resource this server does not serve\.$/ },
    ],
    [
      'no scope claim: the client’s whole scope',
      { scope: undefined },
      {},
      { aud: RESOURCE, scope: 'fakture:read company:read' },
    ],
    [
      'a scope claim with offline_access and doubled spaces: both dropped',
      { scope: 'fakture:read  offline_access company:read' },
      {},
      { aud: RESOURCE, scope: 'fakture:read company:read' },
    ],
    [
      'a scope claim that is no string',
      { scope: ['fakture:read'] },
      {},
      { error: 'invalid_grant', description: /^The ID-JAG scope claim must be a string\.$/ },
    ],
    [
      'a scope claim naming a scope the client may not have, quoted to 64 characters',
      { scope: `fakture:read ${'x'.repeat(100)}` },
      {},
      {
        error: 'invalid_grant',
        description: new RegExp(
          `^The ID-JAG grants the scope "${'x'.repeat(64)}", which this client may not have\\.$`,
        ),
      },
    ],
    [
      'a scope claim of offline_access alone: no scope here',
      { scope: 'offline_access' },
      {},
      { error: 'invalid_scope', description: /^The ID-JAG grants this client no scope here\.$/ },
    ],
  ])('%s', async (_name, overrides, params, outcome) => {
    const client = await enterpriseClient();
    const res = await exchange(client, idp.mint(claims(client.clientId, overrides)), params);
    if ('error' in outcome) {
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(outcome.error);
      expect(res.body.error_description).toMatch(outcome.description);
    } else {
      expect(res.status).toBe(200);
      expect(claimsOf(res.body.access_token)).toMatchObject({ aud: outcome.aud });
      expect(res.body.scope).toBe(outcome.scope);
    }
  });

  test('a scope the client holds but the server no longer offers is not granted', async () => {
    const secret = 'a-secret-of-the-operator-client';
    const record = clientRecord({
      grantTypes: [JWT_BEARER_GRANT],
      clientSecretHash: hashSecret(secret),
      scope: 'fakture:read retired:scope',
    });
    await server.store.registerClient(record);
    const res = await exchange(
      { clientId: record.clientId, clientSecret: secret },
      idp.mint(claims(record.clientId, { scope: undefined })),
    );
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('fakture:read');
  });
});
