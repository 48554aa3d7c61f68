// Registered clients are remembered in memory, but not for ever: one purged as idle (store.purgeIdleClients), on
// this instance or another, stops authenticating within a minute, rather than being served from memory until its
// next consent fails for want of a stored client.
import { MINUTE, SECOND } from '../helpers/clock';
import { createTestServer, registerClient, tokenRequest } from '../helpers/oauth-app';

test('a purged registration is forgotten within a minute; before that, the memory serves it', async () => {
  const server = createTestServer({ deviceAuthorization: true });
  try {
    const client = await registerClient(server.app, {
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
      token_endpoint_auth_method: 'none',
      redirect_uris: undefined,
    });
    const ask = () => tokenRequest(server.app, client, {}, '/v1/oauth/device_authorization');
    expect((await ask()).status).toBe(200);
    // Purged as another instance would: straight in the store, while this process remembers the client.
    server.clock.advance(1 * SECOND);
    await server.store.database.prepare('DELETE FROM oauth_device_authorizations').run();
    expect(await server.store.purgeIdleClients(server.clock.now())).toBe(1);
    expect((await ask()).status).toBe(200);
    server.clock.advance(MINUTE);
    const refused = await ask();
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_client');
  } finally {
    server.close();
  }
});
