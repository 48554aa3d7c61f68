// The SSRF-safe fetcher against a real local HTTPS server: what it fetches, every way it refuses, and proof that a
// refused address is never connected to (no test here reaches beyond loopback: other addresses come from an
// injected resolver, and the connection spies show that no socket was opened for them).
import net from 'node:net';
import tls from 'node:tls';
import { createSafeFetcher, type ResolveHost, type SafeFetchOptions } from '../../../lib/cimd/safe-fetch';
import { resolveToLoopback, startDocumentServer, type DocumentServer } from '../../helpers/document-server';
import { testCa } from '../../helpers/test-ca';

const JSON_ONLY = { maxBytes: 5120, contentTypes: ['application/json'] };

describe('safe fetch', () => {
  let server: DocumentServer;
  beforeAll(async () => {
    server = await startDocumentServer();
  });
  afterAll(() => server.stop());
  afterEach(() => jest.restoreAllMocks());

  const fetcher = (options: Partial<SafeFetchOptions> = {}) =>
    createSafeFetcher({
      allowLoopback: true,
      timeoutMs: 2000,
      ca: [testCa().caPem],
      resolveHost: resolveToLoopback,
      ...options,
    });

  /**
   * Spies that replace the socket constructors outright: should the guard ever fail, the attempt is recorded and
   * stopped here, and no packet leaves for the refused address.
   */
  function spyOnConnections() {
    const blocked = () => {
      throw new Error('a connection was attempted');
    };
    return [
      jest.spyOn(tls, 'connect').mockImplementation(blocked),
      jest.spyOn(net, 'connect').mockImplementation(blocked),
      jest.spyOn(net, 'createConnection').mockImplementation(blocked),
    ];
  }

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
    const spies = spyOnConnections();
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
    ['NAT64 private', '64:ff9b::c0a8:1'],
  ])('a name resolving to a %s address is refused before any connection', async (_name, address) => {
    const spies = spyOnConnections();
    const resolveHost = jest.fn<ReturnType<ResolveHost>, [string]>(async () => [
      { address, family: net.isIP(address) },
    ]);
    await expect(
      fetcher({ allowLoopback: false, resolveHost }).getJson('https://client.example/doc.json', JSON_ONLY),
    ).rejects.toThrow(/which is never fetched/);
    expect(resolveHost).toHaveBeenCalledWith('client.example');
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  test('a name answering a public address first and a private one second is refused outright', async () => {
    const spies = spyOnConnections();
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
    const spies = spyOnConnections();
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

  test('a slow server meets the deadline', async () => {
    server.serve('/slow.json', { delayMs: 1500, body: { late: true } });
    const started = Date.now();
    await expect(fetcher({ timeoutMs: 300 }).getJson(server.url('/slow.json'), JSON_ONLY)).rejects.toThrow(
      /did not answer within 300 ms/,
    );
    expect(Date.now() - started).toBeLessThan(1200);
  });

  test('a certificate from an authority nobody trusts is refused', async () => {
    server.json('/doc.json', { ok: true });
    await expect(fetcher({ ca: undefined }).getJson(server.url('/doc.json'), JSON_ONLY)).rejects.toThrow(
      /could not be fetched/,
    );
  });
});
