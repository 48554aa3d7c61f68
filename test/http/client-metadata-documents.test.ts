// Client ID Metadata Documents end to end over HTTP: real-shaped documents served over HTTPS on loopback (a test
// CA), every refusal shown as a page (never a redirect), private_key_jwt at the token and revocation endpoints, and
// the cache, with a fake clock.
import { createHmac, createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { resolveToLoopback, startDocumentServer, type DocumentServer } from '../helpers/document-server';
import {
  chatGptDocument,
  claudeCodeDocument,
  vsCodeDocument,
  type KeyedClient,
} from '../helpers/client-documents';
import { HOUR, MINUTE, SECOND } from '../helpers/clock';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  ISSUER,
  registerClient,
  type TestServer,
} from '../helpers/oauth-app';
import { testCa } from '../helpers/test-ca';
import { rsaKeyPair } from '../helpers/rsa-keys';
import type { OAuthRouterOptions } from '../../lib/options';

const TOKEN_ENDPOINT = `${ISSUER}/v1/oauth/token`;

/** An assertion whose header claims `alg` (the signature does not matter: the key lookup refuses it first). */
function forgedAlg(alg: string, clientId: string, now: number): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = { iss: clientId, sub: clientId, aud: TOKEN_ENDPOINT, exp: now + 60, jti: randomUUID() };
  return `${encode({ alg, kid: 'k1' })}.${encode(claims)}.c2ln`;
}
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The text of a page's h1. */
const headingOf = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1]?.trim();
let serial = 0;
/** A path no earlier fetch of this file used (so that no cached answer is reused). */
const unique = () => `u${(serial += 1)}`;

