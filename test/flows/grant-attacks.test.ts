// Attacks on the client_credentials grant (lib/grants/operator-clients.ts, lib/grants/client-credentials.ts) and on
// the jwt-bearer grant with an ID-JAG (lib/id-jag/assertion.ts, lib/id-jag/grant.ts, lib/id-jag/issuer-keys.ts),
// through the real token endpoint on the fake clock, with loopback IdPs. Each test asserts the safe behaviour and is
// named after the attack it stops; each pins a rule that test/http/client-credentials.test.ts and
// test/http/jwt-bearer.test.ts leave unpinned.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { importIssuerKeys } from '../../lib/id-jag/issuer-keys';
import { JWT_BEARER_GRANT } from '../../lib/id-jag/options';
import type { OAuthRouterOptions } from '../../lib/options';
import { startEnterpriseIdp, type EnterpriseIdp } from '../helpers/enterprise-idp';
import { resolveToLoopback } from '../helpers/document-server';
import { createTestServer, ISSUER, RESOURCE, USER, type TestServer } from '../helpers/oauth-app';
import { testCa } from '../helpers/test-ca';

let idp: EnterpriseIdp;
/** A second trusted IdP (another tenant, a partner's IdP): trusted for its own users only. */
let partner: EnterpriseIdp;
/** A third, whose key the test holds: to sign claims exactly as given (jsonwebtoken's sign adds an iat otherwise). */
let bare: EnterpriseIdp;
const bareKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
beforeAll(async () => {
  [idp, partner, bare] = await Promise.all([
    startEnterpriseIdp(),
    startEnterpriseIdp(),
    startEnterpriseIdp(),
  ]);
  const jwk = { ...bareKey.publicKey.export({ format: 'jwk' }), kid: 'bare', use: 'sig', alg: 'ES256' };
  bare.server.json(bare.jwksPath, { keys: [jwk] });
});
afterAll(() => Promise.all([idp.stop(), partner.stop(), bare.stop()]));

/** An ID-JAG of `bare` with exactly these claims (an undefined one left out) and no claim added. */
const signExactly = (claims: Record<string, unknown>) => {
  const payload = JSON.parse(JSON.stringify({ iss: bare.issuer, jti: randomUUID(), ...claims }));
  return jwt.sign(payload, bareKey.privateKey, {
    algorithm: 'ES256',
    // jsonwebtoken adds an iat when there is none, and with noTimestamp drops the one given.
    noTimestamp: !('iat' in payload),
    header: { alg: 'ES256', typ: 'oauth-id-jag+jwt', kid: 'bare' },
  });
};

let server: TestServer;
const options = (
  issuers: string[] = [idp.issuer, partner.issuer, bare.issuer],
): Partial<OAuthRouterOptions> => ({
  clientMetadataDocuments: {
    allowLoopback: true,
    ca: testCa().caPem,
    resolveHost: resolveToLoopback,
    // The default 5 s: the first fetch (a TLS handshake) of a loaded full run can take longer than a short limit.
    timeoutMs: 5000,
  },
  enterpriseIdps: {
    issuers,
    findUser: (claims) => (claims.email === USER.email ? { id: USER.id, email: USER.email } : null),
  },
});
beforeEach(() => {
  server = createTestServer(options());
});
afterEach(() => server.close());

const nowSeconds = () => Math.floor(server.clock.now() / 1000);

const enterpriseClient = () =>
  server.oauth.registerOperatorClient({
    name: 'Chat for Work',
    grantTypes: [JWT_BEARER_GRANT],
    scope: ['fakture:read', 'company:read'],
  });

/** Valid ID-JAG claims for `clientId` at the server's clock; each test spoils one. */
const claims = (clientId: string, overrides: Record<string, unknown> = {}) => ({
  sub: 'U019488227',
  email: USER.email,
  email_verified: true,
  aud: ISSUER,
  client_id: clientId,
  resource: RESOURCE,
  scope: 'fakture:read',
  iat: nowSeconds(),
  exp: nowSeconds() + 300,
  ...overrides,
});

const exchange = (client: { clientId: string; clientSecret?: string }, assertion: string) =>
  request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .auth(client.clientId, client.clientSecret ?? '')
    .send({ grant_type: JWT_BEARER_GRANT, assertion });

const clientCredentials = (client: { clientId: string; clientSecret?: string }) =>
  request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .auth(client.clientId, client.clientSecret ?? '')
    .send({ grant_type: 'client_credentials' });

describe('ID-JAG: what a grant must carry (draft §3.1), each missing claim on its own', () => {
  test.each([
    // Without the exp check nothing bounds the grant's life: exp - iat is NaN, which no maximum refuses.
    ['no exp: a grant that never expires', { exp: undefined }],
    // Without the iat check the maximum lifetime is skipped: exp - undefined is NaN.
    ['no iat, expiring in a year: the maximum lifetime dodged', { iat: undefined, exp: 'now+31536000' }],
    // findUser would be asked about a user with no subject (and here finds one by email).
    ['no sub: a grant about nobody in particular', { sub: undefined }],
  ])('%s', async (_name, spoilt) => {
    const client = await enterpriseClient();
    // The same claims with nothing left out are accepted: each refusal is the missing claim's.
    expect((await exchange(client, signExactly(claims(client.clientId)))).status).toBe(200);
    const resolved = Object.fromEntries(
      Object.entries(spoilt).map(([name, value]) => [
        name,
        typeof value === 'string' ? nowSeconds() + Number(value.slice(3)) : value,
      ]),
    );
    const res = await exchange(client, signExactly(claims(client.clientId, resolved)));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });
});

