// The enterpriseIdps option fails at start with a message that says how to fix it, and the jwt-bearer grant is the
// operator's to give: registerOperatorClient takes it, with no refresh token beside it.
import { createOAuthRouter } from '../../../lib/router';
import { createJwtSigner } from '../../../lib/crypto/signer';
import {
  JWT_BEARER_GRANT,
  parseEnterpriseIdps,
  type EnterpriseIdpOptions,
} from '../../../lib/id-jag/options';
import { registerOperatorClient } from '../../../lib/grants/operator-clients';
import { createMemoryStore } from '../../../lib/store/memory';

const fail = (message: string): never => {
  throw new TypeError(message);
};
const findUser = () => null;

test('absent: the grant is off', () => {
  expect(parseEnterpriseIdps(undefined, fail)).toBeUndefined();
});

test('defaults: a lifetime of at most 300 seconds; issuers kept as written; any verified email', () => {
  expect(parseEnterpriseIdps({ issuers: ['https://acme.okta.com/'], findUser }, fail)).toEqual({
    issuers: ['https://acme.okta.com/'],
    emailDomains: new Map(),
    findLinkedUser: undefined,
    findUser,
    maxLifetimeSeconds: 300,
  });
});

test.each([10, 3600])('a lifetime of %i seconds, the bounds, is accepted', (seconds) => {
  expect(
    parseEnterpriseIdps({ issuers: ['https://idp.example'], findUser, maxLifetimeSeconds: seconds }, fail)
      ?.maxLifetimeSeconds,
  ).toBe(seconds);
});

test('an IdP with the email domains it speaks for: kept in lower case, each once; a link alone is enough', () => {
  const findLinkedUser = () => null;
  const parsed = parseEnterpriseIdps(
    {
      issuers: [
        {
          issuer: 'https://acme.okta.com',
          emailDomains: [
            'Acme.com',
            'acme.com',
            'xn--bcher-kva.example',
            'x.y.z',
            `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
          ],
        },
        { issuer: 'https://login.partner.example' },
      ],
      findLinkedUser,
    },
    fail,
  )!;
  expect(parsed.issuers).toEqual(['https://acme.okta.com', 'https://login.partner.example']);
  expect(parsed.emailDomains).toEqual(
    new Map([
      [
        'https://acme.okta.com',
        new Set([
          'acme.com',
          'xn--bcher-kva.example',
          'x.y.z',
          `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
        ]),
      ],
    ]),
  );
  expect([parsed.findLinkedUser, parsed.findUser]).toEqual([findLinkedUser, undefined]);
});

