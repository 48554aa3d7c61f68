// Audit events (onEvent): one per thing that matters, with ids, address and request id, never a secret; an onEvent
// that fails never fails the request; refused requests are reported once per key and window.
import express from 'express';
import request from 'supertest';
import type { OAuthEvent } from '../../lib';
import { MINUTE } from '../helpers/clock';
import { waitUntil } from '../helpers/wait';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  formOf,
  obtainTokens,
  registerClient,
  tokenRequest,
  USER,
  type TestServer,
} from '../helpers/oauth-app';

let server: TestServer;
let events: OAuthEvent[];
const open = (options: Parameters<typeof createTestServer>[0] = {}) => {
  events = [];
  server = createTestServer({ onEvent: (event) => void events.push(event), ...options });
};
afterEach(() => server.close());
const types = () => events.map((event) => event.type);
const refresh = (client: Parameters<typeof tokenRequest>[1], token: string) =>
  tokenRequest(server.app, client, { grant_type: 'refresh_token', refresh_token: token });

test('a whole journey, in order, each event with the ids it concerns and the request it came with', async () => {
  open();
  const { client, tokens } = await obtainTokens(server);
  const grantId = JSON.parse(
    Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString(),
  ).grant_id;
  await refresh(client, tokens.refresh_token);
  await request(server.app).post('/v1/oauth/revoke').send({ token: tokens.access_token });
  expect(types()).toEqual([
    'client.registered',
    'sign_in.succeeded',
    'consent.granted',
    'code.issued',
    'code.redeemed',
    'token.refreshed',
    'grant.revoked',
  ]);
  const ids = { clientId: client.client_id, userId: USER.id, grantId };
  expect(events[0]).toMatchObject({ clientId: client.client_id });
  expect(events[1]).toMatchObject({ clientId: client.client_id, userId: USER.id });
  expect(events[2]).toMatchObject({ ...ids, scopes: ['fakture:read', 'clients:read'] });
  expect(events[4]).toMatchObject(ids);
  expect(events[5]).toMatchObject({ ...ids, scopes: ['fakture:read', 'clients:read'] });
  expect(events[6]).toMatchObject({ grantId, clientId: client.client_id, by: 'client' });
  for (const event of events) {
    expect(event.time).toBe(server.clock.now());
    expect(event.address).toMatch(/127\.0\.0\.1/);
    expect(event.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.isFrozen(event)).toBe(true);
  }
  // One request, one id: the consent's two events share theirs; different requests do not.
  expect(events[2]!.requestId).toBe(events[3]!.requestId);
  expect(new Set(events.map((event) => event.requestId)).size).toBe(events.length - 1);
  // Nothing secret in any event: no token, code, client secret or password.
  const text = JSON.stringify(events);
  for (const secret of [tokens.access_token, tokens.refresh_token, client.client_secret!, USER.password]) {
    expect(text).not.toContain(secret);
  }
});

test('the host app’s request id (req.id, as pino-http sets it) is used', async () => {
  open();
  const app = server.app;
  const withId = express();
  withId.use((req, _res, next) => {
    (req as unknown as { id: string }).id = 'req-42';
    next();
  });
  withId.use(app);
  await request(withId)
    .post('/v1/oauth/register')
    .send({ redirect_uris: ['https://client.example/callback'] });
  expect(events).toEqual([expect.objectContaining({ type: 'client.registered', requestId: 'req-42' })]);
});

