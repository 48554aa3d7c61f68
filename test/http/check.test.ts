// The deployment check against real servers on loopback (a correct one, and each mistake people make when they put
// one in production), then rule by rule against answers given from memory, for what loopback cannot show (https).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { checkDeployment, type CheckReport } from '../../lib/check/deployment';
import { runCli } from '../../lib/check/cli';
import { createJwtSigner } from '../../lib/crypto/signer';
import { createOAuthRouter, type OAuthRouter } from '../../lib/router';
import type { OAuthRouterOptions } from '../../lib/options';
import { createMemoryStore } from '../../lib/store/memory';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { memoryProvider } from '../helpers/mcp-client-provider';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

interface Deployment {
  url: string;
  close(): Promise<void>;
}

/** Starts an app on loopback; `setup` mounts what the deployment under test mounts, knowing its own origin. */
async function deploy(setup: (app: express.Express, origin: string) => void): Promise<Deployment> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const app = express();
  setup(app, origin);
  server.on('request', app);
  return {
    url: `${origin}/mcp`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const routerOptions = (issuer: string, extra: Partial<OAuthRouterOptions> = {}): OAuthRouterOptions => ({
  issuer,
  scopes: { 'notes:read': 'Read your notes' },
  authenticateUser: () => null,
  rateLimits: false,
  ...extra,
});

/** The deployment the README shows: the router at the root, the bearer check in front of /mcp. */
const correct = (app: express.Express, issuer: string, extra?: Partial<OAuthRouterOptions>): OAuthRouter => {
  const oauth = createOAuthRouter(createMemoryStore(), createJwtSigner(), routerOptions(issuer, extra));
  app.use(oauth);
  app.post('/mcp', oauth.requireBearer(), (_req, res) => void res.json({}));
  return oauth;
};

type Setup = (app: express.Express, origin: string) => void;

/** An issuer with a path (`/tenant`), the MCP endpoint at the root; its well-known documents mounted there or not. */
const pathIssuer =
  ({ wellKnownAtRoot }: { wellKnownAtRoot: boolean }): Setup =>
  (app, origin) => {
    const oauth = createOAuthRouter(createMemoryStore(), createJwtSigner(), {
      ...routerOptions(`${origin}/tenant`),
      resources: [`${origin}/mcp`],
    });
    if (wellKnownAtRoot) app.use(oauth.wellKnown);
    app.use('/tenant', oauth);
    app.post('/mcp', oauth.requireBearer(), (_req, res) => void res.json({}));
  };

const problems = (report: CheckReport) => report.findings.filter((finding) => !finding.ok);

describe('against servers on loopback', () => {
  const open: Array<{ close(): unknown }> = [];
  afterEach(async () => {
    for (const item of open.splice(0)) await item.close();
  });
  const started = async (setup: Parameters<typeof deploy>[0]) => {
    const deployment = await deploy(setup);
    open.push(deployment);
    return deployment;
  };

  test('a correct deployment passes, and the command line exits 0', async () => {
    const { url } = await started((app, origin) => correct(app, origin));
    const report = await checkDeployment(url);
    expect(problems(report)).toEqual([]);
    const origin = new URL(url).origin;
    expect(report.findings.map((finding) => finding.message)).toEqual([
      `POST ${url} without a token: 401, naming ${origin}/.well-known/oauth-protected-resource/mcp.`,
      `The protected resource metadata names this resource (${url}).`,
      `The authorization server metadata names its issuer (${origin}).`,
      'Authorization codes with PKCE S256 are offered.',
      'Clients can get a client id: dynamic registration and Client ID Metadata Documents.',
    ]);
    const lines: string[] = [];
    expect(await runCli(['check', url], (line) => void lines.push(line))).toBe(0);
    expect(lines.at(-1)).toBe('An MCP client can connect.');
  });

  test('an issuer with a path, its well-known documents mounted at the root as README says', async () => {
    const { url } = await started(pathIssuer({ wellKnownAtRoot: true }));
    expect(problems(await checkDeployment(url))).toEqual([]);
  });

  test.each([
    [
      'no bearer check in front of /mcp',
      (app: express.Express, origin: string) => {
        correct(app, origin);
        app.post('/open/mcp', (_req, res) => void res.json({}));
      },
      '/open/mcp',
      /answered 200, not 401/,
      /requireBearer/,
    ],
    [
      'an issuer naming another host than the one clients reach',
      (app: express.Express, origin: string) => void correct(app, origin.replace('127.0.0.1', 'localhost')),
      '/mcp',
      /metadata says resource "http:\/\/localhost:\d+\/mcp", but clients reach http:\/\/127\.0\.0\.1:\d+\/mcp/,
      /announces the host localhost:\d+ but you reached 127\.0\.0\.1:\d+/,
    ],
    [
      'the well-known documents not mounted for an issuer with a path',
      pathIssuer({ wellKnownAtRoot: false }),
      '/mcp',
      /No protected resource metadata for .*: Resource server does not implement OAuth 2\.0 Protected Resource Metadata/,
      /oauth\.wellKnown\) at the root/,
    ],
  ] as Array<[string, Setup, string, RegExp, RegExp]>)('%s', async (_name, setup, path, problem, fix) => {
    const { url } = await started(setup);
    const report = await checkDeployment(url.replace(/\/mcp$/, path));
    // The first problem is the one named; later steps may fail for the same cause.
    expect(problems(report)[0]).toEqual(
      expect.objectContaining({ message: expect.stringMatching(problem), fix: expect.stringMatching(fix) }),
    );
    const lines: string[] = [];
    expect(await runCli(['check', url.replace(/\/mcp$/, path)], (line) => void lines.push(line))).toBe(1);
    expect(lines.at(-1)).toMatch(/^\d+ problems?: an MCP client cannot connect\.$/);
  });

  test('behind a proxy on another port, with the issuer still the app’s own address', async () => {
    const app = await started((app, origin) => void correct(app, origin));
    const proxy: TcpProxy = await startTcpProxy(Number(new URL(app.url).port));
    open.push({ close: () => proxy.stop() });
    const reached = `http://127.0.0.1:${proxy.port}/mcp`;
    const report = await checkDeployment(reached);
    expect(problems(report)).toEqual([
      {
        ok: false,
        message: `The protected resource metadata says resource "${app.url}", but clients reach ${reached} (RFC 9728 §3.3).`,
        fix: `The server announces the host ${new URL(app.url).host} but you reached 127.0.0.1:${proxy.port}: set the issuer to the public URL clients use.`,
      },
    ]);
  });

  // The check and the MCP SDK client read discovery alike: where the check passes, the client gets as far as the
  // authorization redirect (discovery, registration, PKCE); where it names a discovery problem, the client fails too.
  test.each([
    ['a correct deployment', (app: express.Express, origin: string) => void correct(app, origin), true],
    ['an issuer with a path', pathIssuer({ wellKnownAtRoot: true }), true],
    [
      'another host in the issuer',
      (app: express.Express, origin: string) => void correct(app, origin.replace('127.0.0.1', 'localhost')),
      false,
    ],
    ['well-known documents not mounted', pathIssuer({ wellKnownAtRoot: false }), false],
  ] as Array<[string, Setup, boolean]>)('the SDK client agrees: %s', async (_name, setup, connects) => {
    const { url } = await started(setup);
    const { provider } = memoryProvider('http://127.0.0.1:1/callback');
    const outcome = await auth(provider, { serverUrl: url }).catch((error: Error) => error.message);
    expect({ check: (await checkDeployment(url)).ok, sdk: outcome === 'REDIRECT' }).toEqual({
      check: connects,
      sdk: connects,
    });
  });

  test('a server that cannot be reached, and a command line that is not a check', async () => {
    const { url, close } = await deploy((app, origin) => void correct(app, origin));
    await close();
    const report = await checkDeployment(url, { timeoutMs: 2_000 });
    expect(problems(report)).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/could not be reached/),
        fix: 'Check the URL, DNS, the firewall and that the server runs.',
      }),
    ]);
    for (const args of [[], ['check'], ['chek', url], ['check', url, 'more']]) {
      const lines: string[] = [];
      expect(await runCli(args, (line) => void lines.push(line))).toBe(2);
      expect(lines).toEqual([expect.stringMatching(/^Usage: express-mcp-oauth check <mcp url>/)]);
    }
  });
});

