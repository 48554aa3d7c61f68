// The fetcher's rules one by one, each named after what it stops: what a resolver may answer, where the connection
// goes and which name its certificate must carry, which answers are refused (status, content type, size) and where
// the bounds are, and what a failure tells the operator. Nothing here reaches beyond loopback: other addresses come
// from an injected resolver, and spies show that no socket was opened for them.
import dnsPromises from 'node:dns/promises';
import { createServer, type Server } from 'node:https';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import undici = require('undici');
import {
  createSafeFetcher,
  FetchRefusedError,
  systemResolveHost,
  type ResolveHost,
} from '../../../lib/outbound/safe-fetch';
import { secureContextFor } from '../../../lib/outbound/secure-contexts';
import { resolveToLoopback, startDocumentServer, type DocumentServer } from '../../helpers/document-server';
import { blockConnections, loopbackFetcher } from '../../helpers/loopback-fetcher';
import { startSilentServer, type SilentServer } from '../../helpers/silent-server';
import { testCa } from '../../helpers/test-ca';

const MAX = 64;
const TYPES = ['application/json', 'application/jwk-set+json'];
const LIMITS = { maxBytes: MAX, contentTypes: TYPES };
/** A JSON string of exactly `bytes` bytes. */
const jsonOfSize = (bytes: number) => JSON.stringify('x'.repeat(bytes - 2));

