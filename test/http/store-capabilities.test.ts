// A store's optional methods switch features: without useAssertionId no private_key_jwt, without
// createGrantWithClient no Client ID Metadata Documents. The router says so once, at start, and every endpoint and
// the metadata agree.
import request from 'supertest';
import { createClientLookup } from '../../lib/context';
import { createSqliteStore } from '../../lib/store/sqlite';
import type { ClientRecord, OAuthStore } from '../../lib/store/types';
import { createFakeClock } from '../helpers/clock';
import { REDIRECT_URI, mountTestApp } from '../helpers/oauth-app';
import { clientRecord } from '../../lib/testing/fixtures';

const PRIVATE_KEY_JWT_CLIENT = clientRecord({
  clientId: 'jwt-client',
  clientSecretHash: null,
  tokenEndpointAuthMethod: 'private_key_jwt',
  metadata: { jwks: { keys: [] } },
});

/** An assertion that names its client; refused before its signature is read, so it needs none. */
const assertionOf = (clientId: string) =>
  [{ alg: 'ES256' }, { iss: clientId, sub: clientId }, 'sig']
    .map((part) => Buffer.from(typeof part === 'string' ? part : JSON.stringify(part)).toString('base64url'))
    .join('.');

function appWithout(method: 'useAssertionId' | 'createGrantWithClient' | undefined) {
  const store = createSqliteStore(':memory:');
  const partial: OAuthStore = { ...store };
  if (method) delete partial[method];
  const warnings: string[] = [];
  const warn = jest
    .spyOn(console, 'warn')
    .mockImplementation((message: string) => void warnings.push(message));
  try {
    const { app } = mountTestApp(partial, createFakeClock(Date.now()));
    return { app, store, warnings };
  } finally {
    warn.mockRestore();
  }
}

describe.each([
  ['every capability', undefined, []],
  [
    'no useAssertionId',
    'useAssertionId',
    [
      /no useAssertionId\(\), so private_key_jwt client authentication is off/,
      /no useAssertionId\(\), so DPoP is off \(clients get bearer tokens\)/,
    ],
  ],
  [
    'no createGrantWithClient',
    'createGrantWithClient',
    [/no createGrantWithClient\(\), so Client ID Metadata Documents are off/],
  ],
] as const)('a store with %s', (_name, missing, expectedWarnings) => {
  const { app, store, warnings } = appWithout(missing);
  afterAll(() => store.close());
  const jwtOffered = missing !== 'useAssertionId';
  const documentsOffered = missing !== 'createGrantWithClient';

  test('the router says so once, at start', () => {
    expect(warnings).toHaveLength(expectedWarnings.length);
    expectedWarnings.forEach((pattern, i) => expect(warnings[i]).toMatch(pattern));
  });

  test('the metadata offers only what the store can keep', async () => {
    const { body } = await request(app).get('/.well-known/oauth-authorization-server').expect(200);
    for (const field of [
      'token_endpoint_auth_methods_supported',
      'revocation_endpoint_auth_methods_supported',
      'introspection_endpoint_auth_methods_supported',
    ])
      expect(body[field].includes('private_key_jwt')).toBe(jwtOffered);
    expect('token_endpoint_auth_signing_alg_values_supported' in body).toBe(jwtOffered);
    expect(body.client_id_metadata_document_supported === true).toBe(documentsOffered);
    // RFC 9449 §11.1: a proof's jti must be single-use across instances, as an assertion's.
    expect('dpop_signing_alg_values_supported' in body).toBe(jwtOffered);
    const resource = await request(app).get('/.well-known/oauth-protected-resource/mcp').expect(200);
    expect('dpop_signing_alg_values_supported' in resource.body).toBe(jwtOffered);
  });

  test('registration of a private_key_jwt client', async () => {
    const res = await request(app)
      .post('/v1/oauth/register')
      .send({
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: {
          keys: [
            {
              kty: 'EC',
              crv: 'P-256',
              x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
              y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
            },
          ],
        },
      });
    if (jwtOffered) expect(res.status).toBe(201);
    else
      expect([res.status, res.body.error, res.body.error_description]).toEqual([
        400,
        'invalid_client_metadata',
        expect.stringMatching(/does not offer token_endpoint_auth_method private_key_jwt/),
      ]);
  });

  test('a client registered with private_key_jwt before the store lost assertion ids', async () => {
    if (!(await store.findClient(PRIVATE_KEY_JWT_CLIENT.clientId)))
      store.registerClient(PRIVATE_KEY_JWT_CLIENT);
    const res = await request(app)
      .post('/v1/oauth/token')
      .type('form')
      .send({
        grant_type: 'refresh_token',
        refresh_token: 'x',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertionOf(PRIVATE_KEY_JWT_CLIENT.clientId),
      });
    // Without assertion ids the assertion is never read; with them this forged one fails a later check.
    if (jwtOffered) expect(res.body.error_description).not.toMatch(/does not accept private_key_jwt/);
    else
      expect([res.status, res.body.error, res.body.error_description]).toEqual([
        401,
        'invalid_client',
        'This server does not accept private_key_jwt client authentication.',
      ]);
  });

  test('a client identified by a metadata document URL', async () => {
    const res = await request(app).get('/v1/oauth/authorize').query({
      response_type: 'code',
      client_id: 'https://127.0.0.1:9/client.json',
      redirect_uri: 'https://127.0.0.1:9/callback',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    // Refused either way (allowLoopback is off, so nothing is fetched); without document support, as unknown.
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(/unknown client|not registered/i.test(res.text)).toBe(!documentsOffered);
  });
});

test('a document client whose method the server does not offer is refused before consent', async () => {
  const document: ClientRecord = { ...PRIVATE_KEY_JWT_CLIENT, clientId: 'https://app.example/client.json' };
  const documents = { findClient: async () => document } as never;
  const store = {} as OAuthStore;
  await expect(
    createClientLookup(store, documents, ['none'])('https://app.example/client.json'),
  ).rejects.toMatchObject({
    code: 'invalid_client',
    message: expect.stringMatching(/does not offer token_endpoint_auth_method private_key_jwt/),
  });
  await expect(
    createClientLookup(store, documents, ['none', 'private_key_jwt'])('https://app.example/client.json'),
  ).resolves.toBe(document);
});