test('sign-in failure, consent denied, and a rate-limited sign-in', async () => {
  open({ rateLimits: { signIn: { limit: 1 } } });
  const client = await registerClient(server.app);
  const browser = request.agent(server.app);
  const page = await browser.get(`/v1/oauth/authorize?${authorizeQuery(client).query}`);
  const form = formOf(page.text);
  for (let i = 0; i < 5; i += 1) {
    await browser
      .post(form.action)
      .type('form')
      .send({ ...form.fields, email: USER.email, password: 'wrong' });
  }
  // One failure, then four refusals: reported once for the window (the limit bounds the audit trail's writes too).
  expect(types().slice(1)).toEqual(['sign_in.failed', 'sign_in.rate_limited']);
  expect(events[1]).toMatchObject({ clientId: client.client_id, reason: 'bad_credentials' });
  expect(events[1]!.userId).toBeUndefined();
  expect(events[2]).toMatchObject({ limit: 'signIn', count: 1 });
  events.length = 0;
  server.close();
  open();
  const other = await registerClient(server.app);
  await authorizeInBrowser(server.app, other, {}, 'deny');
  expect(types()).toEqual(['client.registered', 'sign_in.succeeded', 'consent.denied']);
  expect(events[2]).toMatchObject({ clientId: other.client_id, userId: USER.id });
});

test.each([
  ['a code used twice', 'replay'],
  ['a code with a wrong verifier', 'pkce_mismatch'],
] as const)('%s: code.replayed, with why', async (_name, reason) => {
  open();
  const client = await registerClient(server.app);
  const { code, pkce } = await authorizeInBrowser(server.app, client);
  const exchange = (verifier: string) =>
    tokenRequest(server.app, client, {
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: client.redirect_uris[0]!,
      code_verifier: verifier,
    });
  if (reason === 'replay') await exchange(pkce.verifier);
  await exchange(reason === 'replay' ? pkce.verifier : 'x'.repeat(43));
  // What happened to the grant, then the refusal the client saw.
  expect(types().slice(-2)).toEqual(['code.replayed', 'token.refused']);
  expect(events.at(-2)).toMatchObject({ clientId: client.client_id, userId: USER.id, reason });
  expect(events.at(-1)).toMatchObject({ reason: 'invalid_grant', grantType: 'authorization_code' });
});

test('refresh reuse: refresh_token.reused (the grant is revoked), not a second grant.revoked', async () => {
  open({ refreshTokenReuse: { window: 0, untilSuccessorUsed: false } });
  const { client, tokens } = await obtainTokens(server);
  const usedAt = server.clock.now();
  await refresh(client, tokens.refresh_token);
  server.clock.advance(1);
  expect((await refresh(client, tokens.refresh_token)).status).toBe(400);
  expect(types().slice(-3)).toEqual(['token.refreshed', 'refresh_token.reused', 'token.refused']);
  expect(events.at(-2)).toMatchObject({
    clientId: client.client_id,
    reason: 'after_window',
    firstUsedAt: usedAt,
  });
});

test('a token presented again within the window: token.refreshed says when it was first used', async () => {
  open();
  const { client, tokens } = await obtainTokens(server);
  const usedAt = server.clock.now();
  await refresh(client, tokens.refresh_token);
  expect(events.at(-1)).not.toHaveProperty('firstUsedAt');
  server.clock.advance(3 * 3600_000);
  expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
  expect(events.at(-1)).toMatchObject({ type: 'token.refreshed', firstUsedAt: usedAt });
});

test('a refused token request: token.refused with the error code and the grant type', async () => {
  open();
  const { client } = await obtainTokens(server);
  await refresh(client, 'not-a-token');
  await tokenRequest(server.app, client, { grant_type: 'password' });
  expect(events.slice(-2)).toEqual([
    expect.objectContaining({ type: 'token.refused', reason: 'invalid_grant', grantType: 'refresh_token' }),
    expect.objectContaining({ type: 'token.refused', reason: 'unsupported_grant_type' }),
  ]);
  expect(events.at(-1)!.grantType).toBeUndefined();
});

test('a repeated grant_type is refused and still reported as token.refused (the report reads it without throwing)', async () => {
  open();
  const { client } = await obtainTokens(server);
  const res = await request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .auth(client.client_id, client.client_secret!)
    .send('grant_type=refresh_token&grant_type=refresh_token');
  expect(res.body.error).toBe('invalid_request');
  expect(events.at(-1)).toMatchObject({ type: 'token.refused', reason: 'invalid_request' });
  expect(events.at(-1)!.grantType).toBeUndefined();
});

