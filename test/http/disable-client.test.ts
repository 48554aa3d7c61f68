// An operator disables a client (oauth.setClientDisabled): its grants end at once, and it is refused from then on as
// a client nobody registered, at the token endpoint and on the authorization pages; enabled again, it may connect
// anew, and gets none of its old grants back.
import request from 'supertest';
import type { OAuthEvent } from '../../lib';
import { createMemoryStore } from '../../lib/store/memory';
import { createFakeClock } from '../helpers/clock';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  mountTestApp,
  obtainTokens,
  tokenRequest,
  type TestServer,
} from '../helpers/oauth-app';

let server: TestServer;
let events: OAuthEvent[];
beforeEach(() => {
  events = [];
  server = createTestServer({ onEvent: (event) => void events.push(event) });
});
afterEach(() => server.close());

test('disabling ends the grants at once and refuses the client; enabling lets it connect anew', async () => {
  const { client, tokens } = await obtainTokens(server);
  const bystander = await obtainTokens(server);
  expect(await server.oauth.setClientDisabled(client.client_id, true)).toBe(true);
  // Its grant is gone: the access token is refused at once, in this process.
  const call = await request(server.app).post('/mcp').set('Authorization', `Bearer ${tokens.access_token}`);
  expect(call.status).toBe(401);
  // The client itself is unknown now.
  const refresh = await tokenRequest(server.app, client, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
  });
  expect(refresh.status).toBe(401);
  expect(refresh.body.error).toBe('invalid_client');
  const page = await request(server.app).get(`/v1/oauth/authorize?${authorizeQuery(client).query}`);
  expect(page.status).toBe(400);
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  expect(events.filter((event) => event.type === 'grant.revoked')).toMatchObject([
    { by: 'admin', clientId: client.client_id },
  ]);
  // Another client is untouched.
  const other = await request(server.app)
    .post('/mcp')
    .set('Authorization', `Bearer ${bystander.tokens.access_token}`);
  expect(other.status).toBe(200);

  expect(await server.oauth.setClientDisabled(client.client_id, false)).toBe(true);
  const again = await authorizeInBrowser(server.app, client);
  expect(again.code).toBeDefined();
  // None of its old grants came back.
  const old = await tokenRequest(server.app, client, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
  });
  expect(old.body.error).toBe('invalid_grant');
});

test('an unknown client is not disabled; a store without the methods says how to fix it', async () => {
  expect(await server.oauth.setClientDisabled('no-such-client', true)).toBe(false);
  await expect(server.oauth.setClientDisabled('https://app.example/client.json', true)).rejects.toThrow(
    /named by a metadata document URL cannot be disabled/,
  );
  const clock = createFakeClock(Date.now());
  const store = createMemoryStore({ now: clock.now }) as unknown as Record<string, unknown>;
  delete store.setClientDisabled;
  delete store.revokeClientGrants;
  const { oauth } = mountTestApp(store as never, clock);
  await expect(oauth.setClientDisabled('x', true)).rejects.toThrow(
    /has no setClientDisabled\(\) and revokeClientGrants\(\)/,
  );
});

test('each switch is an audit event naming who did it, as are the grants it ends and an admin revocation', async () => {
  const { client } = await obtainTokens(server);
  const other = await obtainTokens(server);
  await server.oauth.setClientDisabled(client.client_id, true, { actor: 'client:ops-robot' });
  await server.oauth.setClientDisabled(client.client_id, false, { actor: 'user:7' });
  // Without an actor, none is made up.
  await server.oauth.setClientDisabled(client.client_id, true);
  const otherGrant = (await server.store.listActiveGrants('user-1')).find(
    (grant) => grant.clientId === other.client.client_id,
  )!;
  await server.oauth.revokeGrant(otherGrant.grantId, { actor: 'user:7' });
  const told = events
    .filter((event) => ['client.disabled', 'client.enabled', 'grant.revoked'].includes(event.type))
    .map(({ type, clientId, actor, by }) => ({ type, clientId, actor, by }));
  expect(told).toEqual([
    { type: 'client.disabled', clientId: client.client_id, actor: 'client:ops-robot', by: undefined },
    { type: 'grant.revoked', clientId: client.client_id, actor: 'client:ops-robot', by: 'admin' },
    { type: 'client.enabled', clientId: client.client_id, actor: 'user:7', by: undefined },
    { type: 'client.disabled', clientId: client.client_id, actor: undefined, by: undefined },
    { type: 'grant.revoked', clientId: undefined, actor: 'user:7', by: 'admin' },
  ]);
});
