// Rows of document clients: a stranger who sends client_id URLs makes no row at all (documents are kept in memory
// only); a user's consent stores the copy the user saw, which the connected-apps list, refresh and revocation then
// work with (introspection by a private_key_jwt document client: client-metadata-documents.test.ts); the copy goes
// once no grant names it; and a stored copy never stands in for the document when the client authenticates.
import request from 'supertest';
import { claudeCodeDocument } from '../helpers/client-documents';
import { DAY, HOUR } from '../helpers/clock';
import { resolveToLoopback, startDocumentServer, type DocumentServer } from '../helpers/document-server';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  USER,
  type TestServer,
} from '../helpers/oauth-app';
import { testCa } from '../helpers/test-ca';

describe('document client rows', () => {
  let documents: DocumentServer;
  let server: TestServer;
  beforeAll(async () => {
    documents = await startDocumentServer();
  });
  afterAll(() => documents.stop());
  beforeEach(() => {
    server = createTestServer({
      clientMetadataDocuments: {
        allowLoopback: true,
        ca: testCa().caPem,
        resolveHost: resolveToLoopback,
        // Forty TLS handshakes at once on a busy test machine: this test is not about deadlines.
        timeoutMs: 20_000,
      },
      lifetimes: { refreshToken: DAY / 1000 },
    });
  });
  afterEach(() => server.close());

  const clientRows = () =>
    (
      server.store.database.prepare('SELECT client_id FROM oauth_clients').all() as Array<{
        client_id: string;
      }>
    )
      .map((row) => row.client_id)
      .sort();
  const asClient = (clientId: string, redirectUri = 'http://127.0.0.1:5000/callback') => ({
    client_id: clientId,
    redirect_uris: [redirectUri],
  });
  const token = (fields: Record<string, string>) =>
    request(server.app).post('/v1/oauth/token').type('form').send(fields);

  async function connect(clientId: string) {
    const redirectUri = 'http://127.0.0.1:5000/callback';
    const { code, pkce } = await authorizeInBrowser(server.app, asClient(clientId, redirectUri));
    const res = await token({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: redirectUri,
      code_verifier: pkce.verifier,
      client_id: clientId,
    });
    expect(res.status).toBe(200);
    return res.body as { access_token: string; refresh_token: string };
  }

  test('row flooding: 40 anonymous requests naming 40 valid documents leave no client row', async () => {
    // Over the host names the test certificate covers, so that the 4-per-host limit does not queue them all.
    const hosts = ['evil.test', 'claude.ai.test', 'chatgpt.com.test', 'vscode.dev.test', 'localhost'];
    const urls = Array.from({ length: 40 }, (_, i) => {
      const published = claudeCodeDocument(documents, { path: `/flood/${i}.json`, host: hosts[i % 5] });
      return published.clientId;
    });
    const answers = await Promise.all(
      urls.map((url, i) =>
        i % 2
          ? request(server.app).get(`/v1/oauth/authorize?${authorizeQuery(asClient(url)).query}`)
          : token({ grant_type: 'refresh_token', refresh_token: 'x.y', client_id: url }),
      ),
    );
    // Every document was fetched and valid: the pages were shown, the token requests reached the token check.
    expect(answers.map((res) => res.status).sort()).toEqual([...Array(20).fill(200), ...Array(20).fill(400)]);
    expect(clientRows()).toEqual([]);
  });

  test('consent stores the copy the user saw; the connected-apps list, refresh and revocation work with it', async () => {
    const claude = claudeCodeDocument(documents, { path: '/rows/claude.json' });
    const tokens = await connect(claude.clientId);
    expect(clientRows()).toEqual([claude.clientId]);
    expect(await server.store.findClient(claude.clientId)).toMatchObject({ clientName: 'Claude Code' });
    const [listed] = await server.store.listActiveGrants(USER.id);
    expect(listed).toMatchObject({ clientId: claude.clientId, clientName: 'Claude Code' });
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: claude.clientId,
    });
    expect(refreshed.status).toBe(200);
    const revoked = await request(server.app)
      .post('/v1/oauth/revoke')
      .type('form')
      .send({ token: refreshed.body.refresh_token, client_id: claude.clientId });
    expect(revoked.status).toBe(200);
    expect(await server.store.listActiveGrants(USER.id)).toEqual([]);
  });

  test('the copy goes with the last grant that names it', async () => {
    const claude = claudeCodeDocument(documents, { path: '/rows/expiring.json' });
    await connect(claude.clientId);
    server.clock.advance(DAY - HOUR);
    while ((await server.store.purgeExpired()) > 0);
    expect(clientRows()).toEqual([claude.clientId]);
    server.clock.advance(HOUR);
    while ((await server.store.purgeExpired()) > 0);
    expect(clientRows()).toEqual([]);
  });

  test('a stored copy never authenticates: a withdrawn document ends refreshes, copy or not', async () => {
    const claude = claudeCodeDocument(documents, { path: '/rows/withdrawn.json', cacheControl: 'no-store' });
    const tokens = await connect(claude.clientId);
    documents.serve(claude.path, { status: 404 });
    // Past the 5-minute floor the document is fetched again, and is gone.
    server.clock.advance(HOUR);
    const res = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: claude.clientId,
    });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(clientRows()).toEqual([claude.clientId]);
  });
});
