// What a stranger learns, and what it costs the server, when it names a client_id URL (or a jwks_uri) that cannot
// be fetched: one generic invalid_client, never an address, a name resolution, a socket error, a timeout or another
// host's status; the whole story in the client.fetch_failed event; and one fetch per URL per 30 s however many
// requests name it. Every address beyond loopback comes from the injected resolver and is never connected to.
import { createServer, type AddressInfo } from 'node:net';
import request from 'supertest';
import type { ResolveHost } from '../../lib/outbound/safe-fetch';
import type { OAuthEvent } from '../../lib/events';
import type { OAuthRouterOptions } from '../../lib/options';
import { chatGptDocument } from '../helpers/client-documents';
import { SECOND } from '../helpers/clock';
import { startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { authorizeQuery, ISSUER, createTestServer, type TestServer } from '../helpers/oauth-app';
import { startSilentServer, type SilentServer } from '../helpers/silent-server';
import { testCa } from '../helpers/test-ca';
import { stallTest } from '../helpers/edit-loop';

const DOCUMENT_FAILED = "The client's metadata document could not be fetched.";
const KEYS_FAILED = "The client's key set (jwks_uri) could not be fetched.";
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** Names under internal.test resolve to a private address, nowhere.test to nothing; the rest to loopback. */
const resolveHost: ResolveHost = async (hostname) => {
  if (hostname.endsWith('.internal.test')) return [{ address: '10.20.30.40', family: 4 }];
  if (hostname.endsWith('.nowhere.test'))
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return [{ address: '127.0.0.1', family: 4 }];
};

/** A loopback port nothing listens on: a connection to it is refused. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('a client document that cannot be fetched', () => {
  let documents: DocumentServer;
  let silent: SilentServer;
  let refusedPort: number;
  let server: TestServer;
  let events: OAuthEvent[];
  beforeAll(async () => {
    [documents, silent, refusedPort] = await Promise.all([
      startDocumentServer(),
      startSilentServer(),
      closedPort(),
    ]);
  });
  afterAll(() => Promise.all([documents.stop(), silent.stop()]));
  afterEach(() => server?.close());

  const start = (fetching: Partial<NonNullable<OAuthRouterOptions['clientMetadataDocuments']>> = {}) => {
    events = [];
    server = createTestServer({
      clientMetadataDocuments: {
        allowLoopback: true,
        ca: testCa().caPem,
        resolveHost,
        timeoutMs: 300,
        ...fetching,
      },
      onEvent: (event) => void events.push(event),
    });
    return server;
  };
  const failures = () => events.filter((event) => event.type === 'client.fetch_failed');
  let serial = 0;
  /** A path no earlier fetch of this file used (so that no cached answer is reused). */
  const unique = () => `u${(serial += 1)}`;
  const authorizePage = (clientId: string) =>
    request(server.app).get(
      `/v1/oauth/authorize?${authorizeQuery({ client_id: clientId, redirect_uris: ['https://app.example/cb'] }).query}`,
    );
  const tokenRequest = (clientId: string) =>
    request(server.app)
      .post('/v1/oauth/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'x.y', client_id: clientId });

  // Each way a stranger could use the fetcher as a probe: the reason and detail the operator gets, and what must
  // never reach the stranger (the detail's telling part).
  const PROBES: Array<[string, () => { clientId: string; allowLoopback?: boolean }, string, RegExp]> = [
    [
      'mapping an internal name to its loopback address',
      () => ({ clientId: documents.url(`/${unique()}.json`, 'intranet.test'), allowLoopback: false }),
      'refused_address',
      /127\.0\.0\.1, a loopback address/,
    ],
    [
      'mapping an internal name to its private address',
      () => ({ clientId: `https://db.internal.test/${unique()}.json` }),
      'refused_address',
      /10\.20\.30\.40, a private address/,
    ],
    [
      'learning which names resolve',
      () => ({ clientId: `https://${unique()}.nowhere.test/client.json` }),
      'unresolvable',
      /ENOTFOUND/,
    ],
    [
      'scanning ports (a closed one)',
      () => ({ clientId: `https://scan.test:${refusedPort}/${unique()}.json` }),
      'network',
      /ECONNREFUSED 127\.0\.0\.1/,
    ],
    [
      'scanning ports (one that accepts and never answers)',
      () => ({ clientId: `https://scan.test:${silent.port}/${unique()}.json` }),
      'timeout',
      /within 300 ms/,
    ],
    [
      'reading another host’s status',
      () => {
        const path = `/${unique()}.json`;
        documents.serve(path, { status: 404 });
        return { clientId: documents.url(path, 'evil.test') };
      },
      'http_status',
      /HTTP 404/,
    ],
    [
      'reading another host’s redirects',
      () => {
        const path = `/${unique()}.json`;
        documents.serve(path, { status: 302, headers: { location: 'https://elsewhere.test/' } });
        return { clientId: documents.url(path, 'evil.test') };
      },
      'http_status',
      /302, a redirect/,
    ],
    [
      'reading another host’s sizes',
      () => {
        const path = `/${unique()}.json`;
        documents.serve(path, { body: { pad: 'x'.repeat(6000) } });
        return { clientId: documents.url(path, 'evil.test') };
      },
      'too_large',
      /more than the 5120/,
    ],
    [
      'reading another host’s content types',
      () => {
        const path = `/${unique()}.json`;
        documents.serve(path, { headers: { 'content-type': 'text/html' }, body: '<p>admin</p>' });
        return { clientId: documents.url(path, 'evil.test') };
      },
      'content_type',
      /text\/html/,
    ],
  ];

  test.each(PROBES)(
    '%s: the page and the token endpoint say only that it could not be fetched; the event says why',
    async (_attack, setUp, reason, telling) => {
      const { clientId, allowLoopback } = setUp();
      start(allowLoopback === undefined ? {} : { allowLoopback });
      const page = await authorizePage(clientId);
      expect(page.status).toBe(401);
      expect(page.headers.location).toBeUndefined();
      expect(page.text.replace(/&#39;|&#x27;/g, "'")).toContain(DOCUMENT_FAILED);
      expect(page.text).not.toMatch(telling);
      const token = await tokenRequest(clientId);
      expect(token.status).toBe(401);
      expect(token.body).toEqual({ error: 'invalid_client', error_description: DOCUMENT_FAILED });
      // The second request met the remembered failure: one fetch, one event, with the page's request id.
      expect(failures()).toEqual([
        expect.objectContaining({
          clientId,
          reason,
          detail: expect.stringMatching(telling),
          requestId: expect.any(String),
        }),
      ]);
      expect(failures()[0]!.detail).toContain(clientId);
    },
  );

  test('a jwks_uri on an internal name: the token endpoint says only that the key set could not be fetched', async () => {
    start();
    const chatgpt = chatGptDocument(documents, { path: `/oauth/${unique()}.json` });
    const jwksUri = `https://keys.internal.test/${unique()}/jwks.json`;
    documents.json(chatgpt.path, { ...chatgpt.document, jwks_uri: jwksUri }, 'max-age=3600');
    const res = await request(server.app)
      .post('/v1/oauth/token')
      .type('form')
      .send({
        grant_type: 'refresh_token',
        refresh_token: 'x.y',
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: chatgpt.assertion(ISSUER, { now: server.clock.now() }),
      });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid_client', error_description: KEYS_FAILED });
    expect(failures()).toEqual([
      expect.objectContaining({
        clientId: chatgpt.clientId,
        reason: 'refused_address',
        detail: expect.stringMatching(/keys\.internal\.test resolves to 10\.20\.30\.40/),
        // The request that caused the fetch, so that the operator can tell who probed.
        address: expect.any(String),
      }),
    ]);
  });

  // What the document says is its publisher's: still explained, so that a developer can fix it.
  test.each([
    ['not JSON', '{"client_id": ', /is not valid: it is not valid JSON\./],
    ['not an object', [1, 2], /is not valid: the document is not a JSON object\./],
  ])('a document that is %s is explained', async (_name, body, message) => {
    start();
    const path = `/${unique()}.json`;
    documents.serve(path, { body });
    const res = await tokenRequest(documents.url(path, 'evil.test'));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(res.body.error_description).toMatch(message);
    expect(failures()).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/^invalid_(json|document)$/) }),
    ]);
  });

  // A stranger names stalling URLs on 8 hosts, 4 per host: every one of the 32 slots is held until the deadline.
  // The legitimate client's fetch waits behind them; its deadline used to run during that wait, so it got its slot
  // with almost nothing left, timed out, and that timeout was remembered: invalid_client for every user of the
  // client for 30 s, again and again. Its deadline now starts at its slot.
  stallTest(
    'slot exhaustion: stalling URLs holding every slot cannot make a legitimate document fail',
    async () => {
      start({ timeoutMs: 1000 });
      const path = `/${unique()}.json`;
      const victim = documents.url(path, 'claude.ai.test');
      // It answers in 600 ms, well within a deadline of its own, not within what a stalled wait leaves of one.
      documents.serve(path, {
        delayMs: 600,
        body: { client_id: victim, client_name: 'Victim', redirect_uris: ['https://app.example/cb'] },
      });
      const before = silent.sockets.length;
      const stalls = Array.from({ length: 32 }, (_, i) =>
        authorizePage(`https://stall${i % 8}.test:${silent.port}/${unique()}.json`).then((res) => res.status),
      );
      await silent.connections(before + 32);
      const page = await authorizePage(victim);
      expect(page.status).toBe(200);
      expect(await Promise.all(stalls)).toEqual(Array(32).fill(401));
      expect(failures().filter((event) => event.clientId === victim)).toEqual([]);
      expect((await authorizePage(victim)).status).toBe(200);
      expect(documents.hits(path)).toBe(1);
    },
  );

  test('fetch amplification: a failing URL is fetched once per 30 s, however many requests name it', async () => {
    start();
    const path = `/${unique()}.json`;
    documents.serve(path, { status: 503 });
    const clientId = documents.url(path, 'evil.test');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? tokenRequest(clientId) : authorizePage(clientId))),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(10).fill(401));
    server.clock.advance(29 * SECOND);
    expect((await tokenRequest(clientId)).status).toBe(401);
    expect(documents.hits(path)).toBe(1);
    expect(failures()).toHaveLength(1);
    server.clock.advance(SECOND);
    expect((await tokenRequest(clientId)).status).toBe(401);
    expect(documents.hits(path)).toBe(2);
    expect(failures()).toHaveLength(2);
  });
});
