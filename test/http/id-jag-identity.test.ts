// Who an ID-JAG may name (security round four): an enterprise IdP speaks only for its own users. Two real IdPs over
// loopback https, one limited to its email domains; each attack is a request a trusted IdP (or a user of one who can
// edit their own email attribute) could make, and is refused with invalid_grant and an id_jag.refused event naming the
// rule. The user the ID-JAG is about must never be asked for when the rule refuses first.
import request from 'supertest';
import type { OAuthEvent } from '../../lib/events';
import { JWT_BEARER_GRANT, type IdJagClaims, type IdJagUser } from '../../lib/id-jag/options';
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
/** What a host's findUser answers for odd@partner.example: a user record it got wrong. */
let odd: unknown;
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
        if (claims.email === 'odd@partner.example') return odd as IdJagUser;
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

/** What the client is told for each rule (RFC 6749 §5.2's error_description). */
const SAID = {
  no_account: 'The ID-JAG names no user of this service.',
  unverified_email:
    'The ID-JAG names its user by an email its identity provider has not verified (email_verified is not true).',
  email_domain: 'The identity provider may not name users of that email domain here.',
  malformed_email: 'The ID-JAG email is not an address this service can match.',
};
const NO_USER = 'no user is linked to or has its email';
const NOT_NORMALISED = 'the email claim is not an address in normalised form';

describe('refused: a trusted IdP naming a user it does not speak for', () => {
  // Each row: the attack, the IdP it comes from, its claims, the rule (the event's reason) and the event's detail.
  test.each<[string, () => EnterpriseIdp, Record<string, unknown>, keyof typeof SAID, string]>([
    [
      "an unverified email names Bob (email_verified false): the attack's own ID-JAG",
      () => corporate,
      { email: 'bob@example.com', email_verified: false },
      'unverified_email',
      'email_verified is false',
    ],
    [
      'email_verified absent',
      () => corporate,
      { email: 'bob@example.com' },
      'unverified_email',
      'email_verified is absent',
    ],
    [
      'email_verified the string "true" (OpenID Connect Core §5.1: a boolean)',
      () => corporate,
      { email: 'bob@example.com', email_verified: 'true' },
      'unverified_email',
      'email_verified is "true"',
    ],
    [
      'email_verified 1',
      () => partner,
      { email: 'bob@example.com', email_verified: 1 },
      'unverified_email',
      'email_verified is 1',
    ],
    [
      'an email_verified of 500 characters, quoted to 64',
      () => partner,
      { email: 'bob@example.com', email_verified: 'x'.repeat(500) },
      'unverified_email',
      `email_verified is "${'x'.repeat(63)} (`,
    ],
    [
      'the partner IdP is unrestricted, but still needs a verified email for Bob',
      () => partner,
      { email: 'bob@example.com', email_verified: null },
      'unverified_email',
      'email_verified is null',
    ],
    [
      "a verified email outside the IdP's domains: the corporate IdP naming the partner's Alice",
      () => corporate,
      { email: 'alice@partner.example', email_verified: true },
      'email_domain',
      'the email\'s domain "partner.example" is not one the IdP speaks for',
    ],
    [
      'a subdomain is another domain',
      () => corporate,
      { email: 'bob@mail.example.com', email_verified: true },
      'email_domain',
      'the email\'s domain "mail.example.com" is not one the IdP speaks for',
    ],
    [
      'a look-alike domain ending in the allowed one',
      () => corporate,
      { email: 'bob@evilexample.com', email_verified: true },
      'email_domain',
      'the email\'s domain "evilexample.com" is not one the IdP speaks for',
    ],
    [
      'a Kelvin sign (U+212A), which PostgreSQL folds to "k", standing for kelvin@example.com',
      () => corporate,
      { email: '\u212aelvin@example.com', email_verified: true },
      'malformed_email',
      NOT_NORMALISED,
    ],
    [
      'a fullwidth letter NFKC turns into ASCII',
      () => partner,
      { email: '\uff42ob@example.com', email_verified: true },
      'malformed_email',
      NOT_NORMALISED,
    ],
    [
      'an address with a NUL in it',
      () => partner,
      { email: 'bob@example.com\u0000', email_verified: true },
      'malformed_email',
      NOT_NORMALISED,
    ],
    [
      'an email that is no string',
      () => partner,
      { email: ['bob@example.com'], email_verified: true },
      'malformed_email',
      NOT_NORMALISED,
    ],
    ['no email and no link', () => partner, { email_verified: true }, 'no_account', NO_USER],
    [
      'a verified email of nobody here',
      () => partner,
      { email: 'stranger@example.net', email_verified: true },
      'no_account',
      NO_USER,
    ],
    [
      'a sub of 1,000 characters, quoted to 256 in the event',
      () => partner,
      { sub: 'S'.repeat(1000), email: 'stranger@example.net', email_verified: true },
      'no_account',
      NO_USER,
    ],
  ])('%s', async (_name, idp, claims, reason, detail) => {
    const res = await exchange(idp(), claims);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: SAID[reason] });
    const sub = (claims.sub as string | undefined) ?? 'someone-else';
    const [event, ...others] = refusals();
    expect(others).toEqual([]);
    expect(event).toMatchObject({ reason, clientId: expect.any(String) });
    expect(event!.detail).toContain(detail);
    expect(event!.detail).toMatch(new RegExp(`\\(iss "${idp().issuer}", sub "${sub.slice(0, 256)}"\\)$`));
    expect(events.at(-1)).toMatchObject({ type: 'token.refused', reason: 'invalid_grant' });
    // The link is always asked first; the host's email lookup only for an address that passed every rule.
    expect(asked.linked).toEqual([{ iss: idp().issuer, sub }]);
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

  test('a tenant that is not a string is not passed to the link lookup', async () => {
    links.set(`${partner.issuer} someone-else`, 'user-alice');
    const res = await exchange(partner, { tenant: 42 });
    expect(res.status).toBe(200);
    expect(asked.linked).toEqual([{ iss: partner.issuer, sub: 'someone-else' }]);
  });

  test("a link is per issuer: the same sub at the other IdP is another person, held to that IdP's rules", async () => {
    links.set(`${partner.issuer} someone-else`, 'user-alice');
    const res = await exchange(corporate, { email: 'alice@partner.example', email_verified: true });
    expect(res.body.error).toBe('invalid_grant');
    expect(refusals()).toEqual([expect.objectContaining({ reason: 'email_domain' })]);
  });

  test.each([
    ['an empty id', { id: '' }],
    ['an id that is no string', { id: 42 }],
    ['no user object', 0],
  ])('a lookup answering %s names no user', async (_name, answer) => {
    odd = answer;
    const res = await exchange(partner, { email: 'odd@partner.example', email_verified: true });
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: SAID.no_account });
    expect(refusals()).toEqual([expect.objectContaining({ reason: 'no_account' })]);
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
