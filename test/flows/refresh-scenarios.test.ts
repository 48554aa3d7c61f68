// How refresh-token rotation meets real clients (RFC 9700 §4.14.2), through the real token endpoint on the fake
// clock: the patterns that used to cost every session its grant (several processes sharing one stored token, racing
// refreshes from two egress addresses, a retry days later with a token already rotated), and the theft the rule
// must still catch. Each scenario runs under the default policy and under 'strict', and says which survives; the
// table in README ("Refresh tokens") is this one.
import express from 'express';
import request from 'supertest';
import type { OAuthEvent } from '../../lib/events';
import type { OAuthRouterOptions } from '../../lib/options';
import { createOAuthRouter } from '../../lib/router';
import { HOUR, MINUTE, DAY } from '../helpers/clock';
import {
  createTestServer,
  obtainTokens,
  tokenRequest,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';

type Tokens = { access_token: string; refresh_token: string };
type Policy = OAuthRouterOptions['refreshTokenReuse'];

let server: TestServer;
let events: OAuthEvent[];
function open(refreshTokenReuse: Policy, secret = 's'.repeat(32)) {
  events = [];
  server = createTestServer({ refreshTokenReuse, secret, onEvent: (event) => void events.push(event) });
  return server;
}
afterEach(() => server.close());

/** One process of a client: the tokens it holds in memory, and what it does with them. */
function processOf(client: RegisteredClient, held: Tokens, app = server.app) {
  const state = { held, failures: [] as string[], expiresAt: server.clock.now() + HOUR };
  const process = {
    state,
    /** Refreshes from its own copy, as the client sends it (no scope, no resource); keeps what it gets. */
    async refresh() {
      const res = await tokenRequest(app, client, {
        grant_type: 'refresh_token',
        refresh_token: state.held.refresh_token,
      });
      if (res.status === 200) {
        state.held = res.body;
        state.expiresAt = server.clock.now() + res.body.expires_in * 1000;
      } else state.failures.push(`${res.status} ${res.body.error}: ${res.body.error_description}`);
      return res;
    },
    /** A tool call with the access token it holds. */
    async call() {
      return (await request(app).post('/mcp').set('Authorization', `Bearer ${state.held.access_token}`))
        .status;
    },
    /** What a client does for a tool call: refresh first when its access token has expired, then call. */
    async use() {
      if (server.clock.now() >= state.expiresAt) await process.refresh();
      return process.call();
    },
  };
  return process;
}

const grantOf = (tokens: Tokens) =>
  JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()).grant_id as string;
const reusedEvents = () => events.filter((event) => event.type === 'refresh_token.reused');

