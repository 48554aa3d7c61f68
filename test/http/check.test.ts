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
    expect(report.findings.map((finding) => finding.message)).toEqual([
      `POST ${url} without a token: 401 with a Bearer challenge.`,
      expect.stringMatching(/^Protected resource metadata at .* names this resource\.$/),
      expect.stringMatching(/^Authorization server metadata at .*, issuer http:\/\/127\.0\.0\.1:\d+\.$/),
      'PKCE S256 is offered.',
      'Clients can get a client id: dynamic registration and Client ID Metadata Documents.',
    ]);
    const lines: string[] = [];
    expect(await runCli(['check', url], (line) => void lines.push(line))).toBe(0);
    expect(lines.at(-1)).toBe('An MCP client can connect.');
  });

  test('an issuer with a path, its well-known documents mounted at the root as README says', async () => {
    const { url } = await started((app, origin) => {
      const oauth = createOAuthRouter(createMemoryStore(), createJwtSigner(), {
        ...routerOptions(`${origin}/tenant`),
        resources: [`${origin}/mcp`],
      });
      app.use(oauth.wellKnown);
      app.use('/tenant', oauth);
      app.post('/mcp', oauth.requireBearer(), (_req, res) => void res.json({}));
    });
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
      (app: express.Express, origin: string) => {
        const oauth = createOAuthRouter(createMemoryStore(), createJwtSigner(), {
          ...routerOptions(`${origin}/tenant`),
          resources: [`${origin}/mcp`],
        });
        app.use('/tenant', oauth);
        app.post('/mcp', oauth.requireBearer(), (_req, res) => void res.json({}));
      },
      '/mcp',
      /oauth-protected-resource\/mcp answered 404 without a JSON object/,
      /oauth\.wellKnown at the root/,
    ],
  ] as Array<[string, Setup, string, RegExp, RegExp]>)('%s', async (_name, setup, path, problem, fix) => {
    const { url } = await started(setup);
    const report = await checkDeployment(url.replace(/\/mcp$/, path));
    expect(problems(report)).toEqual([
      expect.objectContaining({ message: expect.stringMatching(problem), fix: expect.stringMatching(fix) }),
    ]);
    const lines: string[] = [];
    expect(await runCli(['check', url.replace(/\/mcp$/, path)], (line) => void lines.push(line))).toBe(1);
    expect(lines.at(-1)).toBe('1 problem: an MCP client cannot connect.');
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
        message: `The protected resource metadata says resource "${app.url}", but clients reach ${reached} (RFC 9728 §3.3: they must be the same).`,
        fix: `The server announces the host ${new URL(app.url).host} but you reached 127.0.0.1:${proxy.port}: set the issuer to the public URL clients use.`,
      },
    ]);
  });

  test('a server that cannot be reached, and a command line that is not a check', async () => {
    const { url, close } = await deploy((app, origin) => void correct(app, origin));
    await close();
    const report = await checkDeployment(url, { timeoutMs: 2_000 });
    expect(problems(report)).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/could not be reached/) }),
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
  const PRM = 'https://api.example.com/.well-known/oauth-protected-resource/mcp';
  const ASM = 'https://api.example.com/.well-known/oauth-authorization-server';
  const good = {
    challenge: `Bearer resource_metadata="${PRM}"`,
    prm: { resource: MCP, authorization_servers: ['https://api.example.com'] },
    asm: {
      issuer: 'https://api.example.com',
      authorization_endpoint: 'https://api.example.com/authorize',
      token_endpoint: 'https://api.example.com/token',
      registration_endpoint: 'https://api.example.com/register',
      code_challenge_methods_supported: ['S256'],
    } as Record<string, unknown>,
    cors: true,
    status: 401,
  };
  /** A fetch that answers as a deployment with `changes` would, and refuses any other URL. */
  const fakeFetch =
    (changes: Partial<typeof good>): typeof fetch =>
    async (input) => {
      const server = { ...good, ...changes };
      const json = (body: unknown, headers: Record<string, string> = {}) =>
        new Response(JSON.stringify(body), {
          headers: {
            'content-type': 'application/json',
            ...(server.cors ? { 'access-control-allow-origin': '*' } : {}),
            ...headers,
          },
        });
      const url = String(input);
      if (url === MCP)
        return new Response('{}', {
          status: server.status,
          headers: { 'www-authenticate': server.challenge },
        });
      if (url === PRM) return json(server.prm);
      if (url === ASM) return json(server.asm);
      throw new Error(`unexpected fetch of ${url}`);
    };

  test.each([
    ['nothing wrong', {}, []],
    [
      'a proxy terminating TLS, the server announcing http',
      { prm: { resource: 'http://api.example.com/mcp', authorization_servers: ['https://api.example.com'] } },
      [/announces http:\/\/ but you reached it over https:\/\/: behind a proxy that terminates TLS/],
    ],
    [
      'an issuer in the metadata other than the one the resource names',
      { asm: { ...good.asm, issuer: 'https://auth.example.com' } },
      [/announces the host auth\.example\.com but you reached api\.example\.com/],
    ],
    [
      'an authorization server over http',
      { prm: { resource: MCP, authorization_servers: ['http://api.example.com'] } },
      [/Serve it over https/, /Check the URL, DNS/],
    ],
    ['no S256', { asm: { ...good.asm, code_challenge_methods_supported: ['plain'] } }, [/require PKCE S256/]],
    [
      'no way to get a client id',
      { asm: { ...good.asm, registration_endpoint: undefined } },
      [/Keep dynamic registration or Client ID Metadata Documents on/],
    ],
    ['CORS headers stripped', { cors: false }, [/browser clients read the metadata/]],
    [
      'a challenge without resource_metadata',
      { challenge: 'Bearer realm="api"' },
      [/a proxy must not drop the header/],
    ],
    ['a redirect instead of a 401', { status: 302 }, [/give clients the final URL/]],
  ] as const)('%s', async (_name, changes, fixes) => {
    const report = await checkDeployment(MCP, { fetch: fakeFetch(changes as Partial<typeof good>) });
    expect(problems(report).map((finding) => finding.fix)).toEqual(
      fixes.map((fix) => expect.stringMatching(fix)),
    );
    expect(report.ok).toBe(fixes.length === 0);
  });

  test('a URL that is not http(s) is refused before anything is fetched', async () => {
    const report = await checkDeployment('ftp://api.example.com/mcp', { fetch: fakeFetch({}) });
    expect(problems(report)).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/not an http or https URL/) }),
    ]);
  });
});
