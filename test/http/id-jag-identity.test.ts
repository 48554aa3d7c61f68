// Who an ID-JAG may name (security round four): an enterprise IdP speaks only for its own users. Two real IdPs over
// loopback https, one limited to its email domains; each attack is a request a trusted IdP (or a user of one who can
// edit their own email attribute) could make, and is refused with invalid_grant and an id_jag.refused event naming the
// rule. The user the ID-JAG is about must never be asked for when the rule refuses first.
import request from 'supertest';
import type { OAuthEvent } from '../../lib/events';
import { JWT_BEARER_GRANT, type IdJagClaims } from '../../lib/grants/id-jag-options';
import { emailKey } from '../../lib/util/email';
import { resolveToLoopback } from '../helpers/document-server';
import { startEnterpriseIdp, type EnterpriseIdp } from '../helpers/enterprise-idp';
import { createTestServer, ISSUER, RESOURCE, type TestServer } from '../helpers/oauth-app';
import { testCa } from '../helpers/test-ca';

/** The service's users: Bob signs in with a password only; Alice is at the partner, whose IdP is the second one. */
const USERS = [
  { id: 'user-bob', email: 'bob@example.com' },
  { id: 'user-alice', email: 'alice@partner.example' },
  { id: 'user-kelvin', email: 'kelvin@example.com' },
];

let corporate: EnterpriseIdp; // speaks for example.com only
let partner: EnterpriseIdp; // no domains listed: any verified address
beforeAll(async () => {
  [corporate, partner] = await Promise.all([startEnterpriseIdp(), startEnterpriseIdp()]);
});
afterAll(async () => {
  await Promise.all([corporate.stop(), partner.stop()]);
});

let server: TestServer;
let events: OAuthEvent[];
let asked: { linked: unknown[]; byEmail: IdJagClaims[] };
/** (iss, sub) links the host made when a user connected an IdP account. */
let links: Map<string, string>;
beforeEach(() => {
  events = [];
  asked = { linked: [], byEmail: [] };
  links = new Map();
  server = createTestServer({
    onEvent: (event) => void events.push(event),
    clientMetadataDocuments: {
      allowLoopback: true,
      ca: testCa().caPem,
      resolveHost: resolveToLoopback,
      timeoutMs: 400,
    },
    enterpriseIdps: {
      issuers: [{ issuer: corporate.issuer, emailDomains: ['Example.com'] }, partner.issuer],
      findLinkedUser: (subject) => {
        asked.linked.push(subject);
        const id = links.get(`${subject.iss} ${subject.sub}`);
        return id === undefined ? null : { id };
      },
      findUser: (claims) => {
        asked.byEmail.push(claims);
        return USERS.find((user) => emailKey(user.email) === emailKey(claims.email)) ?? null;
      },
    },
  });
});
afterEach(() => server.close());

const enterpriseClient = () =>
  server.oauth.registerOperatorClient({
    name: 'Chat for Work',
    grantTypes: [JWT_BEARER_GRANT],
    scope: ['fakture:read'],
  });

function mint(idp: EnterpriseIdp, clientId: string, claims: Record<string, unknown>) {
  const now = Math.floor(server.clock.now() / 1000);
  return idp.mint({
    sub: 'someone-else',
    aud: ISSUER,
    client_id: clientId,
    resource: RESOURCE,
    iat: now,
    exp: now + 120,
    ...claims,
  });
}

async function exchange(idp: EnterpriseIdp, claims: Record<string, unknown>) {
  const client = await enterpriseClient();
  return request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .auth(client.clientId, client.clientSecret ?? '')
    .send({ grant_type: JWT_BEARER_GRANT, assertion: mint(idp, client.clientId, claims) });
}

const subjectOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sub as string;
const refusals = () => events.filter((event) => event.type === 'id_jag.refused');