test('revocation by the user or an administrator through oauth.revokeGrant, once', async () => {
  open();
  const { tokens } = await obtainTokens(server);
  const grantId = JSON.parse(
    Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString(),
  ).grant_id;
  expect(await server.oauth.revokeGrant(grantId, { by: 'user', userId: USER.id })).toBe(true);
  expect(await server.oauth.revokeGrant(grantId)).toBe(false);
  expect(events.filter((event) => event.type === 'grant.revoked')).toEqual([
    expect.objectContaining({ grantId, by: 'user', userId: USER.id }),
  ]);
  const second = await obtainTokens(server);
  const otherGrant = JSON.parse(
    Buffer.from(second.tokens.access_token.split('.')[1]!, 'base64url').toString(),
  ).grant_id;
  await server.oauth.revokeGrant(otherGrant);
  expect(events.at(-1)).toMatchObject({ type: 'grant.revoked', grantId: otherGrant, by: 'admin' });
  expect(events.at(-1)!.requestId).toBeUndefined();
});

test('introspection and a rate limit hit', async () => {
  open({ rateLimits: { introspect: { limit: 1 } } });
  const { client, tokens } = await obtainTokens(server);
  await tokenRequest(server.app, client, { token: tokens.access_token }, '/v1/oauth/introspect');
  await tokenRequest(server.app, client, { token: tokens.access_token }, '/v1/oauth/introspect');
  expect(types().slice(-2)).toEqual(['token.introspected', 'rate_limit.hit']);
  expect(events.at(-2)).toMatchObject({
    clientId: client.client_id,
    active: true,
    tokenType: 'access_token',
  });
  expect(events.at(-1)).toMatchObject({ limit: 'introspect' });
});

test('a flood of refused requests is one event per address and window, with how many it stands for', async () => {
  open({ rateLimits: { register: { limit: 1, windowMs: 15 * MINUTE } } });
  const register = () =>
    request(server.app)
      .post('/v1/oauth/register')
      .send({ redirect_uris: ['https://client.example/cb'] });
  const hits = () => events.filter((event) => event.type === 'rate_limit.hit');
  expect((await register()).status).toBe(201);
  for (let i = 0; i < 30; i += 1) {
    const refused = await register();
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('too_many_requests');
  }
  expect(hits()).toEqual([expect.objectContaining({ limit: 'register', count: 1 })]);
  // The next window of this router's clock (the store still refuses: its own window runs on real time): the 29
  // refusals held back are counted into the next event.
  server.clock.advance(15 * MINUTE);
  expect((await register()).status).toBe(429);
  expect(hits()).toHaveLength(2);
  expect(hits()[1]).toMatchObject({ limit: 'register', count: 30 });
});

test.each([
  [
    'throws',
    () => {
      throw new Error('audit sink down');
    },
  ],
  ['rejects', () => Promise.reject(new Error('audit sink down'))],
])('an onEvent that %s does not fail the request; onError hears of it', async (_name, onEvent) => {
  const errors: unknown[] = [];
  open({ onEvent, onError: (error) => void errors.push(error) });
  const res = await request(server.app)
    .post('/v1/oauth/register')
    .send({ redirect_uris: ['https://client.example/cb'] });
  expect(res.status).toBe(201);
  // A rejection is heard of when it settles, which the response need not wait for.
  await waitUntil(() => errors.length > 0, 5_000, 'onError hearing of the failed onEvent');
  expect(errors).toEqual([expect.objectContaining({ message: 'audit sink down' })]);
});

test('onEvent must be a function', () => {
  expect(() => createTestServer({ onEvent: 'log' as never })).toThrow(/onEvent must be a function/);
});
