// Token exchange (RFC 8693) at the token endpoint: an operator's client trades a user's live access token for one
// meant for a single downstream API. The success path end to end (the downstream route of the same app takes the
// token, /mcp refuses it), then the refusals table-driven, each named after the clause that asks for it.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import type { OAuthEvent } from '../../lib/events';
import type { AuthenticatedRequest } from '../../lib/middleware/bearer';
import type { OAuthRouterOptions } from '../../lib/options';
import type { TokenExchangeOptions } from '../../lib/token-exchange/options';
import { claimsOf, createDpopKey } from '../helpers/dpop';
import {
  createTestServer,
  ISSUER,
  obtainTokens,
  registerClient,
  RESOURCE,
  tokenRequest,
  USER,
  type TestServer,
} from '../helpers/oauth-app';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const RENDERER = 'https://renderer.example/api';
const BANK = 'https://bank.example';
const USER_SCOPE = 'fakture:read clients:read dokument:read';

let server: TestServer;
let events: OAuthEvent[];

function start(exchange: Partial<TokenExchangeOptions> = {}, extra: Partial<OAuthRouterOptions> = {}) {
  events = [];
  server = createTestServer({
    onEvent: (event) => void events.push(event),
    tokenExchange: { resources: [RENDERER, { resource: BANK, scopes: ['clients:read'] }], ...exchange },
    resourceServers: { 'renderer-gateway': [RENDERER] },
    ...extra,
  });
  // The downstream API, served by the same app as a downstream API of one's own would be.
  server.app.get('/renderer', server.oauth.requireBearer({ resource: RENDERER }), (req, res) => {
    res.json({ auth: (req as AuthenticatedRequest).auth });
  });
}
beforeEach(() => start());
afterEach(() => server.close());

const exchanger = (
  grantTypes: Parameters<typeof server.oauth.registerOperatorClient>[0]['grantTypes'] = [TOKEN_EXCHANGE],
  scope?: string[],
) =>
  server.oauth.registerOperatorClient({
    name: 'Document gateway',
    grantTypes,
    ...(scope ? { scope } : {}),
  });

const userToken = async (scope = USER_SCOPE) => (await obtainTokens(server, {}, { scope })).tokens;

const exchange = (
  client: { clientId: string; clientSecret?: string },
  body: Record<string, string | string[] | undefined>,
  headers: Record<string, string> = {},
) => {
  // Valid parameters, each replaced or (undefined) left out by the test.
  const all = { grant_type: TOKEN_EXCHANGE, subject_token_type: ACCESS_TOKEN, resource: RENDERER, ...body };
  const fields = Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined));
  return request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .set(headers)
    .auth(client.clientId, client.clientSecret ?? '')
    .send(fields);
};