test('ID-JAG aud naming our token endpoint (accepted for client assertions) is refused: the issuer alone (draft §4.4.1)', async () => {
  const client = await enterpriseClient();
  const res = await exchange(client, idp.mint(claims(client.clientId, { aud: `${ISSUER}/v1/oauth/token` })));
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('invalid_grant');
});

test('another trusted IdP signing a grant in the first one’s name (iss of the first, its own key, same kid): refused', async () => {
  // Both IdPs publish a key with kid "idp-1": only the key set of the iss may verify, never the union of all IdPs'.
  const client = await enterpriseClient();
  expect((await exchange(client, partner.mint(claims(client.clientId)))).status).toBe(200);
  const forged = partner.mint(claims(client.clientId, { iss: idp.issuer }));
  const res = await exchange(client, forged);
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('invalid_grant');
});

test('an ID-JAG replayed after its exp but within the clock tolerance is still refused (the jti outlives the tolerance)', async () => {
  const client = await enterpriseClient();
  const assertion = idp.mint(claims(client.clientId, { exp: nowSeconds() + 60 }));
  expect((await exchange(client, assertion)).status).toBe(200);
  // 20 s past exp: jwt.verify still accepts it (30 s tolerance), so only the jti record can refuse it, and only if it
  // is kept past exp by the tolerance too (replayUntil in lib/id-jag/assertion.ts; a store may take over an expired id).
  server.clock.advance(80_000);
  const replay = await exchange(client, assertion);
  expect(replay.status).toBe(400);
  expect(replay.body.error).toBe('invalid_grant');
  expect(replay.body.error_description).toMatch(/already used/);
});

describe('registerOperatorClient never reads an empty scope list as the whole catalogue (fail closed)', () => {
  // An operator who computes the scopes a machine may have and ends up with none (or only offline_access, which is
  // no permission) must not get a client that may ask for every scope of the catalogue, write ones included.
  test.each([
    ['scope: []', [] as string[]],
    ['scope: ["offline_access"]', ['offline_access']],
    ['scope: [""]', ['']],
  ])('%s is refused, saying how to fix it', async (_name, scope) => {
    await expect(
      server.oauth.registerOperatorClient({
        name: 'Nightly export',
        grantTypes: ['client_credentials'],
        scope,
      }),
    ).rejects.toThrow(/scope must list one or more scopes of the catalogue/);
  });
});

describe('a key the server cannot use in a trusted IdP’s JWKS is passed over; the IdP’s ID-JAGs still verify', () => {
  // An IdP's key set serves every relying party: the rules for a stranger's client JWKS (at most 10 keys, RSA or EC
  // only) would make an IdP that publishes an Ed25519 key, or a dozen keys, beside the one it signs with unusable.
  let own: EnterpriseIdp;
  beforeEach(async () => {
    own = await startEnterpriseIdp();
    server.close();
    server = createTestServer(options([own.issuer]));
  });
  afterEach(() => own.stop());

  const signingKey = () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = { ...pair.publicKey.export({ format: 'jwk' }), kid: 'signing', use: 'sig', alg: 'ES256' };
    return { jwk, key: { privateKey: pair.privateKey, kid: 'signing' } };
  };

  test('control: the same IdP publishing only the key that signed the grant is accepted', async () => {
    const { jwk, key } = signingKey();
    own.server.json(own.jwksPath, { keys: [jwk] });
    const client = await enterpriseClient();
    expect(
      (await exchange(client, own.mint(claims(client.clientId, { iss: own.issuer }), { key }))).status,
    ).toBe(200);
  });

  test('an Ed25519 key beside the ES256 key that signed the grant', async () => {
    const { jwk, key } = signingKey();
    const ed25519 = {
      ...generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }),
      kid: 'ed',
      use: 'sig',
      alg: 'EdDSA',
    };
    own.server.json(own.jwksPath, { keys: [ed25519, jwk] });
    const client = await enterpriseClient();
    const res = await exchange(client, own.mint(claims(client.clientId, { iss: own.issuer }), { key }));
    expect(res.body.error_description).toBeUndefined();
    expect(res.status).toBe(200);
  });

  test('eleven keys, one of which signed the grant', async () => {
    const { jwk, key } = signingKey();
    const others = Array.from({ length: 10 }, (_, index) => ({
      ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
      kid: `old-${index}`,
      use: 'sig',
      alg: 'ES256',
    }));
    own.server.json(own.jwksPath, { keys: [...others, jwk] });
    const client = await enterpriseClient();
    const res = await exchange(client, own.mint(claims(client.clientId, { iss: own.issuer }), { key }));
    expect(res.body.error_description).toBeUndefined();
    expect(res.status).toBe(200);
  });
});

describe('what the IdP key importer still refuses', () => {
  test.each<[string, unknown, RegExp]>([
    [
      'a set with no usable key (only Ed25519 and encryption keys)',
      {
        keys: [
          { kty: 'OKP', crv: 'Ed25519', x: 'AA' },
          { kty: 'EC', use: 'enc' },
        ],
      },
      /no RSA or EC signing key/,
    ],
    [
      'a set holding a private key',
      {
        keys: [
          { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) },
        ],
      },
      /private key/,
    ],
    ['more than 100 keys', { keys: Array.from({ length: 101 }, () => ({ kty: 'EC' })) }, /at most 100 keys/],
    ['not a JWK Set', ['keys'], /not a JWK Set/],
  ])('%s', (_name, body, message) => {
    expect(() => importIssuerKeys(body)).toThrow(message);
  });
  test('an unreadable key is passed over, the readable one kept', () => {
    const good = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const keys = importIssuerKeys({
      keys: [
        { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA', kid: 'bad' },
        { ...good, kid: 'good' },
      ],
    });
    expect(keys.map((key) => key.kid)).toEqual(['good']);
  });
});
