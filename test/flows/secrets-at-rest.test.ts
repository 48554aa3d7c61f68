// Database theft: after a whole journey through the HTTP endpoints, no client secret, code or refresh token is
// in the database files in plain text (the -wal file included), only their SHA-256 hashes.
import { existsSync, readFileSync } from 'node:fs';
import { hashSecret } from '../../lib/crypto/secrets';
import { authorizeInBrowser, createTestServer, registerClient, tokenRequest } from '../helpers/oauth-app';

test('secrets reach the database only as hashes', async () => {
  const server = createTestServer();
  try {
    const client = await registerClient(server.app);
    const { code, pkce } = await authorizeInBrowser(server.app, client);
    const exchanged = await tokenRequest(server.app, client, {
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: client.redirect_uris[0]!,
      code_verifier: pkce.verifier,
    });
    const refreshed = await tokenRequest(server.app, client, {
      grant_type: 'refresh_token',
      refresh_token: exchanged.body.refresh_token,
    });
    const secrets = [
      client.client_secret!,
      code!,
      exchanged.body.refresh_token,
      refreshed.body.refresh_token,
    ];
    const bytes = ['', '-wal', '-shm']
      .map((suffix) => server.dbPath + suffix)
      .filter(existsSync)
      .map((file) => readFileSync(file).toString('latin1'))
      .join('');
    for (const secret of secrets) {
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(bytes).toContain(hashSecret(secret));
      expect(bytes).not.toContain(secret);
    }
  } finally {
    server.close();
  }
});