describe('an exchange', () => {
  test('gives a token for the downstream resource alone, naming the user and the acting client (§2.2.1, §4.1)', async () => {
    const client = await exchanger();
    const subject = await userToken();
    const res = await exchange(client, { subject_token: subject.access_token, scope: 'dokument:read' });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    // §2.2.1: issued_token_type is required; no refresh token is issued for an exchange.
    expect(res.body).toEqual({
      access_token: expect.any(String),
      issued_token_type: ACCESS_TOKEN,
      token_type: 'Bearer',
      expires_in: expect.any(Number),
      scope: 'dokument:read',
    });
    const claims = claimsOf(res.body.access_token);
    const subjectClaims = claimsOf(subject.access_token);
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: RENDERER,
      sub: USER.id,
      client_id: client.clientId,
      scope: 'dokument:read',
      act: { sub: client.clientId },
      grant_id: subjectClaims.grant_id,
    });
    expect(claims.exp).toBeLessThanOrEqual(subjectClaims.exp as number);
    // A bearer token's event names no key.
    expect(Object.keys(events.find((event) => event.type === 'token.exchanged')!)).not.toContain('jkt');
    expect(events.filter((event) => event.type === 'token.exchanged')).toEqual([
      expect.objectContaining({
        clientId: client.clientId,
        userId: USER.id,
        grantId: subjectClaims.grant_id,
        scopes: ['dokument:read'],
        resource: RENDERER,
        actor: client.clientId,
        grantType: TOKEN_EXCHANGE,
      }),
    ]);
  });

  test('the exchanged token is taken by the downstream route and never by /mcp', async () => {
    const client = await exchanger();
    const subject = await userToken();
    const { body } = await exchange(client, { subject_token: subject.access_token });
    const downstream = await request(server.app)
      .get('/renderer')
      .set('Authorization', `Bearer ${body.access_token}`);
    expect(downstream.status).toBe(200);
    expect(downstream.body.auth).toMatchObject({
      actor: 'user',
      userId: USER.id,
      clientId: client.clientId,
      act: { sub: client.clientId },
    });
    const mcp = await request(server.app).post('/mcp').set('Authorization', `Bearer ${body.access_token}`);
    expect(mcp.status).toBe(401);
    expect(mcp.body.error).toBe('invalid_token');
    // Nor does the user's own token pass downstream.
    const own = await request(server.app)
      .get('/renderer')
      .set('Authorization', `Bearer ${subject.access_token}`);
    expect(own.status).toBe(401);
  });

  test('without a scope, all the subject token carries, within the resource’s ceiling', async () => {
    const client = await exchanger();
    const subject = await userToken();
    const all = await exchange(client, { subject_token: subject.access_token });
    expect(all.body.scope).toBe(USER_SCOPE);
    const bank = await exchange(client, { subject_token: subject.access_token, resource: BANK });
    expect(bank.body.scope).toBe('clients:read');
    expect(claimsOf(bank.body.access_token).aud).toBe(BANK);
  });

  test('audience names the target as resource does, and a trailing slash is the same resource (RFC 8707 §2)', async () => {
    const client = await exchanger();
    const subject = await userToken();
    for (const target of [
      { audience: RENDERER, resource: undefined },
      { resource: `${RENDERER}/` },
      { resource: `${RENDERER}/`, audience: RENDERER },
      { resource: RENDERER, audience: `${RENDERER}//` },
      { resource: `${RENDERER}//`, audience: `${RENDERER}/` },
    ]) {
      const res = await exchange(client, { subject_token: subject.access_token, ...target });
      expect(res.status).toBe(200);
      expect(claimsOf(res.body.access_token).aud).toBe(RENDERER);
    }
  });

  test.each([ACCESS_TOKEN, 'urn:ietf:params:oauth:token-type:jwt'])(
    'a requested_token_type of %s is what it gets (§2.1)',
    async (requested) => {
      const client = await exchanger();
      const subject = await userToken();
      const res = await exchange(client, {
        subject_token: subject.access_token,
        requested_token_type: requested,
      });
      expect(res.status).toBe(200);
      expect(res.body.issued_token_type).toBe(ACCESS_TOKEN);
    },
  );

  test('expires no later than the subject token, and at most maxLifetimeSeconds', async () => {
    server.close();
    start({ maxLifetimeSeconds: 600 });
    const client = await exchanger();
    const subject = await userToken();
    expect((await exchange(client, { subject_token: subject.access_token })).body.expires_in).toBe(600);
    server.clock.advance(3300 * 1000);
    const late = await exchange(client, { subject_token: subject.access_token });
    expect(late.body.expires_in).toBe(300);
    expect(claimsOf(late.body.access_token).exp).toBe(claimsOf(subject.access_token).exp);
  });

  test('an exchanged token exchanged again nests the actors, the latest outermost (§4.1)', async () => {
    const first = await exchanger();
    const second = await exchanger();
    const subject = await userToken();
    const once = await exchange(first, { subject_token: subject.access_token });
    const twice = await exchange(second, {
      subject_token: once.body.access_token,
      resource: BANK,
      scope: 'clients:read',
    });
    expect(twice.status).toBe(200);
    expect(claimsOf(twice.body.access_token).act).toEqual({
      sub: second.clientId,
      act: { sub: first.clientId },
    });
  });

  test('a DPoP proof binds the exchanged token to its key (RFC 9449 §5)', async () => {
    const client = await exchanger();
    const subject = await userToken();
    const key = createDpopKey();
    const res = await exchange(
      client,
      { subject_token: subject.access_token },
      { DPoP: key.proof(server.clock.now(), { htu: `${ISSUER}/v1/oauth/token` }) },
    );
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
    expect(events.find((event) => event.type === 'token.exchanged')).toMatchObject({ jkt: key.jkt });
    // Bound: without a proof of that key it is worth nothing downstream.
    const bearer = await request(server.app)
      .get('/renderer')
      .set('Authorization', `Bearer ${res.body.access_token}`);
    expect(bearer.status).toBe(401);
  });

  test('is listed in grant_types_supported (RFC 8414 §2), and not without the option', async () => {
    const metadata = await request(server.app).get('/.well-known/oauth-authorization-server');
    expect(metadata.body.grant_types_supported).toContain(TOKEN_EXCHANGE);
    server.close();
    events = [];
    server = createTestServer({});
    const without = await request(server.app).get('/.well-known/oauth-authorization-server');
    expect(without.body.grant_types_supported).not.toContain(TOKEN_EXCHANGE);
  });
});

