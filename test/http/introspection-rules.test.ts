// Introspection (RFC 7662) rules not covered by the per-store suite: a store whose clock lags this server's must not
// make an expired grant's refresh token active, the audience a refresh token reports, parameter pollution of the
// hint, the answer never cached by an HTTP/1.0 proxy, the refusal of a public client, and the audit event.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { OAuthEvent } from '../../lib';
import { createSqliteStore, type SqliteStore } from '../../lib/store/sqlite';
import { createFakeClock, DAY, type FakeClock } from '../helpers/clock';
import {
  ISSUER,
  mountTestApp,
  obtainTokens,
  RESOURCE,
  tokenRequest,
  type TestServer,
} from '../helpers/oauth-app';

const PATH = '/v1/oauth/introspect';
const OTHER_RESOURCE = `${ISSUER}/other`;
const CONFIDENTIAL = { token_endpoint_auth_method: 'client_secret_basic' };
const REFRESH_LIFETIME = 30 * DAY;

let dir: string;
let store: SqliteStore;
/** The server's clock; the store has a clock of its own that stays behind (another machine, a lagging database). */
let clock: FakeClock;
let server: TestServer;
let events: OAuthEvent[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-introspection-rules-'));
  clock = createFakeClock(Date.now());
  const storeClock = createFakeClock(clock.now());
  store = createSqliteStore(join(dir, 'oauth.db'), { now: storeClock.now });
  events = [];
  const mounted = mountTestApp(store, clock, {
    resources: [RESOURCE, OTHER_RESOURCE],
    onEvent: (event) => void events.push(event),
  });
  server = { ...mounted, store, clock } as unknown as TestServer;
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

type Obtained = Awaited<ReturnType<typeof obtainTokens>>;
const introspect = (caller: Obtained['client'], body: Record<string, string>) =>
  tokenRequest(server.app, caller, body, PATH);

describe('a refresh token whose grant has expired by this server’s clock', () => {
  test.each([
    ['a millisecond before the grant expires', REFRESH_LIFETIME - 1, true],
    ['the moment the grant expires', REFRESH_LIFETIME, false],
    ['a day after', REFRESH_LIFETIME + DAY, false],
  ])('clock skew with the store: %s, active is %s', async (_name, elapsed, active) => {
    const { client, tokens } = await obtainTokens(server, CONFIDENTIAL);
    clock.advance(elapsed);
    const res = await introspect(client, { token: tokens.refresh_token });
    expect(res.status).toBe(200);
    expect(res.body.active).toBe(active);
  });
});

describe('the audience a refresh token reports', () => {
  test.each([
    ['the resource it was granted for', { resource: OTHER_RESOURCE }, OTHER_RESOURCE],
    ['the first resource when none was asked for', { resource: undefined }, RESOURCE],
  ])('%s', async (_name, overrides, aud) => {
    const { client, tokens } = await obtainTokens(server, CONFIDENTIAL, overrides);
    const res = await introspect(client, { token: tokens.refresh_token });
    expect(res.body).toMatchObject({ active: true, aud });
  });
});

test('parameter pollution: a repeated token_type_hint is invalid_request, not silently picked', async () => {
  const { client, tokens } = await obtainTokens(server, CONFIDENTIAL);
  const res = await request(server.app)
    .post(PATH)
    .auth(client.client_id, client.client_secret!)
    .type('form')
    .send(`token=${tokens.access_token}&token_type_hint=access_token&token_type_hint=refresh_token`);
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('invalid_request');
});

test('the answer is never cached, by HTTP/1.1 or HTTP/1.0 caches (RFC 7662 §2.2, RFC 6749 §5.1)', async () => {
  const { client, tokens } = await obtainTokens(server, CONFIDENTIAL);
  const res = await introspect(client, { token: tokens.access_token });
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers.pragma).toBe('no-cache');
});

test('token scanning by a public client: refused as invalid_client, with what to do instead', async () => {
  const { client, tokens } = await obtainTokens(server, { token_endpoint_auth_method: 'none' });
  const res = await introspect(client, { token: tokens.access_token });
  expect(res.status).toBe(401);
  expect(res.body).toEqual({
    error: 'invalid_client',
    error_description:
      'Introspection is for confidential clients: authenticate with a client secret or a private_key_jwt assertion.',
  });
});

describe('the audit event says what the caller was told, and about which kind of token', () => {
  test.each([
    ['an access token', (t: Obtained) => t.tokens.access_token, { active: true, tokenType: 'access_token' }],
    [
      'a refresh token',
      (t: Obtained) => t.tokens.refresh_token,
      { active: true, tokenType: 'refresh_token' },
    ],
    ['an unknown string', () => 'not-a-token', { active: false }],
  ])('%s', async (_name, pick, expected) => {
    const obtained = await obtainTokens(server, CONFIDENTIAL);
    events.length = 0;
    await introspect(obtained.client, { token: pick(obtained) });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'token.introspected',
      clientId: obtained.client.client_id,
      ...expected,
    });
    if (!expected.active) expect(events[0]).not.toHaveProperty('tokenType');
  });

  test('an inactive answer about a token that exists does not tell its kind', async () => {
    const obtained = await obtainTokens(server, CONFIDENTIAL);
    clock.advance(REFRESH_LIFETIME);
    events.length = 0;
    const res = await introspect(obtained.client, { token: obtained.tokens.refresh_token });
    expect(res.body).toEqual({ active: false });
    expect(events[0]).toMatchObject({ type: 'token.introspected', active: false });
    expect(events[0]).not.toHaveProperty('tokenType');
  });
});