describe('refused: a trusted IdP naming a user it does not speak for', () => {
  test.each<[string, () => EnterpriseIdp, Record<string, unknown>, string]>([
    [
      "an unverified email names Bob (email_verified false): the attack's own ID-JAG",
      () => corporate,
      { email: 'bob@example.com', email_verified: false },
      'unverified_email',
    ],
    ['email_verified absent', () => corporate, { email: 'bob@example.com' }, 'unverified_email'],
    [
      'email_verified the string "true" (OpenID Connect Core §5.1: a boolean)',
      () => corporate,
      { email: 'bob@example.com', email_verified: 'true' },
      'unverified_email',
    ],
    ['email_verified 1', () => partner, { email: 'bob@example.com', email_verified: 1 }, 'unverified_email'],
    [
      'the partner IdP is unrestricted, but still needs a verified email for Bob',
      () => partner,
      { email: 'bob@example.com', email_verified: null },
      'unverified_email',
    ],
    [
      "a verified email outside the IdP's domains: the corporate IdP naming the partner's Alice",
      () => corporate,
      { email: 'alice@partner.example', email_verified: true },
      'email_domain',
    ],
    [
      'a subdomain is another domain',
      () => corporate,
      { email: 'bob@mail.example.com', email_verified: true },
      'email_domain',
    ],
    [
      'a look-alike domain ending in the allowed one',
      () => corporate,
      { email: 'bob@evilexample.com', email_verified: true },
      'email_domain',
    ],
    [
      'a Kelvin sign (U+212A), which PostgreSQL folds to "k", standing for kelvin@example.com',
      () => corporate,
      { email: '\u212aelvin@example.com', email_verified: true },
      'malformed_email',
    ],
    [
      'a fullwidth letter NFKC turns into ASCII',
      () => partner,
      { email: '\uff42ob@example.com', email_verified: true },
      'malformed_email',
    ],
    [
      'an address with a NUL in it',
      () => partner,
      { email: 'bob@example.com\u0000', email_verified: true },
      'malformed_email',
    ],
    [
      'an email that is no string',
      () => partner,
      { email: ['bob@example.com'], email_verified: true },
      'malformed_email',
    ],
    ['no email and no link', () => partner, { email_verified: true }, 'no_account'],
    [
      'a verified email of nobody here',
      () => partner,
      { email: 'stranger@example.net', email_verified: true },
      'no_account',
    ],
  ])('%s', async (_name, idp, claims, reason) => {
    const res = await exchange(idp(), claims);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    expect(refusals()).toEqual([
      expect.objectContaining({
        reason,
        clientId: expect.any(String),
        detail: expect.stringContaining(`iss "${idp().issuer}", sub "someone-else"`),
      }),
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'token.refused', reason: 'invalid_grant' });
    // The link is always asked first; the host's email lookup only for an address that passed every rule.
    expect(asked.linked).toEqual([{ iss: idp().issuer, sub: 'someone-else' }]);
    if (reason !== 'no_account') expect(asked.byEmail).toEqual([]);
  });
});

describe('accepted', () => {
  test.each([
    [
      'a verified email within the IdP’s domains, in any case',
      () => corporate,
      'BOB@Example.COM',
      'user-bob',
    ],
    ['a verified email at the unrestricted IdP', () => partner, 'alice@partner.example', 'user-alice'],
  ])('%s', async (_name, idp, email, userId) => {
    const res = await exchange(idp(), { email, email_verified: true });
    expect(res.status).toBe(200);
    expect(subjectOf(res.body.access_token)).toBe(userId);
    expect(refusals()).toEqual([]);
  });

  test('a link to (iss, sub) names its user whatever the email says, and the email is never looked up', async () => {
    links.set(`${partner.issuer} someone-else`, 'user-alice');
    // An unverified email of another user beside the link: the link decides.
    const res = await exchange(partner, { email: 'bob@example.com', email_verified: false, tenant: 't1' });
    expect(res.status).toBe(200);
    expect(subjectOf(res.body.access_token)).toBe('user-alice');
    expect(asked).toEqual({
      linked: [{ iss: partner.issuer, sub: 'someone-else', tenant: 't1' }],
      byEmail: [],
    });
  });

  test("a link is per issuer: the same sub at the other IdP is another person, held to that IdP's rules", async () => {
    links.set(`${partner.issuer} someone-else`, 'user-alice');
    const res = await exchange(corporate, { email: 'alice@partner.example', email_verified: true });
    expect(res.body.error).toBe('invalid_grant');
    expect(refusals()).toEqual([expect.objectContaining({ reason: 'email_domain' })]);
  });

  test('a link or a lookup that names the client itself is no user (its token would act as the client)', async () => {
    const client = await enterpriseClient();
    links.set(`${partner.issuer} someone-else`, client.clientId);
    const res = await request(server.app)
      .post('/v1/oauth/token')
      .type('form')
      .auth(client.clientId, client.clientSecret ?? '')
      .send({ grant_type: JWT_BEARER_GRANT, assertion: mint(partner, client.clientId, {}) });
    expect(res.body.error).toBe('invalid_grant');
    expect(refusals()).toEqual([expect.objectContaining({ reason: 'no_account' })]);
  });
});