describe('the user’s grant governs the exchanged tokens', () => {
  test('revoking the user’s grant ends them at introspection and downstream', async () => {
    const client = await exchanger();
    const subject = await userToken();
    const { body } = await exchange(client, { subject_token: subject.access_token });
    const introspect = () =>
      request(server.app)
        .post('/v1/oauth/introspect')
        .type('form')
        .auth(client.clientId, client.clientSecret!)
        .send({ token: body.access_token });
    const live = await introspect();
    expect(live.body).toMatchObject({
      active: true,
      aud: RENDERER,
      sub: USER.id,
      client_id: client.clientId,
      act: { sub: client.clientId },
    });
    await server.oauth.revokeGrant(claimsOf(subject.access_token).grant_id as string);
    expect((await introspect()).body).toEqual({ active: false });
    const downstream = await request(server.app)
      .get('/renderer')
      .set('Authorization', `Bearer ${body.access_token}`);
    expect(downstream.status).toBe(401);
    // And no new exchange from the dead subject token.
    const again = await exchange(client, { subject_token: subject.access_token });
    expect(again.body.error).toBe('invalid_grant');
  });

  test('its holder cannot revoke the user’s grant with it: unsupported_token_type (RFC 7009 §2.2.1)', async () => {
    const client = await exchanger();
    const subject = await userToken();
    const { body } = await exchange(client, { subject_token: subject.access_token });
    const revoke = await request(server.app)
      .post('/v1/oauth/revoke')
      .type('form')
      .send({ token: body.access_token });
    expect(revoke.status).toBe(400);
    expect(revoke.body.error).toBe('unsupported_token_type');
    const mcp = await request(server.app).post('/mcp').set('Authorization', `Bearer ${subject.access_token}`);
    expect(mcp.status).toBe(200);
  });
});

// A token signed by a key this server does not have, with the claims of a real one.
const forged = (claims: Record<string, unknown>) => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return jwt.sign({ ...claims, jti: randomUUID() }, privateKey, {
    algorithm: 'ES256',
    header: { alg: 'ES256', typ: 'at+jwt', kid: 'not-ours' },
  });
};