describe('safe fetch rules', () => {
  let server: DocumentServer;
  beforeAll(async () => {
    server = await startDocumentServer();
  });
  afterAll(() => server.stop());
  afterEach(() => jest.restoreAllMocks());

  const fetcher = loopbackFetcher;
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('the fetch succeeded');
      },
      (error: unknown) => {
        expect(error).toBeInstanceOf(FetchRefusedError);
        return error as FetchRefusedError;
      },
    );

  describe('what a resolver may answer', () => {
    test.each<[string, ResolveHost, RegExp]>([
      ['no address at all', async () => [], /^the host client\.example has no address$/],
      // What dns.lookup answers without `all`: one address, not a list. Taken as a list, nothing would be checked.
      [
        'one address instead of a list',
        async () => ({ address: '10.0.0.1', family: 4 }) as never,
        /^the host client\.example has no address$/,
      ],
      [
        'a lookup failure',
        async () => {
          throw new Error('getaddrinfo ENOTFOUND client.example');
        },
        /^the host client\.example could not be resolved \(getaddrinfo ENOTFOUND client\.example\)$/,
      ],
    ])(
      'a resolver answering %s is unresolvable, and nothing is connected',
      async (_name, resolveHost, message) => {
        const spies = blockConnections();
        const error = await failure(
          fetcher({ resolveHost }).getJson('https://client.example/doc.json', LIMITS),
        );
        expect(error).toMatchObject({ reason: 'unresolvable', message: expect.stringMatching(message) });
        for (const spy of spies) expect(spy).not.toHaveBeenCalled();
      },
    );

    // Loopback allowed for local development must not open the private networks, nor the metadata endpoint.
    test.each([
      ['10.0.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['0.0.0.0', 'unspecified'],
    ])('with loopback allowed, a name resolving to %s (%s) is still refused', async (address, use) => {
      const spies = blockConnections();
      const resolveHost: ResolveHost = async () => [
        { address: '127.0.0.1', family: 4 },
        { address, family: 4 },
      ];
      const error = await failure(
        fetcher({ resolveHost }).getJson('https://client.example/doc.json', LIMITS),
      );
      expect(error.reason).toBe('refused_address');
      expect(error.message).toBe(
        `the host client.example resolves to ${address}, a ${use} address, which is never fetched`,
      );
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    });

    // DNS rebinding: a name that answers a checked address once and a private one afterwards. The connection goes
    // to the address that was checked, with no second lookup, and the certificate is still checked for the name.
    test('DNS rebinding: the name is resolved once and the connection goes to the checked address', async () => {
      server.json('/pinned.json', { pinned: true });
      let calls = 0;
      const resolveHost = jest.fn<ReturnType<ResolveHost>, [string]>(async () =>
        calls++ === 0
          ? [
              { address: '127.0.0.1', family: 4 },
              { address: '::1', family: 6 },
            ]
          : [{ address: '10.0.0.1', family: 4 }],
      );
      const connects = jest.spyOn(tls, 'connect');
      await expect(
        fetcher({ resolveHost }).getJson(server.url('/pinned.json', 'claude.ai.test'), LIMITS),
      ).resolves.toEqual({ body: { pinned: true }, cacheControl: undefined });
      expect(resolveHost).toHaveBeenCalledTimes(1);
      expect(connects).toHaveBeenCalledTimes(1);
      expect(connects.mock.calls[0]![0]).toMatchObject({
        host: '127.0.0.1',
        port: server.port,
        servername: 'claude.ai.test',
        ALPNProtocols: ['http/1.1'],
      });
    });

    // The system resolver must hand over every address (so that one private address among them is seen), in the
    // order the system prefers.
    test('the system resolver is asked for every address of the name', async () => {
      const lookup = jest
        .spyOn(dnsPromises, 'lookup')
        .mockImplementation((async () => [{ address: '127.0.0.1', family: 4 }]) as never);
      await expect(systemResolveHost('client.example')).resolves.toEqual([
        { address: '127.0.0.1', family: 4 },
      ]);
      expect(lookup).toHaveBeenCalledWith('client.example', { all: true, verbatim: true });
    });

    // A lookup that answers after the deadline: the caller has its `timeout` already, and nothing is opened after it.
    test('a lookup answering after the deadline opens no dispatcher and no socket', async () => {
      let answer: (addresses: Array<{ address: string; family: number }>) => void = () => undefined;
      const resolveHost: ResolveHost = () => new Promise((resolve) => (answer = resolve));
      const agents = jest.spyOn(undici, 'Agent');
      const connects = jest.spyOn(tls, 'connect');
      const error = await failure(
        fetcher({ timeoutMs: 50, resolveHost }).getJson('https://late.test/doc.json', LIMITS),
      );
      expect(error.reason).toBe('timeout');
      answer([{ address: '127.0.0.1', family: 4 }]);
      for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
      expect(agents).not.toHaveBeenCalled();
      expect(connects).not.toHaveBeenCalled();
    });
  });

  describe('the connection and its certificate', () => {
    // The certificate must carry the URL's name: one valid for the address only (127.0.0.1 here) is not enough, or
    // anyone with a certificate for an address could answer for every name that resolves to it.
    test('a certificate valid for the address but not for the name is refused', async () => {
      server.json('/doc.json', { ok: true });
      const error = await failure(
        fetcher().getJson(server.url('/doc.json', 'not-in-the-certificate.test'), LIMITS),
      );
      expect(error.reason).toBe('network');
      expect(error.message).toMatch(/^it could not be fetched \(ERR_TLS_CERT_ALTNAME_INVALID: .+\)$/);
    });

    // RFC 6066 §3: an IP address is never sent as a server name.
    test('an IP literal URL sends no server name', async () => {
      server.json('/literal.json', { ok: true });
      const connects = jest.spyOn(tls, 'connect');
      await expect(fetcher().getJson(server.url('/literal.json'), LIMITS)).resolves.toMatchObject({
        body: { ok: true },
      });
      expect(connects.mock.calls[0]![0]).toMatchObject({ host: '127.0.0.1', servername: undefined });
    });

    test('a URL without a port connects to 443', async () => {
      const connects = jest.spyOn(tls, 'connect').mockImplementation(() => {
        throw new Error('stopped before connecting');
      });
      const error = await failure(fetcher().getJson('https://claude.ai.test/doc.json', LIMITS));
      expect(error.reason).toBe('network');
      expect(connects.mock.calls[0]![0]).toMatchObject({ host: '127.0.0.1', port: 443 });
    });

    test('the authorities trusted are the system roots plus those configured, and only those', async () => {
      server.json('/roots.json', { ok: true });
      // The context each connection gets is the one made for exactly those authorities (secure-contexts.test.ts
      // shows what that one trusts: the roots plus `ca`).
      const connects = jest.spyOn(tls, 'connect');
      await fetcher().getJson(server.url('/roots.json', 'claude.ai.test'), LIMITS);
      expect((connects.mock.calls[0]![0] as tls.ConnectionOptions).secureContext).toBe(
        secureContextFor([testCa().caPem]),
      );
      connects.mockClear();
      const error = await failure(fetcher({ ca: undefined }).getJson(server.url('/roots.json'), LIMITS));
      expect((connects.mock.calls[0]![0] as tls.ConnectionOptions).secureContext).toBe(
        secureContextFor(undefined),
      );
      // The operator is told why: the socket's own error code and message.
      expect(error).toMatchObject({
        reason: 'network',
        message:
          'it could not be fetched (UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate)',
      });
    });

    test('a host refusing the connection is a network failure that names the socket error', async () => {
      const closed = net.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const { port } = closed.address() as AddressInfo;
      await new Promise((resolve) => closed.close(resolve));
      const error = await failure(fetcher().getJson(`https://claude.ai.test:${port}/doc.json`, LIMITS));
      expect(error).toMatchObject({
        reason: 'network',
        message: `it could not be fetched (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port})`,
      });
    });

    test('the request says what it accepts and who asks', async () => {
      server.json('/headers.json', { ok: true });
      await fetcher().getJson(server.url('/headers.json', 'claude.ai.test'), LIMITS);
      expect(server.lastHeaders('/headers.json')).toMatchObject({
        accept: 'application/json, application/jwk-set+json',
        'user-agent': 'express-mcp-oauth',
      });
    });
  });

  describe('the URL', () => {
    test.each([
      ['a user name only', 'https://user@claude.ai.test/doc.json'],
      ['a password only', 'https://:secret@claude.ai.test/doc.json'],
    ])('a URL carrying %s is refused before any lookup', async (_name, url) => {
      const resolveHost = jest.fn(resolveToLoopback);
      const error = await failure(fetcher({ resolveHost }).getJson(url, LIMITS));
      expect(error).toMatchObject({ reason: 'bad_url', message: 'the URL must not carry credentials' });
      expect(resolveHost).not.toHaveBeenCalled();
    });

    // Log flooding: a stranger's megabyte of "URL" does not end up in the operator's logs whole.
    test('a huge string that is not a URL is quoted only in part', async () => {
      const error = await failure(fetcher().getJson('x'.repeat(5000), LIMITS));
      expect(error).toMatchObject({ reason: 'bad_url', message: `"${'x'.repeat(200)}" is not a URL` });
    });

    test('an http URL is refused with its reason', async () => {
      const error = await failure(
        fetcher().getJson(server.url('/doc.json').replace('https', 'http'), LIMITS),
      );
      expect(error).toMatchObject({ reason: 'bad_url', message: 'only https URLs are fetched' });
    });
  });

  describe('the answer', () => {
    // Every answer but 200 is refused, redirects (which could lead to any address) included; the bounds of the
    // redirect range are checked on both sides.
    test.each([
      [201, 'it answered HTTP 201 instead of 200'],
      [204, 'it answered HTTP 204 instead of 200'],
      [299, 'it answered HTTP 299 instead of 200'],
      [300, 'it answered 300, a redirect, and redirects are not followed'],
      [301, 'it answered 301, a redirect, and redirects are not followed'],
      [307, 'it answered 307, a redirect, and redirects are not followed'],
      [399, 'it answered 399, a redirect, and redirects are not followed'],
      [400, 'it answered HTTP 400 instead of 200'],
      [410, 'it answered HTTP 410 instead of 200'],
    ])('an answer %i is refused', async (status, message) => {
      server.serve(`/answer-${status}.json`, {
        status,
        headers: { location: server.url('/doc.json') },
        body: status === 204 ? '' : { client_id: 'x' },
      });
      const error = await failure(fetcher().getJson(server.url(`/answer-${status}.json`), LIMITS));
      expect(error).toMatchObject({ reason: 'http_status', status, message });
    });

    test.each([
      'application/json; charset=utf-8',
      'application/json ; charset=utf-8',
      'Application/JSON',
      'application/jwk-set+json',
    ])('the content type %j is accepted', async (contentType) => {
      const path = `/type-${encodeURIComponent(contentType)}.json`;
      server.serve(path, { headers: { 'content-type': contentType }, body: { ok: true } });
      await expect(fetcher().getJson(server.url(path), LIMITS)).resolves.toMatchObject({
        body: { ok: true },
      });
    });

    test.each([
      ['text/html', 'text/html'],
      ['application/json-seq', 'application/json-seq'],
      ['an empty one', ''],
    ])('the content type %s is refused', async (_name, contentType) => {
      const path = `/bad-type-${encodeURIComponent(contentType)}.json`;
      server.serve(path, { headers: { 'content-type': contentType }, body: { ok: true } });
      const error = await failure(fetcher().getJson(server.url(path), LIMITS));
      expect(error).toMatchObject({
        reason: 'content_type',
        message: `its content type is "${contentType || 'missing'}" instead of application/json or application/jwk-set+json`,
      });
    });

    describe('from a server that leaves out or repeats headers', () => {
      let raw: Server;
      let port: number;
      beforeAll(async () => {
        const { keyPem, certPem } = testCa();
        raw = createServer({ key: keyPem, cert: certPem }, (req, res) => {
          if (req.url === '/no-type.json') {
            res.removeHeader('content-type');
            res.end('{}');
          } else {
            res.writeHead(200, [
              ['content-type', 'application/json'],
              ['cache-control', 'max-age=60'],
              ['cache-control', 'public'],
            ] as never);
            res.end('{"twice":true}');
          }
        });
        await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
        port = (raw.address() as AddressInfo).port;
      });
      afterAll(
        () =>
          new Promise<void>((resolve) => {
            raw.closeAllConnections();
            raw.close(() => resolve());
          }),
      );

      test('a document with no content type at all is refused as such', async () => {
        const error = await failure(fetcher().getJson(`https://claude.ai.test:${port}/no-type.json`, LIMITS));
        expect(error).toMatchObject({
          reason: 'content_type',
          message: 'its content type is "missing" instead of application/json or application/jwk-set+json',
        });
      });

      test('a header sent twice is read whole', async () => {
        await expect(fetcher().getJson(`https://claude.ai.test:${port}/twice.json`, LIMITS)).resolves.toEqual(
          { body: { twice: true }, cacheControl: 'max-age=60, public' },
        );
      });
    });

    // The size cap is exact, declared or not: a body of the limit passes, one byte more does not.
    test.each([
      ['declared', { 'content-length': String(MAX) }],
      ['chunked', { 'transfer-encoding': 'chunked' }],
    ])('a %s body of exactly the limit is accepted', async (name, headers) => {
      server.serve(`/exact-${name}.json`, { headers, body: jsonOfSize(MAX) });
      await expect(fetcher().getJson(server.url(`/exact-${name}.json`), LIMITS)).resolves.toMatchObject({
        body: 'x'.repeat(MAX - 2),
      });
    });

    test.each([
      [
        'declared',
        { 'content-length': String(MAX + 1) },
        `it is ${MAX + 1} bytes, more than the ${MAX} allowed`,
      ],
      ['chunked', { 'transfer-encoding': 'chunked' }, `it is more than the ${MAX} bytes allowed`],
    ])('a %s body one byte over the limit is refused', async (name, headers, message) => {
      server.serve(`/over-${name}.json`, { headers, body: jsonOfSize(MAX + 1) });
      const error = await failure(fetcher().getJson(server.url(`/over-${name}.json`), LIMITS));
      expect(error).toMatchObject({ reason: 'too_large', message });
    });

    test('a body that is not JSON is refused as such', async () => {
      server.serve('/not-json.json', { body: 'not json' });
      const error = await failure(fetcher().getJson(server.url('/not-json.json'), LIMITS));
      expect(error).toMatchObject({ reason: 'invalid_json', message: 'it is not valid JSON' });
    });
  });

  describe('slots', () => {
    let silent: SilentServer;
    beforeEach(async () => {
      silent = await startSilentServer();
    });
    afterEach(() => silent.stop());

    // A slot that was not given back after a failure would, one failure at a time, close the fetcher for good.
    test('every fetch gives its slot back, whether it failed or not', async () => {
      server.json('/slot.json', { ok: true });
      const fetch = fetcher({ limits: { perHost: 1, total: 1, maxWaiting: 0 } });
      const unresolvable: ResolveHost = async () => [];
      const failing = createSafeFetcher({
        allowLoopback: true,
        timeoutMs: 2000,
        ca: [testCa().caPem],
        resolveHost: unresolvable,
        limits: { perHost: 1, total: 1, maxWaiting: 0 },
      });
      for (let i = 0; i < 3; i += 1) {
        expect((await failure(failing.getJson('https://a.test/doc.json', LIMITS))).reason).toBe(
          'unresolvable',
        );
        await expect(fetch.getJson(server.url('/slot.json', 'claude.ai.test'), LIMITS)).resolves.toBeTruthy();
        expect((await failure(fetch.getJson(server.url('/missing.json'), LIMITS))).reason).toBe(
          'http_status',
        );
      }
    });

    test('past the waiting line a fetch is refused at once, and told so', async () => {
      const fetch = fetcher({ timeoutMs: 5000, limits: { perHost: 1, total: 1, maxWaiting: 0 } });
      const holder = failure(fetch.getJson(`https://stalled.test:${silent.port}/doc.json`, LIMITS));
      await silent.connections(1);
      const error = await failure(fetch.getJson(server.url('/doc.json'), LIMITS));
      expect(error).toMatchObject({ reason: 'busy', message: 'too many fetches are waiting already' });
      silent.sockets[0]!.destroy();
      expect((await holder).reason).toBe('network');
    });
  });
});
