// The deployment check: walks discovery the way MCP clients do (MCP authorization spec, RFC 9728, RFC 8414) from the
// URL a client is given, and names each problem that would stop a client, with its fix. Most "it won't connect"
// reports are a server that tells clients a different issuer, resource or scheme than the one they reached.

/** One step of the walk: what was checked, and what to do when it failed. */
export interface CheckFinding {
  ok: boolean;
  /** What was checked, or what is wrong. */
  message: string;
  /** How to fix it, when it failed. */
  fix?: string;
}

/** The findings, in the order a client meets them; `ok` when an MCP client could connect. */
export interface CheckReport {
  ok: boolean;
  findings: CheckFinding[];
}

/** Options of checkDeployment. */
export interface CheckOptions {
  /** The fetch to use (tests pass one that answers from memory). Default: the global fetch. */
  fetch?: typeof fetch;
  /** The deadline of each request, in milliseconds. Default 10,000. */
  timeoutMs?: number;
}

type Json = Record<string, unknown>;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** The MCP spec's first message: an initialize request, as a client sends it before it has a token. */
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'express-mcp-oauth check', version: '1' },
  },
});

/** A problem that ends the walk: the steps after it need what it failed to get. */
class Stop extends Error {}

/** Checks that an MCP client given `mcpUrl` could discover, register and sign in. Never throws for a bad server. */
export async function checkDeployment(mcpUrl: string, options: CheckOptions = {}): Promise<CheckReport> {
  const findings: CheckFinding[] = [];
  const pass = (message: string) => void findings.push({ ok: true, message });
  const fail = (message: string, fix: string) => void findings.push({ ok: false, message, fix });
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const get = (url: string, init: RequestInit = {}) =>
    doFetch(url, { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs), ...init });

  let reached: URL;
  try {
    reached = new URL(mcpUrl);
    if (reached.protocol !== 'https:' && reached.protocol !== 'http:') throw new TypeError('not http');
  } catch {
    fail(
      `"${mcpUrl}" is not an http or https URL.`,
      'Pass the URL MCP clients are given, e.g. https://api.example.com/mcp.',
    );
    return { ok: false, findings };
  }
  checkHttps('The MCP endpoint', reached, fail);

  try {
    const challenge = await unauthenticatedCall(reached, get, pass, fail);
    const resourceMetadata = await readResourceMetadata(reached, challenge, get, pass, fail);
    const issuer = await readIssuerMetadata(reached, resourceMetadata, get, pass, fail);
    checkCapabilities(issuer, pass, fail);
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
  }
  return { ok: findings.every((finding) => finding.ok), findings };
}

type Pass = (message: string) => void;
type Fail = (message: string, fix: string) => void;
type Get = (url: string, init?: RequestInit) => Promise<Response>;

/** https, except on a loopback host (RFC 8252 §8.3; the MCP spec requires https for every other). */
function checkHttps(what: string, url: URL, fail: Fail): void {
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname))
    fail(
      `${what} is served over http at ${url.origin}.`,
      'Serve it over https: MCP clients refuse http except on loopback.',
    );
}

async function request(get: Get, url: string, fail: Fail, init?: RequestInit): Promise<Response> {
  try {
    return await get(url, init);
  } catch (error) {
    fail(
      `${url} could not be reached (${(error as Error).message}).`,
      'Check the URL, DNS, the firewall and that the server runs.',
    );
    throw new Stop();
  }
}

async function readJson(response: Response, url: string, fail: Fail): Promise<Json> {
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok || !body || typeof body !== 'object' || Array.isArray(body)) {
    fail(
      `${url} answered ${response.status} without a JSON object.`,
      'Mount the router where its documents are served (app.use(oauth), and oauth.wellKnown at the root for an issuer with a path).',
    );
    throw new Stop();
  }
  return body as Json;
}

/** MCP authorization spec: a request without a token gets 401 and a challenge naming the resource metadata. */
async function unauthenticatedCall(
  reached: URL,
  get: Get,
  pass: Pass,
  fail: Fail,
): Promise<string | undefined> {
  const response = await request(get, reached.href, fail, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: INITIALIZE,
  });
  await response.body?.cancel();
  if (response.status !== 401) {
    fail(
      `POST ${reached.href} without a token answered ${response.status}, not 401.`,
      response.status >= 300 && response.status < 400
        ? `It redirects to ${response.headers.get('location') ?? 'elsewhere'}: give clients the final URL.`
        : 'Put oauth.requireBearer() in front of the MCP handler.',
    );
    throw new Stop();
  }
  const header = response.headers.get('www-authenticate') ?? '';
  const metadataUrl = /resource_metadata="([^"]+)"/i.exec(header)?.[1];
  if (!/^Bearer\b/i.test(header) || !metadataUrl) {
    fail(
      'The 401 has no WWW-Authenticate: Bearer resource_metadata="..." (RFC 9728 §5.1).',
      'Use oauth.requireBearer() (or refuseBearer) to answer it; a proxy must not drop the header.',
    );
    return undefined;
  }
  pass(`POST ${reached.href} without a token: 401 with a Bearer challenge.`);
  return metadataUrl;
}

