// The step-up window (lib/grants/step-up-window.ts): a client that answers a scope refusal by refreshing (the MCP SDK
// 1.x client does) is answered invalid_grant once, so that it asks the person; the grant itself is untouched, a
// refresh later on or a second one is served, and the rotation rule still decides a used token's fate.
import express from 'express';
import request from 'supertest';
import { createMcpEndpoint } from '../../lib/mcp';
import { createMemoryStore } from '../../lib/store/memory';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { OAuthEvent, OAuthRouterOptions } from '../../lib';
import { createFakeClock, MINUTE, SECOND } from '../helpers/clock';
import {
  createTestServer,
  mountTestApp,
  obtainTokens,
  tokenRequest,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';

let server: TestServer;
let events: OAuthEvent[];
function start(options: Partial<OAuthRouterOptions> = {}) {
  events = [];
  server = createTestServer({ onEvent: (event) => void events.push(event), ...options });
}
afterEach(() => server?.close());

const refresh = (client: RegisteredClient, refreshToken: string) =>
  tokenRequest(server.app, client, { grant_type: 'refresh_token', refresh_token: refreshToken });

/** A route that needs fakture:read, asked with a token that has not got it: 403 insufficient_scope. */
async function refusedByRoute(accessToken: string) {
  const res = await request(server.app).get('/mcp/invoices').set('Authorization', `Bearer ${accessToken}`);
  expect(res.status).toBe(403);
  expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"');
}

const STEP_UP = /ask the user again at the authorization endpoint/;

test('the first refresh after a refused route is invalid_grant; the grant and its tokens still work', async () => {
  start();
  const { client, tokens } = await obtainTokens(server, {}, { scope: 'clients:read' });
  await refusedByRoute(tokens.access_token);

  const refused = await refresh(client, tokens.refresh_token);
  expect(refused.status).toBe(400);
  expect(refused.body.error).toBe('invalid_grant');
  expect(refused.body.error_description).toMatch(STEP_UP);
  // Nothing was revoked: the access token is still good, and the same refresh token is served the next time.
  const call = await request(server.app).post('/mcp').set('Authorization', `Bearer ${tokens.access_token}`);
  expect(call.status).toBe(200);
  expect(events.filter((event) => event.type === 'grant.revoked')).toEqual([]);
  const again = await refresh(client, tokens.refresh_token);
  expect(again.status).toBe(200);
  expect(again.body.scope).toBe('clients:read');
});

test.each([
  ['as it is', false],
  // The reference app does: the mark rides on req.auth under a symbol, which a spread copy keeps.
  ['after the host copies req.auth to add to it', true],
])('a tool refused by createMcpEndpoint marks the grant the same way, req.auth %s', async (_name, copy) => {
  start();
  const mcp = () => {
    const built = new McpServer({ name: 'notes', version: '1.0.0' });
    built.registerTool('list_invoices', {}, async () => ({ content: [] }));
    return built;
  };
  const app = express();
  app.use(server.oauth);
  app.post(
    '/tools',
    server.oauth.requireBearer(),
    (req, _res, next) => {
      const authed = req as express.Request & { auth: Record<string, unknown> };
      if (copy) authed.auth = { ...authed.auth, extra: { tenant: 'acme' } };
      next();
    },
    createMcpEndpoint({ createServer: mcp, toolScopes: { list_invoices: ['fakture:read'] } }),
  );
  const { client, tokens } = await obtainTokens(server, {}, { scope: 'clients:read' });
  const res = await request(app)
    .post('/tools')
    .set('Authorization', `Bearer ${tokens.access_token}`)
    .set('Accept', 'application/json, text/event-stream')
    .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_invoices', arguments: {} } });
  expect(res.status).toBe(403);
  expect(res.headers['www-authenticate']).toContain('scope="clients:read fakture:read"');
  const refused = await refresh(client, tokens.refresh_token);
  expect(refused.body).toMatchObject({ error: 'invalid_grant' });
  expect(refused.body.error_description).toMatch(STEP_UP);
});

test.each([
  ['the window has passed', {}, 2 * MINUTE],
  ['a window of its own has passed', { stepUpWindowMs: 10_000 }, 10 * SECOND],
  ['the window is off', { stepUpWindowMs: 0 }, 0],
])('a refresh is served when %s', async (_name, options, wait) => {
  start(options);
  const { client, tokens } = await obtainTokens(server, {}, { scope: 'clients:read' });
  await refusedByRoute(tokens.access_token);
  server.clock.advance(wait);
  expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
});

test('a refresh with no refusal before it is served; a refusal marks only its own grant', async () => {
  start();
  const first = await obtainTokens(server, {}, { scope: 'clients:read' });
  const second = await obtainTokens(server, {}, { scope: 'clients:read' });
  expect((await refresh(first.client, first.tokens.refresh_token)).status).toBe(200);
  await refusedByRoute(second.tokens.access_token);
  const { refresh_token: successor } = (await refresh(first.client, first.tokens.refresh_token)).body;
  expect(successor).toBeDefined();
  expect((await refresh(second.client, second.tokens.refresh_token)).body.error).toBe('invalid_grant');
});

test('a used token presented again is the rotation rule’s to decide: a retry gets its successor, the mark waits', async () => {
  start();
  const { client, tokens } = await obtainTokens(server, {}, { scope: 'clients:read' });
  const rotated = (await refresh(client, tokens.refresh_token)).body as { refresh_token: string };
  await refusedByRoute(tokens.access_token);
  // Within the reuse window, the used token is answered with the same successor, and the mark is not taken.
  const retried = await refresh(client, tokens.refresh_token);
  expect(retried.status).toBe(200);
  expect(retried.body.refresh_token).toBe(rotated.refresh_token);
  // The current token's first use is the one sent to authorize again.
  expect((await refresh(client, rotated.refresh_token)).body.error_description).toMatch(STEP_UP);
});

test('reuse of a stolen token still revokes the grant, inside the window too', async () => {
  start({ refreshTokenReuse: 'strict' });
  const { client, tokens } = await obtainTokens(server, {}, { scope: 'clients:read' });
  await refresh(client, tokens.refresh_token);
  // Past the strict policy's minute of reuse window.
  server.clock.advance(MINUTE + SECOND);
  await refusedByRoute(tokens.access_token);
  const replayed = await refresh(client, tokens.refresh_token);
  expect(replayed.body.error).toBe('invalid_grant');
  expect(replayed.body.error_description).not.toMatch(STEP_UP);
  expect(events.map((event) => event.type)).toContain('refresh_token.reused');
});

test('a grant revoked after the refusal is answered as revoked, not sent to authorize again', async () => {
  start();
  const { client, tokens } = await obtainTokens(server, {}, { scope: 'clients:read' });
  await refusedByRoute(tokens.access_token);
  const res = await tokenRequest(server.app, client, { token: tokens.refresh_token }, '/v1/oauth/revoke');
  expect(res.status).toBe(200);
  const refused = await refresh(client, tokens.refresh_token);
  expect(refused.body.error).toBe('invalid_grant');
  expect(refused.body.error_description).not.toMatch(STEP_UP);
});

test('another client’s refresh token does not take the mark', async () => {
  start();
  const victim = await obtainTokens(server, {}, { scope: 'clients:read' });
  const other = await obtainTokens(server, {}, { scope: 'clients:read' });
  await refusedByRoute(victim.tokens.access_token);
  const stolen = await refresh(other.client, victim.tokens.refresh_token);
  expect(stolen.body.error).toBe('invalid_grant');
  expect(stolen.body.error_description).not.toMatch(STEP_UP);
  expect((await refresh(victim.client, victim.tokens.refresh_token)).body.error_description).toMatch(STEP_UP);
});

test('a grant id alone neither takes the mark nor keeps it alive past its window', async () => {
  start();
  const victim = await obtainTokens(server, {}, { scope: 'clients:read' });
  const attacker = await obtainTokens(server, {}, { scope: 'clients:read' });
  await refusedByRoute(victim.tokens.access_token);
  const grantId = victim.tokens.refresh_token.split('.')[0]!;
  for (let minute = 0; minute < 3; minute += 1) {
    // A made-up token under the victim's grant id (which access tokens and events show), every minute.
    const forged = await refresh(attacker.client, `${grantId}.made-up-secret`);
    expect(forged.body.error).toBe('invalid_grant');
    expect(forged.body.error_description).not.toMatch(STEP_UP);
    server.clock.advance(MINUTE);
  }
  // Past the window, the victim's ordinary refresh is served.
  expect((await refresh(victim.client, victim.tokens.refresh_token)).status).toBe(200);
});

test('a token from a token exchange, refused downstream, does not mark its subject’s grant', async () => {
  const renderer = 'https://renderer.example/api';
  start({ tokenExchange: { resources: [renderer] } });
  server.app.get(
    '/renderer',
    server.oauth.requireBearer({ resource: renderer, scopes: ['company:write'] }),
    (_req, res) => res.json({}),
  );
  const { client, tokens } = await obtainTokens(server, {}, { scope: 'clients:read dokument:read' });
  const gateway = await server.oauth.registerOperatorClient({
    name: 'Gateway',
    grantTypes: ['urn:ietf:params:oauth:grant-type:token-exchange'],
  });
  const exchanged = await request(server.app)
    .post('/v1/oauth/token')
    .type('form')
    .auth(gateway.clientId, gateway.clientSecret!)
    .send({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: tokens.access_token,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: renderer,
    });
  expect(exchanged.status).toBe(200);
  const refused = await request(server.app)
    .get('/renderer')
    .set('Authorization', `Bearer ${exchanged.body.access_token}`);
  expect(refused.status).toBe(403);
  // The user's own client was never refused: its refresh is served.
  expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
});

test('a store without scope challenges serves every refresh, and the router says so once, at start', async () => {
  const clock = createFakeClock(Date.now());
  const store = createMemoryStore({ now: clock.now, scopeChallenges: false });
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  const { app, oauth } = mountTestApp(store, clock);
  expect(warn.mock.calls).toEqual([
    [
      expect.stringMatching(
        /no markScopeChallenge\(\) and takeScopeChallenge\(\), so the step-up window is off/,
      ),
    ],
  ]);
  warn.mockRestore();
  server = { app, oauth, clock, close: () => undefined } as unknown as TestServer;
  const { client, tokens } = await obtainTokens(server, {}, { scope: 'clients:read' });
  await refusedByRoute(tokens.access_token);
  expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
});

test.each([-1, 1.5, '60000', 3_600_001])(
  'stepUpWindowMs %p fails at start, saying what it takes',
  (value) => {
    expect(() => start({ stepUpWindowMs: value as number })).toThrow(
      'createOAuthRouter: stepUpWindowMs must be a whole number of milliseconds from 0 (off) to 3,600,000 (an hour).',
    );
  },
);
