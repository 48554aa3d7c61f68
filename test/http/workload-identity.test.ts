// Workload Identity Federation (MCP's extension, SEP-1933, draft): a workload presents its platform's JWT as a
// jwt-bearer grant (RFC 7523 §2.1) with no client authentication. The platform is a test issuer whose metadata and key
// set are served over TLS on loopback; a trusted workload gets its operator client's token, and every other JWT gets
// invalid_grant, one case per rule, with the reason in a workload.refused event.
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import type { OAuthEvent } from '../../lib/events';
import { hashSecret } from '../../lib/crypto/secrets';
import type { OAuthRouterOptions } from '../../lib/options';
import { clientRecord } from '../../lib/testing/fixtures';
import { claimsOf, createDpopKey } from '../helpers/dpop';
import {
  idpFetchSettings,
  startEnterpriseIdp,
  strayKey,
  type EnterpriseIdp,
} from '../helpers/enterprise-idp';
import { createTestServer, ISSUER, RESOURCE, type TestServer } from '../helpers/oauth-app';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_ENDPOINT = `${ISSUER}/v1/oauth/token`;
const SUBJECT = 'system:serviceaccount:billing:exporter';

let platform: EnterpriseIdp;
let other: EnterpriseIdp;
beforeAll(async () => {
  [platform, other] = await Promise.all([startEnterpriseIdp(), startEnterpriseIdp()]);
});
afterAll(() => Promise.all([platform.stop(), other.stop()]));

let server: TestServer;
let events: OAuthEvent[];
const options = (extra: Partial<OAuthRouterOptions> = {}): Partial<OAuthRouterOptions> => ({
  onEvent: (event) => void events.push(event),
  clientMetadataDocuments: idpFetchSettings(),
  workloadIdentity: {
    // `other` is trusted too, with no rule: its workloads are refused with no_rule.
    issuers: [platform.issuer, other.issuer],
    workloads: [
      {
        issuer: platform.issuer,
        subject: SUBJECT,
        clientId: 'exporter',
        scopes: ['fakture:read', 'clients:read'],
      },
      { issuer: platform.issuer, subject: 'tenant-bound', clientId: 'exporter', claims: { tenant: 'acme' } },
      { issuer: platform.issuer, subject: 'orphan', clientId: 'nobody' },
      { issuer: platform.issuer, subject: 'browser-app', clientId: 'browser-app' },
      { issuer: platform.issuer, subject: 'public-machine', clientId: 'public-machine' },
      {
        issuer: platform.issuer,
        subject: 'overreach',
        clientId: 'exporter',
        scopes: ['fakture:read', 'products:read'],
      },
      { issuer: platform.issuer, subject: 'disjoint', clientId: 'exporter', scopes: ['products:read'] },
    ],
  },
  ...extra,
});
async function registerClients() {
  await server.store.registerClient(
    clientRecord({
      clientId: 'public-machine',
      tokenEndpointAuthMethod: 'none',
      clientSecretHash: null,
      grantTypes: ['client_credentials'],
      responseTypes: [],
      redirectUris: [],
    }),
  );
  await server.store.registerClient(
    clientRecord({
      clientId: 'exporter',
      grantTypes: ['client_credentials'],
      responseTypes: [],
      redirectUris: [],
      scope: 'fakture:read clients:read company:read',
    }),
  );
  await server.store.registerClient(clientRecord({ clientId: 'browser-app' }));
}
beforeEach(async () => {
  events = [];
  server = createTestServer(options());
  await registerClients();
});
afterEach(() => server.close());

/** A valid workload JWT at the server's clock; each test spoils one thing. */
const workloadJwt = (
  claims: Record<string, unknown> = {},
  mint: Parameters<EnterpriseIdp['mint']>[1] = {},
) => {
  const now = Math.floor(server.clock.now() / 1000);
  return platform.mint(
    { sub: SUBJECT, aud: TOKEN_ENDPOINT, iat: now, exp: now + 600, ...claims },
    { ...mint, header: { typ: 'JWT', ...mint.header } },
  );
};