/** RFC 9728 §3: the metadata of the resource, whose `resource` must be exactly the URL the client reached. */
async function readResourceMetadata(
  reached: URL,
  challenged: string | undefined,
  get: Get,
  pass: Pass,
  fail: Fail,
): Promise<Json> {
  const path = reached.pathname.replace(/\/+$/, '');
  const url = challenged ?? `${reached.origin}/.well-known/oauth-protected-resource${path}`;
  const metadata = await readJson(await request(get, url, fail), url, fail);
  const resource = typeof metadata.resource === 'string' ? metadata.resource : '';
  const expected = `${reached.origin}${path}`;
  if (resource.replace(/\/+$/, '') !== expected) {
    fail(
      `The protected resource metadata says resource ${JSON.stringify(metadata.resource)}, but clients reach ${expected} (RFC 9728 §3.3: they must be the same).`,
      schemeOrHostHint(resource, reached) ??
        `Set the router's issuer (and resources) to the public URL: resources: ['${expected}'].`,
    );
  } else pass(`Protected resource metadata at ${url} names this resource.`);
  const servers = metadata.authorization_servers;
  if (!Array.isArray(servers) || typeof servers[0] !== 'string') {
    fail(
      'The protected resource metadata lists no authorization_servers.',
      'Serve it with the router (oauth.wellKnown).',
    );
    throw new Stop();
  }
  return metadata;
}

/** A hint when only the scheme or the host differs: the usual proxy mistakes. */
function schemeOrHostHint(advertised: string, reached: URL): string | undefined {
  let url: URL;
  try {
    url = new URL(advertised);
  } catch {
    return undefined;
  }
  if (url.protocol !== reached.protocol && url.host === reached.host)
    return `The server announces ${url.protocol}// but you reached it over ${reached.protocol}//: behind a proxy that terminates TLS, set the issuer to the public ${reached.protocol}// URL (and app.set('trust proxy', ...) for client addresses).`;
  if (url.host !== reached.host)
    return `The server announces the host ${url.host} but you reached ${reached.host}: set the issuer to the public URL clients use.`;
  return undefined;
}

/** RFC 8414 §3: the issuer's metadata, at the path-inserted well-known URL, whose `issuer` must be the issuer. */
async function readIssuerMetadata(
  reached: URL,
  resourceMetadata: Json,
  get: Get,
  pass: Pass,
  fail: Fail,
): Promise<Json> {
  const issuer = String((resourceMetadata.authorization_servers as string[])[0]).replace(/\/+$/, '');
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(issuer);
  } catch {
    fail(
      `The authorization server ${JSON.stringify(issuer)} is not a URL.`,
      "Set the router's issuer to its public URL.",
    );
    throw new Stop();
  }
  checkHttps('The authorization server', issuerUrl, fail);
  const path = issuerUrl.pathname === '/' ? '' : issuerUrl.pathname;
  const url = `${issuerUrl.origin}/.well-known/oauth-authorization-server${path}`;
  const metadata = await readJson(await request(get, url, fail), url, fail);
  if (metadata.issuer !== issuer) {
    fail(
      `The authorization server metadata says issuer ${JSON.stringify(metadata.issuer)}, but it was found as ${issuer} (RFC 8414 §3.3: they must be the same).`,
      schemeOrHostHint(String(metadata.issuer), issuerUrl) ?? 'Give the router one issuer, its public URL.',
    );
  } else pass(`Authorization server metadata at ${url}, issuer ${issuer}.`);
  if (issuerUrl.origin !== reached.origin && !LOOPBACK.has(issuerUrl.hostname))
    pass(`The authorization server is on another origin (${issuerUrl.origin}).`);
  // Browser-based clients read the documents from another origin.
  const cors = await request(get, url, fail, { headers: { Origin: 'https://client.example' } });
  await cors.body?.cancel();
  if (cors.headers.get('access-control-allow-origin') === null)
    fail(
      `${url} sends no Access-Control-Allow-Origin.`,
      'Do not strip CORS headers at the proxy: browser clients read the metadata.',
    );
  return metadata;
}

/** What an MCP client needs of the authorization server: S256 PKCE, codes, and a way to get a client id. */
function checkCapabilities(metadata: Json, pass: Pass, fail: Fail): void {
  const list = (name: string) => (Array.isArray(metadata[name]) ? (metadata[name] as unknown[]) : []);
  if (!list('code_challenge_methods_supported').includes('S256'))
    fail(
      'The metadata does not list S256 in code_challenge_methods_supported.',
      'MCP clients require PKCE S256 (MCP authorization spec); the router offers it.',
    );
  else pass('PKCE S256 is offered.');
  if (typeof metadata.authorization_endpoint !== 'string' || typeof metadata.token_endpoint !== 'string')
    fail(
      'The metadata lacks authorization_endpoint or token_endpoint.',
      'Serve the metadata the router builds.',
    );
  const registration = typeof metadata.registration_endpoint === 'string';
  const documents = metadata.client_id_metadata_document_supported === true;
  if (!registration && !documents)
    fail(
      'Clients have no way to get a client id: no registration_endpoint and no client_id_metadata_document_supported.',
      'Keep dynamic registration or Client ID Metadata Documents on.',
    );
  else
    pass(
      `Clients can get a client id: ${[registration && 'dynamic registration', documents && 'Client ID Metadata Documents'].filter(Boolean).join(' and ')}.`,
    );
}