type Setup = {
  client: { clientId: string; clientSecret?: string };
  subject: { access_token: string; refresh_token: string };
};
type Body = Record<string, string | string[] | undefined>;
const DEAD = /^The subject_token is not a live access token of this server\.$/;
// Each refusal, named after its clause: the error, what the client is told, and the request that earns it.
const refusals: [string, string, RegExp, (setup: Setup) => Body][] = [
  [
    'RFC 8707 §2: a resource not listed',
    'invalid_target',
    /^Tokens cannot be exchanged for "https:\/\/elsewhere.example\/api": it is not a downstream resource/,
    ({ subject }) => ({ subject_token: subject.access_token, resource: 'https://elsewhere.example/api' }),
  ],
  [
    'RFC 8707 §2: a resource that is no URL',
    'invalid_target',
    /^Tokens cannot be exchanged for "renderer"/,
    ({ subject }) => ({ subject_token: subject.access_token, resource: 'renderer' }),
  ],
  [
    'RFC 8707 §2: no resource at all',
    'invalid_target',
    /^Name the downstream resource with the resource parameter\.$/,
    ({ subject }) => ({ subject_token: subject.access_token, resource: undefined }),
  ],
  [
    'RFC 8707 §2: the server’s own resource',
    'invalid_target',
    /^Tokens cannot be exchanged for "http:\/\/127.0.0.1:4000\/mcp"/,
    ({ subject }) => ({ subject_token: subject.access_token, resource: RESOURCE }),
  ],
  [
    'RFC 8693 §2.1: two resources',
    'invalid_target',
    /^Name one downstream resource per exchange\.$/,
    ({ subject }) => ({ subject_token: subject.access_token, resource: [RENDERER, BANK] }),
  ],
  [
    'RFC 8693 §2.1: two audiences',
    'invalid_target',
    /^Name one downstream resource per exchange\.$/,
    ({ subject }) => ({
      subject_token: subject.access_token,
      resource: undefined,
      audience: [RENDERER, BANK],
    }),
  ],
  [
    'RFC 8693 §2.1: resource and audience naming two targets',
    'invalid_target',
    /^resource and audience name different targets; name one\.$/,
    ({ subject }) => ({ subject_token: subject.access_token, audience: BANK }),
  ],
  [
    'RFC 8693 §2.1, RFC 6749 §3.3: a scope wider than the subject token’s',
    'invalid_scope',
    /^The scope "fakture:write" is not available/,
    ({ subject }) => ({ subject_token: subject.access_token, scope: 'fakture:read fakture:write' }),
  ],
  [
    'RFC 6749 §3.3: a scope beyond the resource’s ceiling',
    'invalid_scope',
    /^The scope "fakture:read" is not available/,
    ({ subject }) => ({ subject_token: subject.access_token, resource: BANK, scope: 'fakture:read' }),
  ],
  [
    'RFC 8693 §2.1: a forged subject token',
    'invalid_grant',
    DEAD,
    ({ subject }) => ({ subject_token: forged(claimsOf(subject.access_token)) }),
  ],
  [
    'RFC 8693 §2.1: a refresh token as subject token',
    'invalid_grant',
    DEAD,
    ({ subject }) => ({ subject_token: subject.refresh_token }),
  ],
  [
    'RFC 8693 §2.1: a subject token that is no token',
    'invalid_grant',
    DEAD,
    () => ({ subject_token: 'not-a-token' }),
  ],
  [
    'RFC 8693 §2.1: subject_token missing',
    'invalid_request',
    /^The subject_token parameter is required\.$/,
    () => ({ subject_token: undefined }),
  ],
  [
    'RFC 8693 §3: a subject_token_type other than access_token',
    'invalid_request',
    /^subject_token_type must be urn:ietf:params:oauth:token-type:access_token\.$/,
    ({ subject }) => ({
      subject_token: subject.access_token,
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
    }),
  ],
  [
    'RFC 8693 §2.1: an actor_token (the client is the actor)',
    'invalid_request',
    /^actor_token is not supported: the authenticated client is the actor\.$/,
    ({ subject }) => ({ subject_token: subject.access_token, actor_token: subject.access_token }),
  ],
  [
    'RFC 8693 §2.1: an actor_token_type alone',
    'invalid_request',
    /^actor_token is not supported/,
    ({ subject }) => ({ subject_token: subject.access_token, actor_token_type: ACCESS_TOKEN }),
  ],
  [
    'RFC 8693 §2.1: a requested_token_type this server does not issue',
    'invalid_request',
    /^requested_token_type must be urn:ietf:params:oauth:token-type:access_token\.$/,
    ({ subject }) => ({
      subject_token: subject.access_token,
      requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
    }),
  ],
];

describe('refused', () => {
  test.each(refusals)('%s: %s', async (_clause, error, description, body) => {
    const client = await exchanger();
    const subject = await userToken();
    const res = await exchange(client, body({ client, subject }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error, error_description: expect.stringMatching(description) });
    expect(events.filter((event) => event.type === 'token.exchanged')).toEqual([]);
    expect(events.filter((event) => event.type === 'token.refused').at(-1)).toMatchObject({
      reason: error,
      grantType: TOKEN_EXCHANGE,
    });
  });

  test('RFC 8693 §2.1: an expired subject token is invalid_grant, by this server’s clock, from its exp on', async () => {
    const client = await exchanger();
    const subject = await userToken();
    // The signer tolerates 5 s of skew; the exchange does not.
    server.clock.set((claimsOf(subject.access_token).exp as number) * 1000 - 1000);
    expect((await exchange(client, { subject_token: subject.access_token })).body.expires_in).toBe(1);
    server.clock.advance(1000);
    const res = await exchange(client, { subject_token: subject.access_token });
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'The subject_token has expired.' });
  });

  test('RFC 8693 §2.1: a subject token of a revoked grant is invalid_grant, saying so', async () => {
    const client = await exchanger();
    const subject = await userToken();
    await server.oauth.revokeGrant(claimsOf(subject.access_token).grant_id as string);
    const res = await exchange(client, { subject_token: subject.access_token });
    expect(res.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The subject_token belongs to an authorization that has ended.',
    });
  });

  test('RFC 8693 §1.1 (acting for a subject): a client’s own token names no user, so it is invalid_grant', async () => {
    const client = await exchanger();
    const machine = await exchanger(['client_credentials']);
    const own = await request(server.app)
      .post('/v1/oauth/token')
      .type('form')
      .auth(machine.clientId, machine.clientSecret!)
      .send({ grant_type: 'client_credentials' });
    const res = await exchange(client, { subject_token: own.body.access_token });
    expect(res.body).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringMatching(/acts for no user/),
    });
  });

  test('RFC 6749 §5.2: a client not registered for the grant is unauthorized_client', async () => {
    const machine = await exchanger(['client_credentials']);
    const subject = await userToken();
    const res = await exchange(machine, { subject_token: subject.access_token });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unauthorized_client');
  });

  test('RFC 7591: dynamic registration cannot ask for the grant', async () => {
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .send({
        client_name: 'x',
        redirect_uris: ['https://client.example/cb'],
        grant_types: [TOKEN_EXCHANGE],
      });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });

  test('a public client cannot exchange, even naming its client_id', async () => {
    const publicClient = await registerClient(server.app, { token_endpoint_auth_method: 'none' });
    const subject = await userToken();
    const res = await tokenRequest(server.app, publicClient, {
      grant_type: TOKEN_EXCHANGE,
      subject_token: subject.access_token,
      subject_token_type: ACCESS_TOKEN,
      resource: RENDERER,
    });
    expect(res.body.error).toBe('unauthorized_client');
  });

  test('the exchanging client’s own scope bounds the exchange (only narrowing)', async () => {
    const client = await exchanger([TOKEN_EXCHANGE], ['dokument:read']);
    const subject = await userToken();
    expect((await exchange(client, { subject_token: subject.access_token })).body.scope).toBe(
      'dokument:read',
    );
    const wider = await exchange(client, { subject_token: subject.access_token, scope: 'fakture:read' });
    expect(wider.body.error).toBe('invalid_scope');
  });

  test('without the option the grant is unsupported_grant_type', async () => {
    server.close();
    events = [];
    server = createTestServer({});
    const client = await exchanger(['client_credentials']);
    const res = await exchange(client, { subject_token: 'x' });
    expect(res.body.error).toBe('unsupported_grant_type');
  });
});

