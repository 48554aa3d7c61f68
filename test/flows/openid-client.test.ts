// A second journey, driven by openid-client (written by others, ESM-only, so it runs in its own process).
import { startLiveServer, type LiveServer } from '../helpers/live-server';
import { USER } from '../helpers/oauth-app';
import { runOpenidClientJourney } from '../helpers/openid-client';

describe('openid-client against the server', () => {
  let server: LiveServer;
  beforeAll(async () => {
    server = await startLiveServer();
  });
  afterAll(() => server.stop());

  test('discovery, registration, code with PKCE, refresh, revocation', async () => {
    const result = await runOpenidClientJourney(server.baseUrl, USER.email, USER.password);
    expect(result).toMatchObject({
      authMethod: 'client_secret_post',
      issuerInCallback: server.baseUrl,
      tokenType: 'bearer',
      scope: 'fakture:read clients:read',
      expiresIn: 3600,
      rotated: true,
      refreshAfterRevocation: 'invalid_grant',
    });
    const refused = await fetch(`${server.baseUrl}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${result.accessToken}` },
    });
    expect(refused.status).toBe(401);
  });
});