describe.each<[string, Policy]>([
  ['the default policy', undefined],
  ['the strict policy', 'strict'],
])('under %s', (policyName, policy) => {
  const lenient = policy === undefined;

  test('Claude Code: two processes share one stored token; one refreshes minutes, then over an hour after the other', async () => {
    open(policy);
    const { client, tokens } = await obtainTokens(server);
    const a = processOf(client, tokens);
    const b = processOf(client, tokens);
    // Three rounds: A works on, refreshing each time its access token has expired; B, which kept its own copy of the
    // token both started from, comes back 10 minutes, then 90 minutes (A refreshed on meanwhile), then 20 minutes
    // later: within the default window of two hours after A first used B's copy.
    for (const lag of [10 * MINUTE, 90 * MINUTE, 20 * MINUTE]) {
      server.clock.advance(HOUR + MINUTE);
      expect(await a.use()).toBe(200);
      for (let waited = HOUR; waited < lag; waited += HOUR) {
        server.clock.advance(HOUR);
        expect(await a.use()).toBe(200);
      }
      server.clock.advance(lag % HOUR || HOUR);
      const bStatus = await b.use();
      if (!lenient) break;
      expect([await a.use(), bStatus]).toEqual([200, 200]);
    }
    if (lenient) {
      expect(b.state.failures).toEqual([]);
      expect(a.state.failures).toEqual([]);
      expect(reusedEvents()).toEqual([]);
      expect(await server.store.isGrantActive(grantOf(a.state.held))).toBe(true);
    } else {
      // Strict: B's copy came back 10 minutes after A used it; the grant is revoked, and A is signed out too.
      expect(b.state.failures).toEqual([expect.stringMatching(/^400 invalid_grant/)]);
      expect(await a.call()).toBe(401);
      expect(reusedEvents()).toEqual([expect.objectContaining({ reason: 'after_window' })]);
    }
  });

  test('claude.ai: two egress addresses race one refresh, and either answer keeps working', async () => {
    open(policy);
    const { client, tokens } = await obtainTokens(server);
    let held = tokens;
    for (let round = 0; round < 3; round += 1) {
      server.clock.advance(HOUR + MINUTE);
      const [first, second] = await Promise.all([
        processOf(client, held).refresh(),
        processOf(client, held).refresh(),
      ]);
      expect([first.status, second.status]).toEqual([200, 200]);
      // Both were handed the same successor: whichever the client keeps, the grant has one chain.
      expect(first.body.refresh_token).toBe(second.body.refresh_token);
      held = round % 2 ? first.body : second.body;
      expect(await processOf(client, held).call()).toBe(200);
    }
    expect(reusedEvents()).toEqual([]);
  });

  test('two instances sharing the store and the secret converge on one successor too', async () => {
    open(policy);
    const { client, tokens } = await obtainTokens(server);
    const other = express().use(
      createOAuthRouter(server.store, server.signer, {
        issuer: server.oauth.info.issuer,
        scopes: server.oauth.info.scopes,
        secret: 's'.repeat(32),
        refreshTokenReuse: policy,
        now: server.clock.now,
        rateLimits: false,
        authenticateUser: () => null,
      }),
    );
    const [here, there] = await Promise.all([
      processOf(client, tokens).refresh(),
      processOf(client, tokens, other).refresh(),
    ]);
    expect([here.status, there.status]).toEqual([200, 200]);
    expect(here.body.refresh_token).toBe(there.body.refresh_token);
  });

  test('a stale retry days later: the client lost the answer and comes back with the token it rotated', async () => {
    open(policy);
    const { client, tokens } = await obtainTokens(server);
    const lost = await processOf(client, tokens).refresh();
    server.clock.advance(4 * DAY);
    const client2 = processOf(client, tokens);
    const retried = await client2.refresh();
    if (lenient) {
      expect(retried.body.refresh_token).toBe(lost.body.refresh_token);
      for (let round = 0; round < 3; round += 1) {
        server.clock.advance(HOUR + MINUTE);
        expect((await client2.refresh()).status).toBe(200);
        expect(await client2.call()).toBe(200);
      }
    } else {
      expect(retried.status).toBe(400);
      expect(reusedEvents()).toHaveLength(1);
    }
  });

  test('theft: a copy of a token replayed after the client went on with the grant for more than the window', async () => {
    open(policy);
    const { client, tokens } = await obtainTokens(server);
    const real = processOf(client, tokens);
    const stolen = tokens.refresh_token;
    // The client keeps using its grant for two days; the thief then tries the token it copied on day one.
    for (let hour = 0; hour < 48; hour += 6) {
      server.clock.advance(6 * HOUR);
      expect((await real.refresh()).status).toBe(200);
    }
    const firstUse = events.find((event) => event.type === 'token.refreshed')!.time;
    const thief = processOf(client, { access_token: '', refresh_token: stolen });
    expect((await thief.refresh()).body.error).toBe('invalid_grant');
    // Detected: the grant is revoked, so the thief gets nothing and the client's current tokens stop working.
    expect((await real.refresh()).body.error).toBe('invalid_grant');
    expect(await real.call()).toBe(401);
    expect(reusedEvents()).toEqual([
      expect.objectContaining({ reason: 'after_window', firstUsedAt: firstUse, clientId: client.client_id }),
    ]);
  });

  test('theft (security round four): a leaked copy from three rotations back cannot walk forward to the live token', async () => {
    open(policy);
    const { client, tokens } = await obtainTokens(server);
    const real = processOf(client, tokens);
    const leaked = tokens.refresh_token;
    // The client works on, refreshing each time its access token expires: three rotations in three hours.
    for (let round = 0; round < 3; round += 1) {
      server.clock.advance(HOUR + MINUTE);
      expect(await real.use()).toBe(200);
    }
    // With a window of a day, the copy was answered with its successor, that one with its own, and so on up to the
    // client's live token, in three requests: thief and client then shared one chain, and nothing was reported.
    const thief = processOf(client, { access_token: '', refresh_token: leaked });
    const walked = await thief.refresh();
    expect(walked.body.error).toBe('invalid_grant');
    expect(reusedEvents()).toEqual([expect.objectContaining({ reason: 'after_window' })]);
    expect(await real.call()).toBe(401);
  });

  test('theft: a thief who refreshes first is caught when the client comes back after the window', async () => {
    open(policy);
    const { client, tokens } = await obtainTokens(server);
    const thief = processOf(client, tokens);
    const real = processOf(client, tokens);
    // The thief copied the current token and keeps the grant going; the client was idle (a laptop closed).
    for (let round = 0; round < 8; round += 1) {
      server.clock.advance(4 * HOUR);
      expect((await thief.refresh()).status).toBe(200);
    }
    expect((await real.refresh()).body.error).toBe('invalid_grant');
    expect(await thief.call()).toBe(401);
    expect(reusedEvents()).toHaveLength(1);
  });

  test('not survived: a session idle more than the window while another kept refreshing', async () => {
    open(policy);
    const { client, tokens } = await obtainTokens(server);
    const a = processOf(client, tokens);
    const idle = processOf(client, tokens);
    // Three hours: past the default window of two.
    for (let hour = 0; hour < 3; hour += 1) {
      server.clock.advance(HOUR + MINUTE);
      expect(await a.use()).toBe(200);
    }
    // Indistinguishable from a stolen copy: the grant is revoked, and both must sign in again.
    expect(await idle.use()).toBe(401);
    expect(idle.state.failures).toEqual([expect.stringMatching(/^400 invalid_grant/)]);
    expect(await a.call()).toBe(401);
  });

  test('the price of the default: a thief refreshing alongside the client within the window is not told apart', async () => {
    open(policy);
    const { client, tokens } = await obtainTokens(server);
    const real = processOf(client, tokens);
    const thief = processOf(client, tokens);
    server.clock.advance(HOUR + MINUTE);
    expect(await real.use()).toBe(200);
    server.clock.advance(5 * MINUTE);
    // The thief presents the copy it took five minutes after the client used it.
    const stolen = await thief.refresh();
    if (lenient) {
      expect(stolen.status).toBe(200);
      expect(reusedEvents()).toEqual([]);
    } else {
      expect(stolen.status).toBe(400);
      expect(await real.call()).toBe(401);
      expect(reusedEvents()).toHaveLength(1);
    }
  });
});