describe('the policy hook', () => {
  const NOT_ALLOWED = 'This exchange is not allowed for that resource.';
  const CODES = ['invalid_target', 'invalid_scope', 'invalid_grant', 'unauthorized_client'] as const;
  const policies: [string, (...args: never[]) => unknown, string, string][] = [
    ['false refuses with invalid_target', () => false, 'invalid_target', NOT_ALLOWED],
    ...CODES.map((code): [string, () => unknown, string, string] => [
      `a refusal with ${code} answers with it`,
      () => ({ error: code, description: 'Not you.' }),
      code,
      'Not you.',
    ]),
    [
      'a refusal without words gets some',
      () => ({ error: 'invalid_grant' }),
      'invalid_grant',
      'This exchange is not allowed.',
    ],
    [
      'a refusal whose words are no string gets some',
      () => ({ error: 'invalid_grant', description: 5 }),
      'invalid_grant',
      'This exchange is not allowed.',
    ],
    ['anything but true refuses (fails closed)', () => undefined, 'invalid_target', NOT_ALLOWED],
    ['a truthy value that is not true refuses', () => 'yes', 'invalid_target', NOT_ALLOWED],
    ['null refuses', () => null, 'invalid_target', NOT_ALLOWED],
    [
      'an unknown code refuses with invalid_target',
      () => ({ error: 'server_error' }),
      'invalid_target',
      NOT_ALLOWED,
    ],
    ['a promise of false refuses', async () => false, 'invalid_target', NOT_ALLOWED],
  ];
  test.each(policies)('%s', async (_name, policy, error, description) => {
    server.close();
    start({ policy: policy as TokenExchangeOptions['policy'] });
    const client = await exchanger();
    const subject = await userToken();
    const res = await exchange(client, { subject_token: subject.access_token });
    expect(res.body).toEqual({ error, error_description: description });
  });

  test('true allows; so does a promise of true', async () => {
    for (const policy of [() => true, async () => true]) {
      server.close();
      start({ policy });
      const client = await exchanger();
      const subject = await userToken();
      expect((await exchange(client, { subject_token: subject.access_token })).status).toBe(200);
    }
  });

  test('sees who asks what for whom, after the built-in rules narrowed it', async () => {
    const seen: unknown[] = [];
    server.close();
    start({ policy: (request) => (seen.push(request), true) });
    const client = await exchanger();
    const subject = await userToken();
    expect((await exchange(client, { subject_token: subject.access_token, resource: BANK })).status).toBe(
      200,
    );
    expect(seen).toEqual([
      expect.objectContaining({
        actor: client.clientId,
        subject: USER.id,
        subjectClientId: claimsOf(subject.access_token).client_id,
        subjectAudience: RESOURCE,
        subjectAct: undefined,
        resource: BANK,
        scopes: ['clients:read'],
      }),
    ]);
    expect(Object.isFrozen((seen[0] as { scopes: unknown }).scopes)).toBe(true);
  });
});
