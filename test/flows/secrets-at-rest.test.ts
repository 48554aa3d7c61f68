// Database theft: after a whole journey through the HTTP endpoints, no client secret, code or refresh token is
// in the database files in plain text (the -wal file included), only their SHA-256 hashes (refresh tokens: their
// grant id and hash; the grant id is no secret).
import { existsSync, readFileSync } from 'node:fs';
import { refreshTokenKey } from '../../lib/crypto/refresh-token';
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
    // [the secret, what may be stored instead]: refresh tokens are keyed by their grant id and their hash.
    const secrets: Array<[string, string]> = [
      [client.client_secret!, hashSecret(client.client_secret!)],
      [code!, hashSecret(code!)],
      ...[exchanged.body.refresh_token as string, refreshed.body.refresh_token as string].map(
        (token): [string, string] => [token.slice(token.indexOf('.') + 1), refreshTokenKey(token)],
      ),
    ];
    const bytes = ['', '-wal', '-shm']
      .map((suffix) => server.dbPath + suffix)
      .filter(existsSync)
      .map((file) => readFileSync(file).toString('latin1'))
      .join('');
    for (const [secret, stored] of secrets) {
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(bytes).toContain(stored);
      expect(bytes).not.toContain(secret);
    }
  } finally {
    server.close();
  }
});