const grant = (assertion: string, body: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .set(headers)
    .send({ grant_type: JWT_BEARER, assertion, ...body });

test('a trusted workload gets its client’s token, with no secret: sub and client_id the client, no refresh token', async () => {
  const res = await grant(workloadJwt());
  expect(res.body).toMatchObject({ access_token: expect.any(String) });
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toEqual({
    access_token: expect.any(String),
    token_type: 'Bearer',
    expires_in: 3600,
    scope: 'fakture:read clients:read',
  });
  expect(claimsOf(res.body.access_token)).toMatchObject({
    sub: 'exporter',
    client_id: 'exporter',
    aud: RESOURCE,
  });
  const call = await request(server.app).post('/mcp').set('Authorization', `Bearer ${res.body.access_token}`);
  expect(call.body.auth).toMatchObject({ actor: 'client', clientId: 'exporter' });
  expect(events.filter((event) => event.type === 'token.issued')).toEqual([
    expect.objectContaining({
      clientId: 'exporter',
      grantType: JWT_BEARER,
      scopes: ['fakture:read', 'clients:read'],
    }),
  ]);
  const metadata = await request(server.app).get('/.well-known/oauth-authorization-server');
  expect(metadata.body.grant_types_supported).toContain(JWT_BEARER);
  // Not an ID-JAG server: no profile is claimed.
  expect(metadata.body).not.toHaveProperty('authorization_grant_profiles_supported');
});

test('a JWT with no typ (a Kubernetes service-account token) is taken too; a scope narrows', async () => {
  const res = await grant(workloadJwt({}, { header: { typ: undefined } }), { scope: 'clients:read' });
  expect(res.status).toBe(200);
  expect(res.body.scope).toBe('clients:read');
  expect((await grant(workloadJwt(), { scope: 'company:read' })).body.error).toBe('invalid_scope');
});

test('a rule’s claims must match exactly: a tenant claim the issuer controls', async () => {
  expect((await grant(workloadJwt({ sub: 'tenant-bound', tenant: 'acme' }))).status).toBe(200);
});

test('a DPoP proof binds the token (RFC 9449 §5)', async () => {
  const key = createDpopKey();
  const res = await grant(
    workloadJwt(),
    {},
    { DPoP: key.proof(server.clock.now(), { htu: TOKEN_ENDPOINT }) },
  );
  expect(res.body.token_type).toBe('DPoP');
  expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
});

const now = () => Math.floor(server.clock.now() / 1000);
const P = () => platform.issuer.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// Each refusal: what the workload is told (error_description, after "The workload token was refused: "), and what the
// operator's event says (detail), each a pattern.
const cases: [string, string, string | RegExp, () => RegExp, () => string][] = [
  [
    'not a JWT at all',
    'invalid_jwt',
    'it is not a JWT',
    () => /^the assertion is not a JWT$/,
    () => 'not.a.jwt',
  ],
  [
    'typed as an ID-JAG (RFC 8725 §3.11)',
    'invalid_jwt',
    'its typ header must be JWT or absent',
    () => /^typ "oauth-id-jag\+jwt"$/,
    () => workloadJwt({}, { header: { typ: 'oauth-id-jag+jwt' } }),
  ],
  [
    'typed as an access token',
    'invalid_jwt',
    'its typ header must be JWT or absent',
    () => /^typ "at\+jwt"$/,
    () => workloadJwt({}, { header: { typ: 'at+jwt' } }),
  ],
  [
    'signed with HS256 (RFC 8725 §3.1)',
    'invalid_jwt',
    'it is signed with HS256; use RS256, PS256, ES256',
    () => /^alg HS256$/,
    () =>
      jwt.sign({ iss: platform.issuer, sub: SUBJECT, aud: TOKEN_ENDPOINT, jti: randomUUID() }, 'secret', {
        algorithm: 'HS256',
        expiresIn: 60,
      }),
  ],
  [
    'from an issuer nobody trusts',
    'untrusted_issuer',
    'its issuer is not trusted here',
    () => /^iss "https:\/\/untrusted\.example"$/,
    () => workloadJwt({ iss: 'https://untrusted.example' }),
  ],
  [
    'with no issuer',
    'untrusted_issuer',
    'its issuer is not trusted here',
    () => /^iss undefined$/,
    () => workloadJwt({ iss: undefined }),
  ],
  [
    'naming a trusted issuer, signed by another key',
    'invalid_jwt',
    "its signature does not match its issuer's keys",
    () => new RegExp(`^${P()}: its signature does not match its issuer's keys$`),
    () => workloadJwt({}, { key: strayKey('idp-1') }),
  ],
  [
    'naming a key its issuer does not have',
    'invalid_jwt',
    'no key of its issuer verifies an ES256 signature',
    () => new RegExp(`^${P()}: no ES256 key$`),
    () => workloadJwt({}, { key: strayKey('no-such-kid') }),
  ],
  [
    'for the issuer, not the token endpoint (SEP-1933 "JWT Format")',
    'invalid_jwt',
    `its aud must be ${TOKEN_ENDPOINT} alone`,
    () => new RegExp(`^${P()}: aud mismatch$`),
    () => workloadJwt({ aud: ISSUER }),
  ],
  [
    'for the token endpoint and another audience (RFC 7523 §3 item 3)',
    'invalid_jwt',
    `its aud must be ${TOKEN_ENDPOINT} alone`,
    () => /aud mismatch$/,
    () => workloadJwt({ aud: [TOKEN_ENDPOINT, 'https://other.example/token'] }),
  ],
  [
    'expired (RFC 7523 §3 item 4)',
    'invalid_jwt',
    'it has expired',
    () => /: it has expired$/,
    () => workloadJwt({ iat: now() - 700, exp: now() - 100 }),
  ],
  [
    'not valid yet (RFC 7523 §3 item 5)',
    'invalid_jwt',
    'it is not valid yet',
    () => /: it is not valid yet$/,
    () => workloadJwt({ nbf: now() + 120 }),
  ],
  [
    'issued in the future',
    'invalid_jwt',
    'its iat is in the future',
    () => /: iat in the future$/,
    () => workloadJwt({ iat: now() + 31, exp: now() + 300 }),
  ],
  [
    'living longer than maxLifetimeSeconds',
    'invalid_jwt',
    'it lives too long: exp must be within 3600 seconds of iat',
    () => /: lifetime 3601 s$/,
    () => workloadJwt({ exp: now() + 3601 }),
  ],
  [
    'without a jti (RFC 7523 §3 item 7)',
    'invalid_jwt',
    'it needs a jti claim',
    () => /: no jti$/,
    () => workloadJwt({ jti: undefined }),
  ],
  [
    'without a sub',
    'invalid_jwt',
    'it has no sub claim',
    () => /: no sub$/,
    () => workloadJwt({ sub: undefined }),
  ],
  [
    'with a sub that is no string',
    'invalid_jwt',
    'it has no sub claim',
    () => /: no sub$/,
    () => workloadJwt({ sub: 5 }),
  ],
  [
    'without an iat',
    'invalid_jwt',
    'it needs exp and iat claims',
    () => /: no exp or iat$/,
    () => workloadJwt({ iat: undefined }),
  ],
  [
    'without an exp',
    'invalid_jwt',
    'it needs exp and iat claims',
    () => /: no exp or iat$/,
    () => workloadJwt({ exp: undefined }),
  ],
  [
    'of a workload no rule names (SEP-1933 "Workload Trust")',
    'no_rule',
    'this workload may not get tokens here',
    () => new RegExp(`^${P()} "system:serviceaccount:default:default": no rule names it$`),
    () => workloadJwt({ sub: 'system:serviceaccount:default:default' }),
  ],
  [
    'of a subject that differs only in case',
    'no_rule',
    'this workload may not get tokens here',
    () => /no rule names it$/,
    () => workloadJwt({ sub: SUBJECT.toUpperCase() }),
  ],
  [
    'of a trusted issuer with no rules at all',
    'no_rule',
    'this workload may not get tokens here',
    () => /no rule names it$/,
    () =>
      other.mint(
        { sub: SUBJECT, aud: TOKEN_ENDPOINT, iat: now(), exp: now() + 60 },
        { header: { typ: 'JWT' } },
      ),
  ],
  [
    'whose rule’s claim differs (SEP-1933 "Multi-Tenancy")',
    'claims',
    'this workload may not get tokens here',
    () => /"tenant-bound": claim tenant differs$/,
    () => workloadJwt({ sub: 'tenant-bound', tenant: 'evil' }),
  ],
  [
    'whose rule’s claim is missing',
    'claims',
    'this workload may not get tokens here',
    () => /claim tenant differs$/,
    () => workloadJwt({ sub: 'tenant-bound' }),
  ],
  [
    'whose rule names a client that does not exist',
    'client',
    'this workload may not get tokens here',
    () => /"orphan": client nobody is missing or unfit$/,
    () => workloadJwt({ sub: 'orphan' }),
  ],
  [
    'whose rule names a client without client_credentials',
    'client',
    'this workload may not get tokens here',
    () => /client browser-app is missing or unfit$/,
    () => workloadJwt({ sub: 'browser-app' }),
  ],
  [
    'whose rule names a public client',
    'client',
    'this workload may not get tokens here',
    () => /client public-machine is missing or unfit$/,
    () => workloadJwt({ sub: 'public-machine' }),
  ],
];

test.each(cases)('a JWT %s is invalid_grant (%s)', async (_name, reason, description, detail, assertion) => {
  const res = await grant(assertion());
  expect(res.status).toBe(400);
  expect(res.body).toEqual({
    error: 'invalid_grant',
    error_description: `The workload token was refused: ${description}.`,
  });
  expect(events.filter((event) => event.type === 'workload.refused')).toEqual([
    expect.objectContaining({ reason, detail: expect.stringMatching(detail()) }),
  ]);
  expect(events.filter((event) => event.type === 'token.issued')).toEqual([]);
});

test('the detail for the operator is bounded: a long sub is cut to 256 characters', async () => {
  await grant(workloadJwt({ sub: 'x'.repeat(1000) }));
  const refused = events.find((event) => event.type === 'workload.refused')!;
  expect(refused.reason).toBe('no_rule');
  expect(refused.detail).toContain(`"${'x'.repeat(256)}"`);
});

test('at the edges of the checks: iat 30 s ahead, and a lifetime of exactly maxLifetimeSeconds, are taken', async () => {
  expect((await grant(workloadJwt({ iat: now() + 30, exp: now() + 600 }))).status).toBe(200);
  expect((await grant(workloadJwt({ exp: now() + 3600 }))).status).toBe(200);
});

test('a rule’s scopes stay within its client’s, and none left is invalid_scope', async () => {
  const overreach = await grant(workloadJwt({ sub: 'overreach' }));
  expect(overreach.body.scope).toBe('fakture:read');
  const disjoint = await grant(workloadJwt({ sub: 'disjoint' }));
  expect(disjoint.body).toEqual({
    error: 'invalid_scope',
    error_description: 'This workload may ask for no scope here.',
  });
  // Without scopes in the rule, the client's whole scope.
  expect((await grant(workloadJwt({ sub: 'tenant-bound', tenant: 'acme' }))).body.scope).toBe(
    'fakture:read clients:read company:read',
  );
});

test('a key the platform rotated in is fetched again (its kid unknown until then)', async () => {
  expect((await grant(workloadJwt())).status).toBe(200);
  expect(platform.rotate()).toBe('idp-2');
  // A kid unknown to the copy is looked for again once the copy is a few seconds old.
  server.clock.advance(11_000);
  const before = platform.server.hits(platform.jwksPath);
  expect((await grant(workloadJwt())).status).toBe(200);
  expect(platform.server.hits(platform.jwksPath)).toBe(before + 1);
});

test('a resource names which of the server’s resources the token is for (RFC 8707)', async () => {
  server.close();
  events = [];
  server = createTestServer(options({ resources: [RESOURCE, `${ISSUER}/files`] }));
  await registerClients();
  expect(claimsOf((await grant(workloadJwt(), { resource: `${ISSUER}/files` })).body.access_token).aud).toBe(
    `${ISSUER}/files`,
  );
  expect(claimsOf((await grant(workloadJwt())).body.access_token).aud).toBe(RESOURCE);
  expect((await grant(workloadJwt(), { resource: 'https://elsewhere.example' })).body.error).toBe(
    'invalid_target',
  );
});

test('with workloads trusted, a request of another grant without client authentication is invalid_client', async () => {
  const res = await request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .send({ grant_type: 'client_credentials' });
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('invalid_client');
});

test('a JWT is used once (RFC 7523 §3 item 7): its replay is invalid_grant', async () => {
  const assertion = workloadJwt();
  expect((await grant(assertion)).status).toBe(200);
  const again = await grant(assertion);
  expect(again.body).toEqual({
    error: 'invalid_grant',
    error_description: 'The workload token was refused: it was used already; present a fresh one.',
  });
  expect(events.at(-2)).toMatchObject({
    type: 'workload.refused',
    reason: 'replayed',
    detail: `${platform.issuer} "${SUBJECT}": jti used before`,
  });
});

test('a refused request leaves the JWT usable by its workload (the jti is recorded last)', async () => {
  const assertion = workloadJwt();
  expect((await grant(assertion, { scope: 'company:read' })).body.error).toBe('invalid_scope');
  expect((await grant(assertion)).status).toBe(200);
});

test('a request that names a client is that client’s, never a workload’s', async () => {
  const secret = 'machine-secret-'.repeat(3);
  await server.store.registerClient(
    clientRecord({
      clientId: 'enterprise-app',
      clientSecretHash: hashSecret(secret),
      grantTypes: [JWT_BEARER],
      redirectUris: [],
      responseTypes: [],
    }),
  );
  const withClient = await grant(workloadJwt()).auth('enterprise-app', secret);
  // The client is authenticated and has the grant, but no enterprise IdP is trusted: nothing it could present.
  expect(withClient.body.error).toBe('unauthorized_client');
  const wrongSecret = await grant(workloadJwt()).auth('enterprise-app', 'wrong');
  expect(wrongSecret.body.error).toBe('invalid_client');
  const byIdAlone = await grant(workloadJwt(), { client_id: 'browser-app' });
  expect(byIdAlone.body.error).toBe('invalid_client');
});

test('without workloadIdentity, a request without client authentication is invalid_client', async () => {
  server.close();
  server = createTestServer(options({ workloadIdentity: undefined }));
  const res = await grant(workloadJwt());
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('invalid_client');
});