describe('rule by rule, from answers given in memory', () => {
  const MCP = 'https://api.example.com/mcp';
  const PRM_PATH = '/.well-known/oauth-protected-resource/mcp';
  const good = {
    challenge: `Bearer resource_metadata="https://api.example.com${PRM_PATH}"`,
    status: 401,
    prm: { resource: MCP, authorization_servers: ['https://api.example.com'] } as Record<string, unknown>,
    asm: {
      issuer: 'https://api.example.com',
      authorization_endpoint: 'https://api.example.com/authorize',
      token_endpoint: 'https://api.example.com/token',
      registration_endpoint: 'https://api.example.com/register',
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
    } as Record<string, unknown>,
    /** Where the authorization server's metadata is served (path of the URL, any scheme and host). */
    asmPath: '/.well-known/oauth-authorization-server',
    cors: '*' as string | null,
    /** A body for the protected resource metadata instead of the JSON: a stream of this many bytes, or a stall. */
    prmBody: undefined as undefined | 'huge' | 'stall',
  };
  type Server = typeof good;
  /** A fetch that answers as a deployment with `changes` would, by path; anything else is a 404. */
  /** What the check sent, in order: each URL with its request (headers as a plain object). */
  let sent: Array<{
    url: string;
    method: string;
    headers: Record<string, string>;
    body: string | undefined;
  }> = [];
  const fakeFetch =
    (changes: Partial<Server>): typeof fetch =>
    async (input, init) => {
      const server = { ...good, ...changes };
      const requestHeaders = Object.fromEntries(new Headers(init?.headers).entries());
      sent.push({
        url: String(input),
        method: init?.method ?? 'GET',
        headers: requestHeaders,
        body: typeof init?.body === 'string' ? init.body : undefined,
      });
      // 'reflect': a server that allows the origin that asked, as many CORS setups do.
      const allowed = server.cors === 'reflect' ? requestHeaders.origin : server.cors;
      const headers = {
        'content-type': 'application/json',
        ...(allowed ? { 'access-control-allow-origin': allowed } : {}),
      };
      const path = new URL(String(input)).pathname;
      if (path === '/mcp')
        return new Response('{}', {
          status: server.status,
          headers: { 'www-authenticate': server.challenge, location: '/elsewhere' },
        });
      if (path === PRM_PATH && server.prmBody === 'huge') {
        const chunk = new Uint8Array(64 * 1024);
        return new Response(new ReadableStream({ pull: (controller) => controller.enqueue(chunk) }), {
          headers,
        });
      }
      if (path === PRM_PATH && server.prmBody === 'stall') {
        const body = new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{'));
            init?.signal?.addEventListener('abort', () => controller.error(init.signal!.reason));
          },
        });
        return new Response(body, { headers });
      }
      if (path === PRM_PATH) return new Response(JSON.stringify(server.prm), { headers });
      if (path === server.asmPath) return new Response(JSON.stringify(server.asm), { headers });
      return new Response('not found', { status: 404 });
    };

  test.each([
    ['nothing wrong', {}, []],
    [
      'a proxy terminating TLS, the server announcing http',
      { prm: { ...good.prm, resource: 'http://api.example.com/mcp' } },
      [/announces http:\/\/ but you reached it over https:\/\/: behind a proxy that terminates TLS/],
    ],
    [
      'a resource with a trailing slash (the SDK refuses a resource longer than the URL)',
      { prm: { ...good.prm, resource: `${MCP}/` } },
      [/Set the router's resources to the public URL/],
    ],
    [
      'a resource naming the whole origin (the SDK accepts a prefix)',
      { prm: { ...good.prm, resource: 'https://api.example.com' } },
      [],
    ],
    [
      'an issuer in the metadata other than the one the resource names',
      { asm: { ...good.asm, issuer: 'https://auth.example.com' } },
      [/announces the host auth\.example\.com but you reached api\.example\.com/],
    ],
    [
      'an issuer written with a trailing slash',
      { asm: { ...good.asm, issuer: 'https://api.example.com/' } },
      [],
    ],
    [
      'an authorization server over http',
      { prm: { ...good.prm, authorization_servers: ['http://api.example.com'] } },
      [/Serve it over https/, /announces https:\/\/ but you reached it over http:\/\//],
    ],
    [
      'metadata only at the OpenID Connect address',
      {
        asmPath: '/.well-known/openid-configuration',
        asm: {
          ...good.asm,
          jwks_uri: 'https://api.example.com/jwks',
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        },
      },
      [],
    ],
    [
      'no authorization server metadata anywhere',
      { asmPath: '/nowhere' },
      [/oauth\.wellKnown for an issuer with a path/],
    ],
    [
      'no "code" response type',
      { asm: { ...good.asm, response_types_supported: ['token'] } },
      [/Serve the metadata the router builds, unchanged/],
    ],
    [
      'an endpoint that is not a URL',
      { asm: { ...good.asm, authorization_endpoint: '/authorize' } },
      [/Serve the metadata the router builds, unchanged/],
    ],
    ['no S256', { asm: { ...good.asm, code_challenge_methods_supported: ['plain'] } }, [/require PKCE S256/]],
    [
      'no way to get a client id',
      { asm: { ...good.asm, registration_endpoint: undefined } },
      [/Keep dynamic registration or Client ID Metadata Documents on/],
    ],
    [
      'CORS headers stripped',
      { cors: null },
      [/browser-based clients read the metadata/, /browser-based clients read the metadata/],
    ],
    [
      'CORS narrowed to one origin',
      { cors: 'https://only.example' },
      [/Do not strip or narrow/, /Do not strip or narrow/],
    ],
    [
      'a challenge without resource_metadata (clients fall back to the well-known URL)',
      { challenge: 'Bearer realm="api"' },
      [],
    ],
    [
      'a redirect instead of a 401',
      { status: 302 },
      [/It redirects to \/elsewhere: give clients the final URL/],
    ],
    ['a 200 without a token', { status: 200 }, [/Put oauth\.requireBearer\(\) in front/]],
    ['metadata larger than 1 MiB', { prmBody: 'huge' }, [/oauth\.wellKnown\) at the root/]],
    ['metadata that never finishes', { prmBody: 'stall' }, [/oauth\.wellKnown\) at the root/]],
    ['a redirect with the first 3xx status', { status: 300 }, [/It redirects to \/elsewhere/]],
    ['a 400 is no redirect', { status: 400 }, [/Put oauth\.requireBearer\(\) in front/]],
    [
      'resource metadata naming no authorization server: the MCP server’s origin, as clients fall back',
      { prm: { resource: MCP } },
      [],
    ],
    [
      'no code_challenge_methods_supported at all',
      { asm: { ...good.asm, code_challenge_methods_supported: undefined } },
      [/require PKCE S256/],
    ],
    ['CORS reflecting the origin that asks', { cors: 'reflect' }, []],
    ['CORS allowing exactly the origin that asked', { cors: 'https://client.example' }, []],
  ] as Array<[string, Partial<Server>, RegExp[]]>)('%s', async (_name, changes, fixes) => {
    const report = await checkDeployment(MCP, { fetch: fakeFetch(changes), timeoutMs: 300 });
    expect(problems(report).map((finding) => finding.fix)).toEqual(
      fixes.map((fix) => expect.stringMatching(fix)),
    );
    expect(report.ok).toBe(fixes.length === 0);
    // Every finding says what it found in a sentence, and every problem how to fix it.
    for (const finding of report.findings) expect(finding.message).toMatch(/^\S.{20,}/s);
    for (const finding of problems(report)) expect(finding.fix).toMatch(/^\S.{20,}\.$/s);
  });

  test('the first request is an MCP initialize posted as JSON, accepting JSON or an event stream', async () => {
    sent = [];
    await checkDeployment(MCP, { fetch: fakeFetch({}), timeoutMs: 300 });
    const [first] = sent;
    expect(first).toMatchObject({
      url: MCP,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    expect(JSON.parse(first!.body!)).toEqual({
      jsonrpc: '2.0',
      id: expect.anything(),
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: expect.any(Object),
        clientInfo: { name: 'express-mcp-oauth', version: '1' },
      },
    });
    // The CORS probes come from another origin, as a browser-based client's would.
    expect(sent.filter((request) => request.headers.origin === 'https://client.example')).toHaveLength(2);
  });

  test('a healthy deployment is told what works, in words', async () => {
    const report = await checkDeployment(MCP, { fetch: fakeFetch({}), timeoutMs: 300 });
    expect(report.findings.map((finding) => finding.message)).toEqual([
      `POST ${MCP} without a token: 401, naming https://api.example.com${PRM_PATH}.`,
      `The protected resource metadata names this resource (${MCP}).`,
      'The authorization server metadata names its issuer (https://api.example.com).',
      'Authorization codes with PKCE S256 are offered.',
      'Clients can get a client id: dynamic registration.',
    ]);
  });

  test.each([
    [
      'an http authorization server',
      { prm: { ...good.prm, authorization_servers: ['http://api.example.com'] } },
      /^The authorization server is served over http at http:\/\/api\.example\.com\.$/,
    ],
    [
      'no metadata anywhere',
      { asmPath: '/nowhere' },
      /^No authorization server metadata for https:\/\/api\.example\.com\/? at https:\/\/api\.example\.com\/\.well-known\/oauth-authorization-server, /,
    ],
    [
      'a challenge without resource_metadata',
      { challenge: 'Bearer realm="api"' },
      /401 \(no resource_metadata in WWW-Authenticate/,
    ],
  ] as Array<[string, Partial<Server>, RegExp]>)(
    '%s: the finding names it',
    async (_name, changes, message) => {
      const report = await checkDeployment(MCP, { fetch: fakeFetch(changes), timeoutMs: 300 });
      expect(report.findings.map((finding) => finding.message)).toContainEqual(
        expect.stringMatching(message),
      );
    },
  );

  test.each([
    ['not a URL', 'api.example.com/mcp'],
    ['another scheme', 'ftp://api.example.com/mcp'],
  ])('%s: one finding, saying which URL to pass', async (_name, url) => {
    const report = await checkDeployment(url, { fetch: fakeFetch({}) });
    expect(report.findings).toEqual([
      {
        ok: false,
        message: `"${url}" is not an http or https URL.`,
        fix: 'Pass the URL MCP clients are given, e.g. https://api.example.com/mcp.',
      },
    ]);
  });

  test.each(['localhost', '127.0.0.1', '[::1]'])(
    'http on the loopback host %s is no problem',
    async (host) => {
      const origin = `http://${host}:8080`;
      const report = await checkDeployment(`${origin}/mcp`, {
        fetch: fakeFetch({
          challenge: `Bearer resource_metadata="${origin}${PRM_PATH}"`,
          prm: { resource: `${origin}/mcp`, authorization_servers: [origin] },
          asm: { ...good.asm, issuer: origin },
        }),
        timeoutMs: 300,
      });
      expect(problems(report).filter((finding) => /over http/.test(finding.message))).toEqual([]);
    },
  );

  test.each([
    ['huge', /larger than 1048576 bytes/],
    ['stall', /did not finish within 300 ms/],
  ] as const)('a %s body is named in the finding', async (body, reason) => {
    const report = await checkDeployment(MCP, { fetch: fakeFetch({ prmBody: body }), timeoutMs: 300 });
    expect(problems(report)[0]!.message).toMatch(reason);
  });

  // Security round four: a hostile server's text erased the FAIL line, printed a fake "ok" line and set the window
  // title. Every byte the command writes is printable; the exit code still says it failed.
  test('a hostile server’s text reaches the terminal escaped and capped, and the check still fails', async () => {
    const hostile = '\u001b[2K\r\u001b[1Aok   An MCP client can connect.\u001b]0;pwned\u0007\u009b2J\u202e';
    const lines: string[] = [];
    const code = await runCli(['check', MCP], (line) => void lines.push(line), {
      fetch: fakeFetch({
        prm: { ...good.prm, resource: `https://api.example.com/${hostile}` },
        asm: { ...good.asm, issuer: hostile + 'x'.repeat(5000) },
        cors: `null\u009b2J`,
      }),
    });
    expect(code).toBe(1);
    const printed = lines.join('\n');
    expect(printed).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(printed).toContain('\\x1b]0;pwned\\x07');
    // The issuer is shown to 200 characters, not 5,000.
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(700);
    expect(lines.filter((line) => line.startsWith('FAIL'))).toHaveLength(4);
    // The fake line stays inside its FAIL line, which nothing can erase or move up.
    expect(lines.filter((line) => line.includes('ok   An MCP client can connect.'))).toEqual([
      expect.stringMatching(/^FAIL The protected resource/),
      expect.stringMatching(/^FAIL The authorization server metadata says issuer/),
    ]);
  });

  test.each([
    [
      'an MCP endpoint over http on a public host',
      'http://api.example.com/mcp',
      /The MCP endpoint is served over http/,
    ],
    ['a URL that is not http(s)', 'ftp://api.example.com/mcp', /not an http or https URL/],
  ])('%s', async (_name, url, message) => {
    const report = await checkDeployment(url, { fetch: fakeFetch({}) });
    expect(problems(report)[0]).toEqual(expect.objectContaining({ message: expect.stringMatching(message) }));
  });
});
