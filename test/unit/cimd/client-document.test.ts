// What a Client ID Metadata Document must say, and which client_id URLs may name one (table-driven; the HTTP tests
// show the same refusals on the pages).
import {
  clientIdUrlProblem,
  describeClient,
  validateClientDocument,
} from '../../../lib/cimd/client-document';
import { HIDDEN_FORMATTING, ORDINARY_NAMES } from '../../helpers/display-text';

const URL_ID = 'https://app.example/oauth/client.json';
const CATALOGUE = new Set(['fakture:read', 'clients:read', 'clients:write']);
const base = { client_id: URL_ID, client_name: 'App', redirect_uris: ['https://app.example/cb'] };

describe('client_id URLs', () => {
  test.each([
    [URL_ID, null],
    ['https://app.example/client?version=2', null],
    ['https://app.example:8443/client.json', null],
    ['http://app.example/client.json', /https/],
    ['https://app.example/', /path/],
    ['https://app.example', /path/],
    ['https://app.example/client.json#frag', /fragment/],
    ['https://me:pw@app.example/client.json', /user name/],
    ['https://app.example/./client.json', /segments/],
    ['https://app.example/a/../client.json', /segments/],
    ['https://app.example/a/%2E%2e/client.json', /segments/],
    [`https://app.example/${'x'.repeat(2000)}`, /at most/],
  ])('%s', (value, problem) => {
    const found = clientIdUrlProblem(value);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toMatch(problem);
  });
});

describe('documents', () => {
  test('a valid document becomes a public client with the catalogue as its scope', () => {
    expect(validateClientDocument(URL_ID, base, CATALOGUE, 7)).toEqual({
      clientId: URL_ID,
      clientSecretHash: null,
      clientName: 'App',
      redirectUris: ['https://app.example/cb'],
      grantTypes: ['authorization_code', 'refresh_token'],
      responseTypes: ['code'],
      tokenEndpointAuthMethod: 'none',
      scope: 'fakture:read clients:read clients:write',
      metadata: {},
      issuedAt: 7,
    });
  });

  test.each([
    ['names some of our scopes: they narrow it', 'clients:read openid', 'clients:read'],
    [
      'names none of ours (written for other servers): ignored',
      'openid email',
      'fakture:read clients:read clients:write',
    ],
  ])('a document scope that %s', (_name, scope, expected) => {
    expect(validateClientDocument(URL_ID, { ...base, scope }, CATALOGUE, 0).scope).toBe(expected);
  });

  test('grant types this server lacks are left out; authorization_code must stay', () => {
    const client = validateClientDocument(
      URL_ID,
      { ...base, grant_types: ['authorization_code', 'client_credentials'] },
      CATALOGUE,
      0,
    );
    expect(client.grantTypes).toEqual(['authorization_code']);
    expect(() =>
      validateClientDocument(URL_ID, { ...base, grant_types: ['refresh_token'] }, CATALOGUE, 0),
    ).toThrow(/authorization_code/);
  });

  test.each([
    ['no client_name', { client_name: undefined }],
    ['a blank client_name', { client_name: '  ' }],
  ])('a document with %s is accepted (RFC 7591 §2: optional); pages name it by its host', (_name, change) => {
    const client = validateClientDocument(URL_ID, { ...base, ...change }, CATALOGUE, 0);
    expect(client.clientName).toBeNull();
    expect(describeClient(client)).toMatchObject({
      headline: new URL(URL_ID).hostname,
      name: new URL(URL_ID).hostname,
    });
  });

  test.each([
    ['a different client_id', { client_id: `${URL_ID}?x` }, /must be exactly the URL/],
    ['no client_id', { client_id: undefined }, /missing/],
    ['a client_secret', { client_secret: 'x' }, /secret/],
    ['client_secret_expires_at', { client_secret_expires_at: 0 }, /secret/],
    ['client_secret_basic', { token_endpoint_auth_method: 'client_secret_basic' }, /not allowed/],
    ['client_secret_jwt', { token_endpoint_auth_method: 'client_secret_jwt' }, /not allowed/],
    ['private_key_jwt without keys', { token_endpoint_auth_method: 'private_key_jwt' }, /jwks/],
    [
      'an https jwks_uri and inline jwks',
      { jwks_uri: 'https://a.example/j', jwks: { keys: [] } },
      /not both/,
    ],
    ['a javascript: redirect', { redirect_uris: ['javascript:alert(1)'] }, /not allowed/],
    ['no code response type', { response_types: ['token'] }, /code/],
  ])('refuses %s', (_name, change, message) => {
    expect(() => validateClientDocument(URL_ID, { ...base, ...change }, CATALOGUE, 0)).toThrow(message);
  });
});

// A document's client_name is shown second on the consent page, beside "not verified": a bidi control would turn
// that sentence around, so a fetched document is held to the registration's rule.
describe('display fields of a document', () => {
  test.each(HIDDEN_FORMATTING)('bidi spoofing: a client_name holding %s is refused', (_name, code, char) => {
    expect(() =>
      validateClientDocument(URL_ID, { ...base, client_name: `App${char} name` }, CATALOGUE, 0),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid_client_metadata',
        description: `client_name must not hold ${code}: a character that reorders, breaks or hides the text around it.`,
      }),
    );
  });

  test.each([
    ['client_uri', { client_uri: 'https://app.example/‮' }],
    ['software_version', { software_version: '2 ' }],
    ['contacts', { contacts: ['⁦ops@app.example'] }],
  ])('bidi spoofing: %s is checked like client_name', (field, change) => {
    expect(() => validateClientDocument(URL_ID, { ...base, ...change }, CATALOGUE, 0)).toThrow(
      new RegExp(`^${field} must not hold U\+`),
    );
  });

  test.each(ORDINARY_NAMES)('a client_name with %s is kept as it is', (_name, clientName) => {
    expect(
      validateClientDocument(URL_ID, { ...base, client_name: clientName }, CATALOGUE, 0).clientName,
    ).toBe(clientName);
  });
});

describe('describeClient', () => {
  // A document client is headed by its host (verified: the document came from there), its self-chosen name second;
  // a registered client has only its name, unverified.
  test.each([
    [
      { clientId: URL_ID, clientName: 'App' },
      { headline: 'app.example', name: 'App', host: 'app.example', documentUrl: URL_ID, verified: true },
    ],
    [
      { clientId: 'https://gist.example/someone/raw/client.json', clientName: 'Claude' },
      {
        headline: 'gist.example',
        name: 'Claude',
        host: 'gist.example',
        documentUrl: 'https://gist.example/someone/raw/client.json',
        verified: true,
      },
    ],
    [
      { clientId: URL_ID, clientName: null },
      {
        headline: 'app.example',
        name: 'app.example',
        host: 'app.example',
        documentUrl: URL_ID,
        verified: true,
      },
    ],
    [
      { clientId: 'abc123', clientName: 'Tool' },
      { headline: 'Tool', name: 'Tool', host: undefined, documentUrl: undefined, verified: false },
    ],
    [
      { clientId: 'abc123', clientName: null },
      { headline: 'abc123', name: 'abc123', host: undefined, documentUrl: undefined, verified: false },
    ],
  ])('%j', (client, identity) => {
    expect(describeClient(client)).toEqual(identity);
  });
});
