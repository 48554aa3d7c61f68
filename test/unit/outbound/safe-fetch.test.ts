// The SSRF-safe fetcher against a real local HTTPS server: what it fetches, every way it refuses, and proof that a
// refused address is never connected to (no test here reaches beyond loopback: other addresses come from an
// injected resolver, and the connection spies show that no socket was opened for them).
import net from 'node:net';
import tls from 'node:tls';
import type { ResolveHost } from '../../../lib/outbound/safe-fetch';
import { secureContextFor } from '../../../lib/outbound/secure-contexts';
import { resolveToLoopback, startDocumentServer, type DocumentServer } from '../../helpers/document-server';
import { blockConnections, loopbackFetcher } from '../../helpers/loopback-fetcher';
import { startSilentServer, type SilentServer } from '../../helpers/silent-server';
import { testCa } from '../../helpers/test-ca';
import { stallTest } from '../../helpers/edit-loop';

const JSON_ONLY = { maxBytes: 5120, contentTypes: ['application/json'] };

describe('safe fetch', () => {
  let server: DocumentServer;
  beforeAll(async () => {
    server = await startDocumentServer();
  });
  afterAll(() => server.stop());
  afterEach(() => jest.restoreAllMocks());

  const fetcher = loopbackFetcher;

  // claude.ai.test exists in no DNS: that this succeeds shows the socket went to the address the injected resolver
  // gave and the check passed (no second lookup anywhere), while the Host header still names the host.
  test('fetches JSON from a host whose addresses were checked, without cookies or credentials', async () => {
    server.json('/doc.json', { hello: 'world' }, 'max-age=600');
    const result = await fetcher().getJson(server.url('/doc.json', 'claude.ai.test'), JSON_ONLY);
    expect(result).toEqual({ body: { hello: 'world' }, cacheControl: 'max-age=600' });
    const sent = server.lastHeaders('/doc.json')!;
    expect(sent.cookie).toBeUndefined();
    expect(sent.authorization).toBeUndefined();
    expect(sent.host).toBe(`claude.ai.test:${server.port}`);
  });

  test('a loopback address is refused unless allowed, and nothing is connected', async () => {
    server.json('/doc.json', { ok: true });
    const spies = blockConnections();
    await expect(
      fetcher({ allowLoopback: false }).getJson(server.url('/doc.json'), JSON_ONLY),
    ).rejects.toThrow(/127\.0\.0\.1, a loopback address/);
    await expect(
      fetcher({ allowLoopback: false }).getJson(server.url('/doc.json', 'claude.ai.test'), JSON_ONLY),
    ).rejects.toThrow(/loopback/);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  test.each([
    ['private (10/8)', '10.0.0.7'],
    ['private (172.16/12)', '172.20.1.1'],
    ['private (192.168/16)', '192.168.0.10'],
    ['link-local cloud metadata', '169.254.169.254'],
    ['CGNAT', '100.64.3.4'],
    ['multicast', '224.0.0.251'],
    ['unspecified', '0.0.0.0'],
    ['broadcast', '255.255.255.255'],
    ['IPv6 loopback', '::1'],
    ['IPv6 unique local', 'fd00::5'],
    ['IPv6 link-local', 'fe80::1'],
    ['IPv4-mapped private', '::ffff:10.0.0.1'],
    ['IPv4-mapped metadata', '::ffff:169.254.169.254'],
    ['SIIT (IPv4-translated) metadata', '::ffff:0:a9fe:a9fe'],
    ['NAT64 private', '64:ff9b::c0a8:1'],
    ['IPv6 outside global unicast (1::1)', '1::1'],
    ['IPv6 outside global unicast (4000::1)', '4000::1'],
  ])('a name resolving to a %s address is refused before any connection', async (_name, address) => {
    const spies = blockConnections();
    const resolveHost = jest.fn<ReturnType<ResolveHost>, [string]>(async () => [
      { address, family: net.isIP(address) },
    ]);
    await expect(
      fetcher({ allowLoopback: false, resolveHost }).getJson('https://client.example/doc.json', JSON_ONLY),
    ).rejects.toMatchObject({ reason: 'refused_address', message: expect.stringMatching(/never fetched/) });
    expect(resolveHost).toHaveBeenCalledWith('client.example');
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  test('a name answering a public address first and a private one second is refused outright', async () => {
    const spies = blockConnections();
    const resolveHost: ResolveHost = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ];
    await expect(
      fetcher({ allowLoopback: false, resolveHost }).getJson('https://client.example/doc.json', JSON_ONLY),
    ).rejects.toThrow(/10\.0\.0\.1, a private address/);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  test('an IP literal in the URL is checked too (no resolver involved)', async () => {
    const resolveHost = jest.fn(resolveToLoopback);
    const spies = blockConnections();
    await expect(
      fetcher({ allowLoopback: false, resolveHost }).getJson('https://[fd00::1]/doc.json', JSON_ONLY),
    ).rejects.toThrow(/private/);
    await expect(
      fetcher({ resolveHost }).getJson('https://169.254.169.254/latest', JSON_ONLY),
    ).rejects.toThrow(/link-local/);
    expect(resolveHost).not.toHaveBeenCalled();
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  test('a host that does not resolve is a clear error', async () => {
    const resolveHost: ResolveHost = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await expect(fetcher({ resolveHost }).getJson('https://nowhere.test/x', JSON_ONLY)).rejects.toThrow(
      /could not be resolved/,
    );
  });

  test.each([
    ['http URL', 'http://127.0.0.1/doc.json', /only https/],
    ['credentials in the URL', 'https://user:pw@claude.ai.test/doc.json', /credentials/],
    ['not a URL', 'https://', /not a URL/],
  ])('refuses a %s', async (_name, url, message) => {
    await expect(fetcher().getJson(url, JSON_ONLY)).rejects.toThrow(message);
  });

  test.each([
    ['a redirect', { status: 302, headers: { location: 'https://127.0.0.1/other' } }, /redirect/],
    ['a 404', { status: 404 }, /HTTP 404/],
    ['a 500', { status: 500 }, /HTTP 500/],
    [
      'HTML',
      { headers: { 'content-type': 'text/html' }, body: '<html></html>' },
      /content type is "text\/html"/,
    ],
    ['invalid JSON', { body: '{"client_id": ' }, /not valid JSON/],
    ['a declared oversize body', { body: { pad: 'x'.repeat(6000) } }, /more than the 5120/],
    [
      'an undeclared oversize body (chunked)',
      { headers: { 'transfer-encoding': 'chunked' }, body: { pad: 'x'.repeat(6000) } },
      /more than the 5120/,
    ],
  ])('refuses %s', async (_name, route, message) => {
    server.serve('/bad.json', route);
    await expect(fetcher().getJson(server.url('/bad.json'), JSON_ONLY)).rejects.toThrow(message);
  });

  // The status tells a document withdrawn (404, 410: its cached copy is dropped) from a host failing for now.
  test.each([404, 410, 503])('an answer %s carries its status', async (code) => {
    server.serve(`/status-${code}.json`, { status: code });
    await expect(fetcher().getJson(server.url(`/status-${code}.json`), JSON_ONLY)).rejects.toMatchObject({
      reason: 'http_status',
      status: code,
    });
  });

  describe('one deadline for the whole exchange', () => {
    let silent: SilentServer;
    beforeEach(async () => {
      silent = await startSilentServer();
    });
    afterEach(() => silent.stop());

    // Each phase that a stranger's host can stall, with a 300 ms deadline: the fetch fails at it, far from undici's
    // own 10 s connect timeout (which a stalled TLS handshake used to wait for) and body timeouts.
    test.each([
      [
        'the lookup (a resolver that never answers)',
        () => ({
          url: 'https://no-answer.test/doc.json',
          options: { resolveHost: () => new Promise<never>(() => undefined) },
        }),
      ],
      [
        'the TLS handshake (a server that accepts and never answers the ClientHello)',
        () => ({ url: `https://stalled.test:${silent.port}/doc.json`, options: {} }),
      ],
      [
        'the headers (a server that answers late)',
        () => {
          server.serve('/slow.json', { delayMs: 1500, body: { late: true } });
          return { url: server.url('/slow.json'), options: {} };
        },
      ],
      [
        'the body (a server that stops after its headers)',
        () => {
          server.serve('/hang.json', { hangAfterHeaders: true, body: { late: true } });
          return { url: server.url('/hang.json'), options: {} };
        },
      ],
    ])('a stall in %s fails at the deadline', async (_phase, setUp) => {
      const { url, options } = setUp();
      const started = Date.now();
      await expect(fetcher({ timeoutMs: 300, ...options }).getJson(url, JSON_ONLY)).rejects.toMatchObject({
        reason: 'timeout',
        message: 'it did not answer within 300 ms',
      });
      expect(Date.now() - started).toBeLessThan(3000);
    });

    test('a stalled TLS handshake has its socket closed at the deadline, not left to undici', async () => {
      const started = Date.now();
      const fetching = fetcher({ timeoutMs: 300 }).getJson(
        `https://stalled.test:${silent.port}/x`,
        JSON_ONLY,
      );
      await expect(fetching).rejects.toMatchObject({ reason: 'timeout' });
      // Closed from the fetcher's side at the deadline: left to undici, the socket stayed open until its own 10 s
      // connect timeout, a socket per stalled fetch.
      await silent.closed(0);
      expect(Date.now() - started).toBeLessThan(3000);
    });
  });

  describe('fetches at once', () => {
    let servers: SilentServer[];
    beforeEach(async () => {
      servers = await Promise.all([startSilentServer(), startSilentServer(), startSilentServer()]);
    });
    afterEach(() => Promise.all(servers.map((silent) => silent.stop())));
    const fail = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: { reason?: string }) => error.reason,
      );

    test('at most 4 run to one host: a fifth connects only when one of them ends, another host goes ahead', async () => {
      const [stalled, other] = servers as [SilentServer, SilentServer];
      const fetch = fetcher({ timeoutMs: 5000 });
      const five = Array.from({ length: 5 }, () =>
        fail(fetch.getJson(`https://stalled.test:${stalled.port}/doc.json`, JSON_ONLY)),
      );
      await stalled.connections(4);
      const elsewhere = fail(fetch.getJson(`https://other.test:${other.port}/doc.json`, JSON_ONLY));
      await other.connections(1);
      expect(stalled.sockets).toHaveLength(4);
      stalled.sockets[0]!.destroy();
      await stalled.connections(5);
      expect(stalled.maxOpen).toBe(4);
      for (const socket of [...stalled.sockets, ...other.sockets]) socket.destroy();
      expect(await Promise.all([...five, elsewhere])).toEqual(Array(6).fill('network'));
    });

    // The attack: a stranger's stalling URLs hold every slot until their deadline; a legitimate document's fetch
    // that waited meanwhile used to get its slot with what was left of one deadline (milliseconds) and fail as
    // `timeout`, which is remembered against the legitimate URL. Its deadline now starts at its slot.
    stallTest(
      'a fetch that waited for a slot gets the whole deadline from its slot on: stalls it waited behind cannot time it out',
      async () => {
        const [stalled] = servers as [SilentServer];
        // An answer that takes half the deadline: what was left of a deadline started before the wait is not enough.
        server.serve('/late.json', { delayMs: 150, body: { ok: true } });
        const fetch = fetcher({ timeoutMs: 300, limits: { perHost: 4, total: 1, maxWaiting: 8 } });
        const holder = fail(fetch.getJson(`https://stalled.test:${stalled.port}/doc.json`, JSON_ONLY));
        await stalled.connections(1);
        const victim = fetch.getJson(server.url('/late.json', 'claude.ai.test'), JSON_ONLY);
        expect(await holder).toBe('timeout');
        await expect(victim).resolves.toMatchObject({ body: { ok: true } });
      },
    );

    stallTest(
      'a fetch that gets no slot within its wait is busy (never a timeout, which would be remembered)',
      async () => {
        const [stalled] = servers as [SilentServer];
        server.json('/unreached.json', { ok: true });
        const fetch = fetcher({ timeoutMs: 300, limits: { perHost: 4, total: 1, maxWaiting: 8 } });
        const holder = fail(fetch.getJson(`https://stalled.test:${stalled.port}/a.json`, JSON_ONLY));
        await stalled.connections(1);
        // Next in line: it gets the holder's slot at the holder's deadline, and stalls for a deadline of its own.
        const next = fail(fetch.getJson(`https://stalled.test:${stalled.port}/b.json`, JSON_ONLY));
        const last = fetch.getJson(server.url('/unreached.json', 'claude.ai.test'), JSON_ONLY);
        await expect(last).rejects.toMatchObject({
          reason: 'busy',
          message: 'no fetch slot for claude.ai.test came free within 300 ms',
        });
        expect(await Promise.all([holder, next])).toEqual(['timeout', 'timeout']);
        expect(server.hits('/unreached.json')).toBe(0);
      },
    );

    test('the limit in all holds whatever the host; past the waiting line a fetch is refused at once', async () => {
      const [first, second, witness] = servers as [SilentServer, SilentServer, SilentServer];
      const fetch = fetcher({ timeoutMs: 5000, limits: { perHost: 4, total: 2, maxWaiting: 1 } });
      const running = ['a.test', 'b.test'].map((host) =>
        fail(fetch.getJson(`https://${host}:${first.port}/doc.json`, JSON_ONLY)),
      );
      await first.connections(2);
      const waiting = fail(fetch.getJson(`https://c.test:${second.port}/doc.json`, JSON_ONLY));
      expect(await fail(fetch.getJson(`https://d.test:${second.port}/doc.json`, JSON_ONLY))).toBe('busy');
      // A fetcher of its own connects meanwhile: the waiting fetch had every chance to connect, and did not.
      const unrelated = fail(
        fetcher({ timeoutMs: 5000 }).getJson(`https://w.test:${witness.port}/`, JSON_ONLY),
      );
      await witness.connections(1);
      expect(second.sockets).toHaveLength(0);
      first.sockets[1]!.destroy();
      await second.connections(1);
      for (const socket of [...first.sockets, ...second.sockets, ...witness.sockets]) socket.destroy();
      expect(await Promise.all([...running, waiting, unrelated])).toEqual(Array(4).fill('network'));
    });
  });

  // Handed `ca` on each connection, tls.connect built a secure context per fetch, parsing every root certificate
  // again: tens of milliseconds of blocking CPU that any stranger naming client_id URLs could make the server spend.
  test('one TLS context for every fetch: trusted authorities are not parsed again per fetch or per router', async () => {
    server.json('/context.json', { ok: true });
    const contexts = jest.spyOn(tls, 'createSecureContext');
    const connects = jest.spyOn(tls, 'connect');
    // Two fetchers with the same authorities, as two routers of one process would have.
    for (const fetch of [fetcher(), fetcher()]) {
      for (let i = 0; i < 2; i += 1) {
        await expect(
          fetch.getJson(server.url('/context.json', 'claude.ai.test'), JSON_ONLY),
        ).resolves.toEqual({
          body: { ok: true },
          cacheControl: undefined,
        });
      }
    }
    // At most once: an earlier test of this file may have made it already.
    expect(contexts.mock.calls.length).toBeLessThanOrEqual(1);
    expect(connects).toHaveBeenCalledTimes(4);
    const used = new Set(
      connects.mock.calls.map(([options]) => (options as tls.ConnectionOptions).secureContext),
    );
    expect(used.size).toBe(1);
    expect([...used][0]).toBe(secureContextFor([testCa().caPem]));
  });

  test('a fetcher keeps its context even when more sets of authorities than the process keeps come and go', async () => {
    server.json('/kept.json', { ok: true });
    const fetch = fetcher();
    await fetch.getJson(server.url('/kept.json', 'claude.ai.test'), JSON_ONLY);
    // Nine other sets through the process-wide cache, which keeps eight: this fetcher's set is no longer in it.
    const { caPem } = testCa();
    for (let extra = 1; extra <= 9; extra += 1)
      secureContextFor(Array.from({ length: extra + 40 }, () => caPem));
    const contexts = jest.spyOn(tls, 'createSecureContext');
    const connects = jest.spyOn(tls, 'connect');
    await fetch.getJson(server.url('/kept.json', 'claude.ai.test'), JSON_ONLY);
    expect(contexts).not.toHaveBeenCalled();
    expect(connects).toHaveBeenCalledTimes(1);
  });

  test('a certificate from an authority nobody trusts is refused', async () => {
    server.json('/doc.json', { ok: true });
    await expect(fetcher({ ca: undefined }).getJson(server.url('/doc.json'), JSON_ONLY)).rejects.toThrow(
      /could not be fetched/,
    );
  });
});