describe('Client ID Metadata Documents', () => {
  let documents: DocumentServer;
  let server: TestServer;
  beforeAll(async () => {
    documents = await startDocumentServer();
  });
  afterAll(() => documents.stop());

  const start = (options: Partial<OAuthRouterOptions> = {}) => {
    server = createTestServer({
      clientMetadataDocuments: {
        allowLoopback: true,
        ca: testCa().caPem,
        resolveHost: resolveToLoopback,
        timeoutMs: 1000,
      },
      ...options,
    });
    return server;
  };
  afterEach(() => server?.close());

  const asClient = (clientId: string, redirectUri: string) => ({
    client_id: clientId,
    redirect_uris: [redirectUri],
  });
  const authorizePage = (clientId: string, redirectUri: string) =>
    request(server.app).get(`/v1/oauth/authorize?${authorizeQuery(asClient(clientId, redirectUri)).query}`);

  async function codeFor(clientId: string, redirectUri: string) {
    const result = await authorizeInBrowser(server.app, asClient(clientId, redirectUri));
    expect(result.code).toBeDefined();
    return result;
  }

  describe('a public client (Claude Code)', () => {
    test('consents, exchanges, refreshes; its portless loopback redirect matches an ephemeral port', async () => {
      start();
      const claude = claudeCodeDocument(documents);
      const redirectUri = 'http://localhost:53682/callback';
      const page = await authorizePage(claude.clientId, redirectUri);
      expect(page.status).toBe(200);
      const { code, pkce, location } = await codeFor(claude.clientId, redirectUri);
      expect(location.origin + location.pathname).toBe(redirectUri);
      const token = await request(server.app).post('/v1/oauth/token').type('form').send({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: pkce.verifier,
        client_id: claude.clientId,
      });
      expect(token.status).toBe(200);
      const claims = server.signer.verifyAccessToken(token.body.access_token, {
        issuer: ISSUER,
        audience: `${ISSUER}/mcp`,
      });
      expect(claims.client_id).toBe(claude.clientId);
      const refreshed = await request(server.app).post('/v1/oauth/token').type('form').send({
        grant_type: 'refresh_token',
        refresh_token: token.body.refresh_token,
        client_id: claude.clientId,
      });
      expect(refreshed.status).toBe(200);
      const mcp = await request(server.app)
        .post('/mcp')
        .set('Authorization', `Bearer ${refreshed.body.access_token}`);
      expect(mcp.status).toBe(200);
      // The document is fetched once and kept, as its Cache-Control allows.
      expect(documents.hits(claude.path)).toBe(1);
    });

    test('the consent page names the publishing host and warns that every redirect stays on this computer', async () => {
      start();
      const claude = claudeCodeDocument(documents, { path: '/oauth/claude-consent' });
      const { browser } = await authorizeInBrowser(
        server.app,
        asClient(claude.clientId, 'http://127.0.0.1:4999/callback'),
      ).catch(() => ({ browser: undefined }));
      expect(browser).toBeDefined();
      const consent = await browser!.get(
        `/v1/oauth/authorize?${authorizeQuery(asClient(claude.clientId, 'http://127.0.0.1:4999/callback')).query}`,
      );
      // The host leads (it is what the fetch verified); the name the document gives itself comes second.
      expect(headingOf(consent.text)).toMatch(/^claude\.ai\.test wants access to your /);
      expect(consent.text).toContain(
        `Published by <strong>claude.ai.test</strong>, at <code>${claude.clientId}</code>.`,
      );
      expect(consent.text).toContain('It calls itself <strong>Claude Code</strong>');
      expect(consent.text).toMatch(/only ever returns to <strong>your own computer<\/strong>/);
      expect(consent.text).not.toContain('Self-registered');
    });

    test('impersonation from a shared host: a document calling itself "Claude Code" is headed by the host it is on', async () => {
      start();
      // Anyone can publish a file on a shared host (a gist, a pages site) and give it any name.
      const fake = claudeCodeDocument(documents, { path: '/someone/raw/claude.json', host: 'evil.test' });
      const signIn = await authorizePage(fake.clientId, 'http://127.0.0.1:4999/callback');
      expect(signIn.text).toContain(
        '<strong>evil.test</strong> (an app calling itself Claude Code) wants to connect',
      );
      const { browser } = await authorizeInBrowser(
        server.app,
        asClient(fake.clientId, 'http://127.0.0.1:4999/callback'),
      );
      const consent = await browser.get(
        `/v1/oauth/authorize?${authorizeQuery(asClient(fake.clientId, 'http://127.0.0.1:4999/callback')).query}`,
      );
      expect(headingOf(consent.text)).toMatch(/^evil\.test wants access to your /);
      expect(consent.text).toContain(`<code>${fake.clientId}</code>`);
      expect(consent.text).toContain(
        'It calls itself <strong>Claude Code</strong>: a name it chose, which nobody has verified.',
      );
    });

    test('a self-registered client is marked as such, and a web redirect gets no localhost warning', async () => {
      start();
      const client = await registerClient(server.app);
      const { browser } = await authorizeInBrowser(server.app, client);
      const consent = await browser.get(`/v1/oauth/authorize?${authorizeQuery(client).query}`);
      // It has no host to lead with: its own name heads the page, marked as unverified.
      expect(headingOf(consent.text)).toMatch(/^Test Client wants access to your /);
      expect(consent.text).toContain('Self-registered app');
      expect(consent.text).not.toContain('your own computer');
    });

    test('a second installation of the same client does not end the first one’s grant', async () => {
      start();
      const claude = claudeCodeDocument(documents, { path: '/oauth/claude-twice' });
      const tokens = [];
      for (const port of [50001, 50002]) {
        const redirectUri = `http://127.0.0.1:${port}/callback`;
        const { code, pkce } = await codeFor(claude.clientId, redirectUri);
        const res = await request(server.app).post('/v1/oauth/token').type('form').send({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          code_verifier: pkce.verifier,
          client_id: claude.clientId,
        });
        expect(res.status).toBe(200);
        tokens.push(res.body);
      }
      for (const token of tokens) {
        const refreshed = await request(server.app).post('/v1/oauth/token').type('form').send({
          grant_type: 'refresh_token',
          refresh_token: token.refresh_token,
          client_id: claude.clientId,
        });
        expect(refreshed.status).toBe(200);
      }
      expect(await server.store.listActiveGrants('user-1')).toHaveLength(2);
    });
  });

  describe('refusals, shown to the user and never redirected', () => {
    const valid = (clientId: string) => ({
      client_id: clientId,
      client_name: 'Some App',
      redirect_uris: ['https://app.example/callback'],
    });

    test.each([
      [
        'a client_id that is not the URL',
        (id: string) => ({ ...valid(id), client_id: `${id}x` }),
        /must be exactly the URL/,
      ],
      [
        'a client secret in the document',
        (id: string) => ({ ...valid(id), client_secret: 's3cret' }),
        /never carry a secret/,
      ],
      [
        'a shared-secret auth method',
        (id: string) => ({ ...valid(id), token_endpoint_auth_method: 'client_secret_basic' }),
        /cannot be published/,
      ],
      [
        'client_secret_post',
        (id: string) => ({ ...valid(id), token_endpoint_auth_method: 'client_secret_post' }),
        /not allowed in a document/,
      ],
      [
        'no redirect_uris',
        (id: string) => ({ ...valid(id), redirect_uris: undefined }),
        /redirect_uris is required/,
      ],
      [
        'an http redirect on a public host',
        (id: string) => ({ ...valid(id), redirect_uris: ['http://app.example/cb'] }),
        /http redirect URIs are allowed only on a loopback host/,
      ],
      [
        'private_key_jwt without keys',
        (id: string) => ({ ...valid(id), token_endpoint_auth_method: 'private_key_jwt' }),
        /needs jwks_uri or jwks/,
      ],
      ['a JSON array', () => [1, 2], /not a JSON object/],
    ])('%s', async (_name, document, message) => {
      start();
      const path = `/bad/${unique()}.json`;
      const clientId = documents.url(path, 'evil.test');
      documents.json(path, document(clientId));
      const res = await authorizePage(clientId, 'https://app.example/callback');
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/html/);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toContain('invalid_client');
      expect(res.text.replace(/&#34;|&quot;/g, '"')).toMatch(message);
    });

    // How another host answered is not the caller's business (see client-document-fetch-failures.test.ts): one
    // sentence for every failed fetch, without the status, size, type or timing.
    test.each([
      ['a 404', { status: 404 }, /404/],
      ['a redirect', { status: 301, headers: { location: 'https://evil.test/elsewhere' } }, /redirect|301/],
      ['an oversize document', { body: { pad: 'x'.repeat(6000) } }, /5120|bytes/],
      ['a slow server', { delayMs: 1500, body: {} }, /1000 ms|answer/],
      ['HTML', { headers: { 'content-type': 'text/html' }, body: '<p>hi</p>' }, /content type|text\/html/],
    ])('a fetch that fails: %s', async (_name, route, detail) => {
      start();
      const path = `/fail/${unique()}.json`;
      documents.serve(path, route);
      const res = await authorizePage(documents.url(path, 'evil.test'), 'https://app.example/callback');
      expect(res.status).toBe(401);
      expect(res.headers.location).toBeUndefined();
      const text = res.text.replace(/&#39;|&#x27;/g, "'");
      expect(text).toContain("The client's metadata document could not be fetched.");
      expect(text).not.toMatch(detail);
    });

    test.each([
      ['an http URL', 'http://app.example/client.json', /must use https/],
      ['a fragment', 'https://app.example/client.json#x', /fragment/],
      ['a dot segment', 'https://app.example/a/../client.json', /path segments/],
      ['an encoded dot segment', 'https://app.example/a/%2e%2e/client.json', /path segments/],
      ['no path', 'https://app.example', /must have a path/],
      ['credentials', 'https://user:pw@app.example/client.json', /user name or password/],
    ])('a client_id URL with %s is refused before any fetch', async (_name, clientId, message) => {
      start();
      const res = await authorizePage(clientId, 'https://app.example/callback');
      expect(res.status).toBe(401);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toMatch(message);
    });

    test('without allowLoopback the loopback document host is refused (the default)', async () => {
      start({ clientMetadataDocuments: { ca: testCa().caPem, resolveHost: resolveToLoopback } });
      const claude = claudeCodeDocument(documents, { path: '/oauth/claude-default' });
      const res = await authorizePage(claude.clientId, 'http://127.0.0.1:5000/callback');
      expect(res.status).toBe(401);
      expect(res.text.replace(/&#39;|&#x27;/g, "'")).toContain(
        "The client's metadata document could not be fetched.",
      );
      expect(res.text).not.toMatch(/loopback|127\.0\.0\.1/);
      expect(documents.hits('/oauth/claude-default')).toBe(0);
    });

    test('a redirect_uri the document does not list is refused on the page', async () => {
      start();
      const vscode = vsCodeDocument(documents);
      // RFC 8252 §7.3: any port matches a loopback redirect, so the path is what differs here.
      const res = await authorizePage(vscode.clientId, 'http://127.0.0.1:33418/elsewhere');
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.text.replace(/&#34;/g, '"').replace(/&#39;/g, "'")).toContain(
        `The redirect URI "http://127.0.0.1:33418/elsewhere" is not listed in the app's metadata document ` +
          `(${vscode.clientId}), so this service will not send you there. If the app has just changed its ` +
          'redirect URIs, try again later: the document is read again when the copy held here expires (within ' +
          '24 hours).',
      );
    });

    test('a broken document is invalid_client at the token endpoint', async () => {
      start();
      const path = '/oauth/broken-at-token.json';
      documents.serve(path, { status: 500 });
      const res = await request(server.app)
        .post('/v1/oauth/token')
        .type('form')
        .send({
          grant_type: 'refresh_token',
          refresh_token: 'x.y',
          client_id: documents.url(path, 'evil.test'),
        });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        error: 'invalid_client',
        error_description: "The client's metadata document could not be fetched.",
      });
    });

    test('with documents turned off, a URL client_id is unknown and the metadata does not offer them', async () => {
      start({ clientMetadataDocuments: { enabled: false } });
      const claude = claudeCodeDocument(documents, { path: '/oauth/claude-off' });
      const res = await authorizePage(claude.clientId, 'http://127.0.0.1:5000/callback');
      expect(res.status).toBe(400);
      expect(res.text).toContain('not registered');
      expect(documents.hits('/oauth/claude-off')).toBe(0);
      const metadata = await request(server.app).get('/.well-known/oauth-authorization-server');
      expect(metadata.body.client_id_metadata_document_supported).toBeUndefined();
    });
  });

  describe('private_key_jwt (ChatGPT)', () => {
    let chatgpt: KeyedClient;
    const redirectUri = 'https://chatgpt.com/connector_platform_oauth_redirect';

    async function exchange(assertion: string) {
      const { code, pkce } = await codeFor(chatgpt.clientId, redirectUri);
      return request(server.app).post('/v1/oauth/token').type('form').send({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: pkce.verifier,
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: assertion,
      });
    }
    const refresh = (refreshToken: string, assertion: string) =>
      request(server.app).post('/v1/oauth/token').type('form').send({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: assertion,
      });
    const sign = (options: Parameters<KeyedClient['assertion']>[1] = {}) =>
      chatgpt.assertion(TOKEN_ENDPOINT, { now: server.clock.now(), ...options });

    beforeEach(() => {
      start();
      chatgpt = chatGptDocument(documents, {
        path: `/oauth/chatgpt-${unique()}.json`,
      });
    });

    test('exchanges a code and refreshes with RS256 assertions; the issuer is the preferred audience', async () => {
      const token = await exchange(sign());
      expect(token.status).toBe(200);
      const refreshed = await refresh(
        token.body.refresh_token,
        chatgpt.assertion(ISSUER, { now: server.clock.now() }),
      );
      expect(refreshed.status).toBe(200);
      const revoked = await request(server.app)
        .post('/v1/oauth/revoke')
        .type('form')
        .send({
          token: refreshed.body.refresh_token,
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: chatgpt.assertion(ISSUER, { now: server.clock.now() }),
        });
      expect(revoked.status).toBe(200);
      expect((await refresh(refreshed.body.refresh_token, sign())).status).toBe(400);
    });

    test('introspects its own tokens with a private_key_jwt assertion for the issuer (or the token endpoint)', async () => {
      const token = await exchange(sign());
      const introspect = (value: string, audience: string) =>
        request(server.app)
          .post('/v1/oauth/introspect')
          .type('form')
          .send({
            token: value,
            client_assertion_type: ASSERTION_TYPE,
            client_assertion: chatgpt.assertion(audience, { now: server.clock.now() }),
          });
      const access = await introspect(token.body.access_token, TOKEN_ENDPOINT);
      expect(access.body).toMatchObject({ active: true, client_id: chatgpt.clientId });
      const refresh = await introspect(token.body.refresh_token, ISSUER);
      expect(refresh.body).toMatchObject({ active: true, client_id: chatgpt.clientId });
      const elsewhere = await introspect(token.body.access_token, 'https://other.example/introspect');
      expect(elsewhere.status).toBe(401);
    });

    // draft-ietf-oauth-rfc7523bis-11 §4: one audience value, the issuer; the token endpoint stays accepted for the
    // clients that send it (ChatGPT). Each value is tried at every endpoint that authenticates clients: an accepted
    // one reaches the endpoint's own answer (a bad refresh token, an unknown token), a refused one is invalid_client.
    const AUDIENCES: Array<[string, unknown, boolean]> = [
      ['the issuer', ISSUER, true],
      ['the issuer spelled with its trailing slash (the same URL)', `${ISSUER}/`, true],
      ['the issuer, alone in an array', [ISSUER], true],
      ['the token endpoint', TOKEN_ENDPOINT, true],
      ['the token endpoint, alone in an array', [TOKEN_ENDPOINT], true],
      ['the revocation endpoint', `${ISSUER}/v1/oauth/revoke`, false],
      ['the introspection endpoint', `${ISSUER}/v1/oauth/introspect`, false],
      [
        'the issuer and the token endpoint together (several values, even all ours)',
        [ISSUER, TOKEN_ENDPOINT],
        false,
      ],
      ['the issuer beside another server', [ISSUER, 'https://other.example'], false],
      ['an empty array', [], false],
      ['another server’s token endpoint', 'https://other.example/v1/oauth/token', false],
      ['a path below the issuer', `${ISSUER}/v1`, false],
      ['the issuer with two slashes', `${ISSUER}//`, false],
      ['the issuer in capitals (compared as a string)', ISSUER.toUpperCase(), false],
      ['a number', 4000, false],
      ['nothing (no aud claim)', undefined, false],
    ];
    const ENDPOINTS: Array<[string, string, Record<string, string>, number]> = [
      ['token', '/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: 'x.y' }, 400],
      ['revocation', '/v1/oauth/revoke', { token: 'x.y' }, 200],
      ['introspection', '/v1/oauth/introspect', { token: 'x.y' }, 200],
    ];
    test.each(
      AUDIENCES.flatMap(([name, aud, accepted]) =>
        ENDPOINTS.map(([endpoint, path, fields, status]) => ({
          name,
          endpoint,
          aud,
          accepted,
          path,
          fields,
          status,
        })),
      ),
    )('audience injection: aud $name at the $endpoint endpoint, accepted: $accepted', async (row) => {
      const assertion = sign({ claims: { aud: row.aud } });
      const res = await request(server.app)
        .post(row.path)
        .type('form')
        .send({ ...row.fields, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion });
      if (row.accepted) {
        expect(res.status).toBe(row.status);
      } else {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({
          error: 'invalid_client',
          error_description: `The client assertion was refused: its aud must be the issuer, "${ISSUER}", as its only value.`,
        });
      }
    });

    test('a replayed assertion (same jti) is refused', async () => {
      const assertion = sign({ jti: 'once-only' });
      const token = await exchange(assertion);
      expect(token.status).toBe(200);
      const replay = await refresh(token.body.refresh_token, assertion);
      expect(replay.status).toBe(401);
      expect(replay.body.error_description).toMatch(/already used/);
    });

    const forged = (alg: string, secret?: string) => {
      const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const now = Math.floor(server.clock.now() / 1000);
      const body = `${encode({ alg, typ: 'JWT', kid: chatgpt.kid })}.${encode({
        iss: chatgpt.clientId,
        sub: chatgpt.clientId,
        aud: TOKEN_ENDPOINT,
        exp: now + 60,
        jti: `forged-${alg}`,
      })}`;
      return `${body}.${secret === undefined ? '' : createHmac('sha256', secret).update(body).digest('base64url')}`;
    };

    test.each([
      ['signed by a foreign key', () => sign({ key: rsaKeyPair('foreign-signer').privateKey }), /signature/],
      ['expired', () => sign({ now: server.clock.now() - 10 * MINUTE }), /expired/],
      ['living too long', () => sign({ lifetimeSeconds: 3600 }), /lives too long/],
      ['without exp', () => sign({ claims: { exp: undefined } }), /no exp/],
      ['without jti', () => sign({ claims: { jti: undefined } }), /jti/],
      [
        'for another audience',
        () => chatgpt.assertion('https://other.example/token', { now: server.clock.now() }),
        /aud/,
      ],
      ['with iss other than the client', () => sign({ claims: { iss: 'https://evil.test/x' } }), /iss/],
      ['with alg none', () => forged('none'), /signed with none/],
      [
        'HS256 with the public key as the secret',
        () =>
          forged(
            'HS256',
            createPublicKey(chatgpt.privateKey).export({ format: 'pem', type: 'spki' }).toString(),
          ),
        /signed with HS256/,
      ],
      ['with an unknown kid', () => sign({ kid: 'nobody' }), /no RS256 key with kid "nobody"/],
    ])('an assertion %s is refused', async (_name, make, message) => {
      const res = await exchange(make());
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        error: 'invalid_client',
        error_description: expect.stringMatching(message),
      });
    });

    test('a client that rotates its key is refetched once for the new kid', async () => {
      const first = await exchange(sign());
      expect(first.status).toBe(200);
      const fetchesBefore = documents.hits(chatgpt.jwksPath);
      chatgpt.rotate();
      server.clock.advance(11 * SECOND);
      const refreshed = await refresh(first.body.refresh_token, sign());
      expect(refreshed.status).toBe(200);
      expect(documents.hits(chatgpt.jwksPath)).toBe(fetchesBefore + 1);
      // An unknown kid refetches at most once in a while: no fetch storm on the client's host.
      const unknown = await refresh(refreshed.body.refresh_token, sign({ kid: 'nobody' }));
      expect(unknown.status).toBe(401);
      expect(documents.hits(chatgpt.jwksPath)).toBe(fetchesBefore + 1);
    });

    test('a public client cannot present an assertion, nor a keyed one a bare client_id', async () => {
      const bare = await request(server.app)
        .post('/v1/oauth/token')
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: 'x.y', client_id: chatgpt.clientId });
      expect(bare.status).toBe(401);
      expect(bare.body.error_description).toMatch(/private_key_jwt/);
    });

    test.each([
      ['a wrong assertion type', { client_assertion_type: 'urn:x', client_assertion: 'a.b.c' }, 400],
      [
        'an assertion and a secret',
        { client_assertion_type: ASSERTION_TYPE, client_assertion: 'a.b.c', client_secret: 'x' },
        400,
      ],
      [
        'an assertion that is not a JWT',
        { client_assertion_type: ASSERTION_TYPE, client_assertion: 'garbage' },
        401,
      ],
    ])('%s is a clear error', async (_name, fields, status) => {
      const res = await request(server.app)
        .post('/v1/oauth/token')
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: 'x.y', ...fields });
      expect(res.status).toBe(status);
    });
  });

  describe('private_key_jwt for a registered client (inline jwks)', () => {
    test.each([
      ['ES256', () => generateKeyPairSync('ec', { namedCurve: 'P-256' })],
      ['PS256', () => rsaKeyPair('inline-jwks-ps256')],
      ['RS256', () => rsaKeyPair('inline-jwks-rs256')],
    ] as const)(
      '%s assertions are accepted; a key of the wrong type for the alg is not',
      async (alg, makeKeys) => {
        start();
        const { privateKey, publicKey } = makeKeys();
        const client = await registerClient(server.app, {
          token_endpoint_auth_method: 'private_key_jwt',
          jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1' }] },
        });
        const { code, pkce } = await authorizeInBrowser(server.app, client);
        const now = Math.floor(server.clock.now() / 1000);
        const assertion = (algorithm: jwt.Algorithm) =>
          jwt.sign(
            {
              iss: client.client_id,
              sub: client.client_id,
              aud: TOKEN_ENDPOINT,
              exp: now + 60,
              jti: randomUUID(),
            },
            privateKey,
            { algorithm, keyid: 'k1' },
          );
        const token = await request(server.app)
          .post('/v1/oauth/token')
          .type('form')
          .send({
            grant_type: 'authorization_code',
            code,
            redirect_uri: client.redirect_uris[0],
            code_verifier: pkce.verifier,
            client_assertion_type: ASSERTION_TYPE,
            client_assertion: assertion(alg),
          });
        expect(token.status).toBe(200);
        // An EC key cannot verify an RSA algorithm, nor an RSA key ES256.
        const other = await request(server.app)
          .post('/v1/oauth/token')
          .type('form')
          .send({
            grant_type: 'refresh_token',
            refresh_token: token.body.refresh_token,
            client_assertion_type: ASSERTION_TYPE,
            client_assertion: forgedAlg(alg === 'ES256' ? 'RS256' : 'ES256', client.client_id, now),
          });
        expect(other.status).toBe(401);
        expect(other.body.error_description).toMatch(/no (RS256|ES256) key with kid "k1"/);
      },
    );

    // RFC 7517 §4.2: a key published for encryption is not the client's signing key, even when the signature checks.
    test.each([
      ['use: "sig"', { use: 'sig' }, 400],
      ['no use', {}, 400],
      ['use: "enc"', { use: 'enc' }, 401],
    ])(
      'key confusion: a key with %s verifies an assertion only if it is for signatures',
      async (_name, use, status) => {
        start();
        const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
        const client = await registerClient(server.app, {
          token_endpoint_auth_method: 'private_key_jwt',
          jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', ...use }] },
        });
        const now = Math.floor(server.clock.now() / 1000);
        const assertion = jwt.sign(
          { iss: client.client_id, sub: client.client_id, aud: ISSUER, exp: now + 60, jti: randomUUID() },
          privateKey,
          { algorithm: 'ES256', keyid: 'k1' },
        );
        const res = await request(server.app).post('/v1/oauth/token').type('form').send({
          grant_type: 'refresh_token',
          refresh_token: 'x.y',
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: assertion,
        });
        // Authenticated, the client hears about its refresh token (400); refused, about itself (401).
        expect(res.status).toBe(status);
        expect(res.body.error).toBe(status === 400 ? 'invalid_grant' : 'invalid_client');
        if (status === 401) expect(res.body.error_description).toMatch(/no ES256 key with kid "k1"/);
      },
    );
  });

  // What draft-ietf-oauth-client-id-metadata-document-02 (and -03) asks of an authorization server, rule by rule.
  describe('draft-ietf-oauth-client-id-metadata-document-02', () => {
    const minimal = (clientId: string) => ({
      client_id: clientId,
      client_name: 'Some App',
      redirect_uris: ['https://app.example/callback'],
    });

    // §4: "comparisons MUST be made using simple string comparison"; the server MUST NOT normalise the URL.
    test.each([
      ['its host in capitals', (id: string) => id.replace('evil.test', 'EVIL.test')],
      ['a trailing slash', (id: string) => `${id}/`],
      ['a character of the path percent-encoded', (id: string) => id.replace('/exact/', '/%65xact/')],
      ['a query', (id: string) => `${id}?v=1`],
      ['no port', (id: string) => id.replace(/:\d+\//, '/')],
    ])(
      '§4 exact string comparison: a document whose client_id differs from its URL by %s is refused',
      async (_name, spell) => {
        start();
        const path = `/exact/${unique()}.json`;
        const clientId = documents.url(path, 'evil.test');
        documents.json(path, { ...minimal(clientId), client_id: spell(clientId) });
        const res = await authorizePage(clientId, 'https://app.example/callback');
        expect(res.status).toBe(401);
        expect(res.headers.location).toBeUndefined();
        expect(res.text).toMatch(/must be exactly the URL it is served from/);
      },
    );

    test('§4 exact string comparison: a client_id sent with its host in capitals does not match the document', async () => {
      start();
      const path = `/exact/${unique()}.json`;
      const clientId = documents.url(path, 'evil.test');
      documents.json(path, minimal(clientId));
      const res = await authorizePage(
        clientId.replace('evil.test', 'EVIL.TEST'),
        'https://app.example/callback',
      );
      expect(res.status).toBe(401);
      expect(res.text).toMatch(/must be exactly the URL it is served from/);
    });

    // §4: the metadata values are those of the RFC 7591 registry, and a document is written for many servers.
    test.each([
      ['only client_id, client_name and redirect_uris', (id: string) => minimal(id)],
      // Copilot CLI's document was never seen with a name (RFC 7591 §2: client_name is optional).
      ['no client_name at all', (id: string) => ({ ...minimal(id), client_name: undefined })],
      [
        'fields this server does not know',
        (id: string) => ({
          ...minimal(id),
          application_type: 'native',
          tls_client_certificate_bound_access_tokens: true,
          post_logout_redirect_uris: ['https://app.example/bye'],
          require_pushed_authorization_requests: false,
          x_vendor_extension: { nested: [1, { deep: true }] },
        }),
      ],
    ])('§4 a document with %s is accepted, and its client connects', async (_name, document) => {
      start();
      const path = `/doc/${unique()}.json`;
      const clientId = documents.url(path, 'vscode.dev.test');
      documents.json(path, document(clientId), 'max-age=3600');
      const { code, pkce } = await codeFor(clientId, 'https://app.example/callback');
      const token = await request(server.app).post('/v1/oauth/token').type('form').send({
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'https://app.example/callback',
        code_verifier: pkce.verifier,
        client_id: clientId,
      });
      expect(token.status).toBe(200);
      expect(token.body.refresh_token).toEqual(expect.any(String));
    });

    // §4.2 (with RFC 9700 §4.1.3): the redirect URI is an exact match of one the document lists (only the port of a
    // loopback URI may vary, RFC 8252 §7.3): anything else is shown on a page, never redirected to.
    test.each([
      ['a trailing slash', 'https://app.example/callback/'],
      ['the path in capitals', 'https://app.example/CALLBACK'],
      ['a query', 'https://app.example/callback?next=x'],
      ['another port', 'https://app.example:8443/callback'],
      ['http', 'http://app.example/callback'],
      ['another host', 'https://evil.example/callback'],
    ])('§4.2 redirect URI matching: %s is not the listed URI', async (_name, redirectUri) => {
      start();
      const path = `/doc/${unique()}.json`;
      const clientId = documents.url(path, 'vscode.dev.test');
      documents.json(path, minimal(clientId), 'max-age=3600');
      const res = await authorizePage(clientId, redirectUri);
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toMatch(/is not listed in the app&#39;s metadata document/);
    });

    // Only the port of a loopback redirect may vary: opencode sends http://127.0.0.1:19876/mcp/oauth/callback while
    // its document lists http://127.0.0.1/callback (anomalyco/opencode#50510); another path is another URI.
    test('§4.2 a loopback redirect with another path than the document lists is refused, whatever the port', async () => {
      start();
      const path = `/doc/${unique()}.json`;
      const clientId = documents.url(path, 'vscode.dev.test');
      documents.json(
        path,
        { ...minimal(clientId), redirect_uris: ['http://127.0.0.1/callback'] },
        'max-age=3600',
      );
      const refused = await authorizePage(clientId, 'http://127.0.0.1:19876/mcp/oauth/callback');
      expect(refused.status).toBe(400);
      expect(refused.headers.location).toBeUndefined();
      expect((await authorizePage(clientId, 'http://127.0.0.1:19876/callback')).status).toBe(200);
    });

    // §8.2: a document that declares private_key_jwt makes a confidential client, which MUST authenticate so: an
    // intercepted code is worth nothing to whoever sends it with the client_id alone.
    test('§8.2 a document declaring private_key_jwt cannot exchange its code with client_id alone (none)', async () => {
      start();
      const chatgpt = chatGptDocument(documents, { path: `/oauth/chatgpt-${unique()}.json` });
      const redirectUri = 'https://chatgpt.com/connector_platform_oauth_redirect';
      const { code, pkce } = await codeFor(chatgpt.clientId, redirectUri);
      const exchange = (auth: Record<string, string>) =>
        request(server.app)
          .post('/v1/oauth/token')
          .type('form')
          .send({
            grant_type: 'authorization_code',
            code,
            redirect_uri: redirectUri,
            code_verifier: pkce.verifier,
            ...auth,
          });
      const bare = await exchange({ client_id: chatgpt.clientId });
      expect(bare.status).toBe(401);
      expect(bare.body).toEqual({
        error: 'invalid_client',
        error_description:
          'This client registered token_endpoint_auth_method private_key_jwt; authenticate that way.',
      });
      // Refused before the code was touched: the client's own signed request still gets its tokens.
      const signed = await exchange({
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: chatgpt.assertion(ISSUER, { now: server.clock.now() }),
      });
      expect(signed.status).toBe(200);
    });
  });

  describe('the cache', () => {
    test('one fetch serves 20 concurrent first requests', async () => {
      start();
      const claude = claudeCodeDocument(documents, { path: '/oauth/claude-concurrent' });
      const pages = await Promise.all(
        Array.from({ length: 20 }, () => authorizePage(claude.clientId, 'http://127.0.0.1:5000/callback')),
      );
      expect(pages.every((page) => page.status === 200)).toBe(true);
      expect(documents.hits('/oauth/claude-concurrent')).toBe(1);
    });

    test('each fetched copy is one client.document_fetched event, with the request that caused it', async () => {
      const events: Array<{ type: string; clientId?: string; requestId?: string }> = [];
      start({ onEvent: (event) => void events.push(event) });
      const claude = claudeCodeDocument(documents, { path: '/oauth/claude-announced' });
      const page = () => authorizePage(claude.clientId, 'http://127.0.0.1:5000/callback');
      await Promise.all(Array.from({ length: 5 }, page));
      const fetched = () => events.filter((event) => event.type === 'client.document_fetched');
      expect(fetched()).toEqual([
        expect.objectContaining({ clientId: claude.clientId, requestId: expect.any(String) }),
      ]);
      await page();
      expect(fetched()).toHaveLength(1);
      server.clock.advance(24 * HOUR);
      await page();
      expect(fetched()).toHaveLength(2);
    });

    test.each([
      ['max-age=3600', HOUR],
      ['max-age=10 (raised to the 5-minute floor)', 5 * MINUTE],
      ['no-store (the floor)', 5 * MINUTE],
      ['max-age=99999999 (cut to 24 hours)', 24 * HOUR],
      ['no header (the floor)', 5 * MINUTE],
    ])(
      '§5.2 periodic re-fetch: Cache-Control %s keeps the document that long, and a changed redirect applies at the next fetch',
      async (label, keep) => {
        start();
        const path = `/oauth/cached-${unique()}.json`;
        const header = label.startsWith('no header') ? undefined : label.split(' ')[0];
        const vscode = vsCodeDocument(documents, {
          path,
          redirectUris: ['http://127.0.0.1:33418/'],
          cacheControl: header,
        });
        const moved = { ...vscode.document, redirect_uris: ['http://127.0.0.1:33418/moved'] };
        expect((await authorizePage(vscode.clientId, 'http://127.0.0.1:33418/')).status).toBe(200);
        documents.json(path, moved, header);
        server.clock.advance(keep - SECOND);
        expect((await authorizePage(vscode.clientId, 'http://127.0.0.1:33418/')).status).toBe(200);
        expect(documents.hits(path)).toBe(1);
        server.clock.advance(2 * SECOND);
        expect((await authorizePage(vscode.clientId, 'http://127.0.0.1:33418/')).status).toBe(400);
        expect((await authorizePage(vscode.clientId, 'http://127.0.0.1:33418/moved')).status).toBe(200);
        expect(documents.hits(path)).toBe(2);
      },
    );

    test('an error or an invalid document is remembered for 30 s only, then fetched again', async () => {
      start();
      const path = '/oauth/flaky.json';
      const clientId = documents.url(path, 'vscode.dev.test');
      documents.serve(path, { status: 503 });
      expect((await authorizePage(clientId, 'http://127.0.0.1:33418/')).status).toBe(401);
      // Invalid: no redirect_uris.
      documents.json(path, { client_id: clientId, client_name: 'Broken' });
      expect((await authorizePage(clientId, 'http://127.0.0.1:33418/')).status).toBe(401);
      expect(documents.hits(path)).toBe(1);
      server.clock.advance(30 * SECOND);
      expect((await authorizePage(clientId, 'http://127.0.0.1:33418/')).status).toBe(401);
      documents.json(path, {
        client_id: clientId,
        client_name: 'Fixed',
        redirect_uris: ['http://127.0.0.1:33418/'],
      });
      server.clock.advance(30 * SECOND);
      expect((await authorizePage(clientId, 'http://127.0.0.1:33418/')).status).toBe(200);
      expect(documents.hits(path)).toBe(3);
    });
  });
});