test.each<[string, unknown, RegExp]>([
  ['not an object', 'yes', /must be an object/],
  ['no issuers', { findUser }, /issuers must list/],
  ['an empty list', { issuers: [], findUser }, /issuers must list/],
  ['an http issuer (RFC 8414 §2)', { issuers: ['http://idp.example'], findUser }, /must use https/],
  ['an issuer with a query', { issuers: ['https://idp.example?tenant=1'], findUser }, /query or fragment/],
  ['an issuer with a fragment', { issuers: ['https://idp.example#x'], findUser }, /query or fragment/],
  ['an issuer with credentials', { issuers: ['https://u:p@idp.example'], findUser }, /credentials/],
  ['an issuer with a user name alone', { issuers: ['https://u@idp.example'], findUser }, /credentials/],
  ['an issuer with a password alone', { issuers: ['https://:p@idp.example'], findUser }, /credentials/],
  ['an issuer with an empty query', { issuers: ['https://idp.example?'], findUser }, /query or fragment/],
  ['an issuer with an empty fragment', { issuers: ['https://idp.example#'], findUser }, /query or fragment/],
  ['a null entry', { issuers: [null], findUser }, /"undefined" is not a string/],
  ['a relative issuer', { issuers: ['idp.example'], findUser }, /not an absolute URL/],
  [
    'neither findUser nor findLinkedUser',
    { issuers: ['https://idp.example'] },
    /needs findUser\(claims\) \(a user by verified email\) or findLinkedUser\(\{ iss, sub \}\) \(a user linked to the IdP account\), or both, e\.g\. \{ issuers: \[\{ issuer: 'https:\/\/acme\.okta\.com', emailDomains: \['acme\.com'\] \}\], findUser: \(claims\) => users\.byEmailKey\(emailKey\(claims\.email\)\) \}\.$/,
  ],
  [
    'a findUser that is no function',
    { issuers: ['https://idp.example'], findUser: 'x' },
    /findUser must be a/,
  ],
  [
    'a findLinkedUser that is no function',
    { issuers: ['https://idp.example'], findUser, findLinkedUser: {} },
    /findLinkedUser must be a function/,
  ],
  [
    'an issuer listed twice (which of its domain lists holds?)',
    {
      issuers: ['https://idp.example', { issuer: 'https://idp.example', emailDomains: ['a.example'] }],
      findUser,
    },
    /listed twice/,
  ],
  [
    'an entry object with no issuer',
    { issuers: [{ emailDomains: ['a.example'] }], findUser },
    /"undefined" is not a string/,
  ],
  [
    'an empty domain list (an IdP that may name nobody is a mistake)',
    { issuers: [{ issuer: 'https://idp.example', emailDomains: [] }], findUser },
    /^enterpriseIdps\.issuers: "https:\/\/idp\.example": emailDomains must list domains, e\.g\. \['example\.com'\]; leave it out to allow any\.$/,
  ],
  [
    'domains that are not a list',
    { issuers: [{ issuer: 'https://idp.example', emailDomains: 'example.com' }], findUser },
    /emailDomains must list domains/,
  ],
  ...[
    ['an address', 'bob@example.com'],
    ['a wildcard', '*.example.com'],
    ['a bare label', 'localhost'],
    ['a trailing dot', 'example.com.'],
    ['a Unicode domain (its A-label is the one compared)', 'bücher.example'],
    ['a label starting with a hyphen', '-a.example'],
    [
      '254 characters long (RFC 1035 §2.3.4: 253 at most)',
      `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`,
    ],
    ['not a string', 42],
  ].map(([name, domain]): [string, unknown, RegExp] => [
    `a domain that is ${name}`,
    { issuers: [{ issuer: 'https://idp.example', emailDomains: [domain] }], findUser },
    new RegExp(
      `^enterpriseIdps\\.issuers: "https://idp\\.example": emailDomains holds "[^"]*", which is not a domain; write it as in an address after the @ \\(example\\.com; an IDN as its xn-- form\\), with no '@' or wildcard\\.$`,
    ),
  ]),
  ...[9, 3601, '60', 1.5].map((seconds): [string, unknown, RegExp] => [
    `a lifetime of ${JSON.stringify(seconds)}`,
    { issuers: ['https://idp.example'], findUser, maxLifetimeSeconds: seconds },
    /^enterpriseIdps\.maxLifetimeSeconds must be a whole number of seconds from 10 to 3600\.$/,
  ]),
  [
    'a lifetime too long',
    { issuers: ['https://idp.example'], findUser, maxLifetimeSeconds: 86_400 },
    /from 10 to 3600/,
  ],
  [
    'a lifetime not whole',
    { issuers: ['https://idp.example'], findUser, maxLifetimeSeconds: 1.5 },
    /from 10 to 3600/,
  ],
])('%s fails at start', (_name, given, message) => {
  expect(() => parseEnterpriseIdps(given as unknown as EnterpriseIdpOptions, fail)).toThrow(message);
});

test('createOAuthRouter says which option is wrong', () => {
  expect(() =>
    createOAuthRouter(createMemoryStore(), createJwtSigner(), {
      issuer: 'https://api.example.com',
      scopes: { 'notes:read': 'Read your notes' },
      authenticateUser: () => null,
      enterpriseIdps: { issuers: ['http://idp.example'], findUser },
    }),
  ).toThrow('createOAuthRouter: enterpriseIdps.issuers: "http://idp.example" must use https');
});

test('registerOperatorClient gives the grant, alone; a refresh token never goes with it (draft §4.4.3)', async () => {
  const store = createMemoryStore();
  const client = await registerOperatorClient(store, ['notes:read'], {
    name: 'Chat for Work',
    grantTypes: [JWT_BEARER_GRANT],
  });
  expect(client.record.grantTypes).toEqual([JWT_BEARER_GRANT]);
  expect(client.record.redirectUris).toEqual([]);
  await expect(
    registerOperatorClient(store, ['notes:read'], {
      name: 'Chat',
      grantTypes: [JWT_BEARER_GRANT, 'refresh_token'],
    }),
  ).rejects.toThrow(/refresh_token goes with authorization_code/);
});
