// The deployment check: walks discovery from the URL a client is given with the MCP SDK client's own discovery
// functions (so it reads the server as that client does: the challenge, RFC 9728 with its fallbacks, RFC 8414 and
// OpenID discovery in the client's order, the resource rule it applies), and names each problem that would stop a
// client, with its fix. Most "it won't connect" reports are a server that announces another issuer, resource or
// scheme than the one clients reached.
import { boundedFetch } from './bounded-fetch';
import { escapeControls, shown } from './printable';

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

type Sdk = typeof import('@modelcontextprotocol/sdk/client/auth.js') &
  typeof import('@modelcontextprotocol/sdk/shared/auth-utils.js');

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** The MCP spec's first message: an initialize request, as a client sends it before it has a token. */
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'express-mcp-oauth', version: '1' },
  },
});
const CORS_PROBE_ORIGIN = 'https://client.example';

/** Checks that an MCP client given `mcpUrl` could discover the server and start signing in. Never throws for a bad server. */
export async function checkDeployment(mcpUrl: string, options: CheckOptions = {}): Promise<CheckReport> {
  const findings: CheckFinding[] = [];
  // Escaped here, whole: nothing the server sent reaches a terminal (or a caller's log) as a control sequence.
  const pass = (message: string) => void findings.push({ ok: true, message: escapeControls(message) });
  const fail = (message: string, fix: string) =>
    void findings.push({ ok: false, message: escapeControls(message), fix: escapeControls(fix) });
  const done = () => ({ ok: findings.every((finding) => finding.ok), findings });
  // Loaded here: the SDK is an optional peer of the package, needed only by this check and createMcpEndpoint.
  const sdk = {
    ...(require('@modelcontextprotocol/sdk/client/auth.js') as typeof import('@modelcontextprotocol/sdk/client/auth.js')),
    ...(require('@modelcontextprotocol/sdk/shared/auth-utils.js') as typeof import('@modelcontextprotocol/sdk/shared/auth-utils.js')),
  } as Sdk;
  const fetchFn = boundedFetch(options.fetch ?? fetch, options.timeoutMs ?? 10_000);

  let reached: URL;
  try {
    reached = new URL(mcpUrl);
    if (reached.protocol !== 'https:' && reached.protocol !== 'http:') throw new TypeError('not http');
  } catch {
    fail(
      `"${mcpUrl}" is not an http or https URL.`,
      'Pass the URL MCP clients are given, e.g. https://api.example.com/mcp.',
    );
    return done();
  }
  checkHttps('The MCP endpoint', reached, fail);

  // 1. MCP authorization spec: a request without a token gets 401, with a challenge naming the resource metadata.
  let response: Response;
  try {
    response = await fetchFn(reached.href, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: INITIALIZE,
    });
  } catch (error) {
    fail(
      `${reached.href} could not be reached (${shown((error as Error).message)}).`,
      'Check the URL, DNS, the firewall and that the server runs.',
    );
    return done();
  }
  if (response.status !== 401) {
    fail(
      `POST ${reached.href} without a token answered ${response.status}, not 401.`,
      response.status >= 300 && response.status < 400
        ? `It redirects to ${shown(response.headers.get('location') ?? 'elsewhere')}: give clients the final URL.`
        : 'Put oauth.requireBearer() in front of the MCP handler.',
    );
    return done();
  }
  const { resourceMetadataUrl } = sdk.extractWWWAuthenticateParams(response);
  pass(
    resourceMetadataUrl
      ? `POST ${reached.href} without a token: 401, naming ${shown(resourceMetadataUrl.href)}.`
      : `POST ${reached.href} without a token: 401 (no resource_metadata in WWW-Authenticate: clients fall back to the well-known URLs).`,
  );

  // 2. RFC 9728: the resource's metadata, and the rule the client applies to its `resource`.
  let resource: Awaited<ReturnType<Sdk['discoverOAuthProtectedResourceMetadata']>> | undefined;
  try {
    resource = await sdk.discoverOAuthProtectedResourceMetadata(reached, { resourceMetadataUrl }, fetchFn);
  } catch (error) {
    fail(
      `No protected resource metadata for ${reached.href}: ${shown((error as Error).message)}`,
      'Serve it with the router: app.use(oauth), and app.use(oauth.wellKnown) at the root for an issuer with a path.',
    );
  }
  if (resource) {
    const requested = sdk.resourceUrlFromServerUrl(reached);
    if (!sdk.checkResourceAllowed({ requestedResource: requested, configuredResource: resource.resource })) {
      fail(
        `The protected resource metadata says resource "${shown(resource.resource)}", but clients reach ${requested.href} (RFC 9728 §3.3).`,
        announcedHint(resource.resource, reached) ??
          `Set the router's resources to the public URL: resources: ['${requested.href}'].`,
      );
    } else pass(`The protected resource metadata names this resource (${shown(resource.resource)}).`);
    await checkCors(fetchFn, resourceMetadataUrl?.href ?? protectedResourcePath(reached), fail);
  }

  // 3. The authorization server: the first the resource names (or, as clients fall back, the MCP server's origin).
  const issuer = resource?.authorization_servers?.[0] ?? new URL('/', reached).href;
  const issuerUrl = new URL(issuer);
  checkHttps('The authorization server', issuerUrl, fail);
  let metadata: Awaited<ReturnType<Sdk['discoverAuthorizationServerMetadata']>>;
  try {
    metadata = await sdk.discoverAuthorizationServerMetadata(issuer, { fetchFn });
  } catch (error) {
    fail(
      `The authorization server metadata of ${shown(issuer)} is not usable: ${shown((error as Error).message)}`,
      'Serve the metadata the router builds, unchanged.',
    );
    return done();
  }
  if (!metadata) {
    const tried = sdk.buildDiscoveryUrls(issuer).map(({ url }) => url.href);
    fail(
      `No authorization server metadata for ${shown(issuer)} at ${shown(tried.join(', '))}.`,
      'Mount the router so that its well-known documents are served at the root (oauth.wellKnown for an issuer with a path).',
    );
    return done();
  }
  // RFC 8414 §3.3 (and RFC 9207 for clients that check `iss`): the metadata names the issuer it was found for.
  if (metadata.issuer.replace(/\/$/, '') !== issuer.replace(/\/$/, '')) {
    fail(
      `The authorization server metadata says issuer "${shown(metadata.issuer)}", but it was found as ${shown(issuer)} (RFC 8414 §3.3).`,
      announcedHint(metadata.issuer, issuerUrl) ?? 'Give the router one issuer, its public URL.',
    );
  } else pass(`The authorization server metadata names its issuer (${shown(metadata.issuer)}).`);
  // The CORS of the address that answered: the first of those clients try that serves the metadata.
  for (const { url } of sdk.buildDiscoveryUrls(issuer)) {
    const found = await fetchFn(url.href).then(
      (answer) => answer.ok,
      () => false,
    );
    if (!found) continue;
    await checkCors(fetchFn, url.href, fail);
    break;
  }
  checkCapabilities(metadata, pass, fail);
  return done();
}

type Pass = (message: string) => void;
type Fail = (message: string, fix: string) => void;

/** https, except on a loopback host (RFC 8252 §8.3; the MCP spec requires https for every other). */
function checkHttps(what: string, url: URL, fail: Fail): void {
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname))
    fail(
      `${what} is served over http at ${shown(url.origin)}.`,
      'Serve it over https: MCP clients refuse http except on loopback.',
    );
}

const protectedResourcePath = (reached: URL) =>
  `${reached.origin}/.well-known/oauth-protected-resource${reached.pathname.replace(/\/+$/, '')}`;

/**
 * A hint when only the scheme or the host differs: the usual proxy mistakes. The announced scheme and host are the
 * server's own text (a host can be thousands of characters long), so they are shown capped like every other value.
 */
function announcedHint(announced: string, reached: URL): string | undefined {
  let url: URL;
  try {
    url = new URL(announced);
  } catch {
    return undefined;
  }
  if (url.protocol !== reached.protocol && url.host === reached.host)
    return `The server announces ${shown(url.protocol)}// but you reached it over ${reached.protocol}//: behind a proxy that terminates TLS, set the issuer to the public ${reached.protocol}// URL (and app.set('trust proxy', ...) for client addresses).`;
  if (url.host !== reached.host)
    return `The server announces the host ${shown(url.host)} but you reached ${reached.host}: set the issuer to the public URL clients use.`;
  return undefined;
}

/** Browser-based clients (the MCP Inspector, web apps) read the documents from another origin. */
async function checkCors(fetchFn: typeof fetch, url: string, fail: Fail): Promise<void> {
  const allowed = await fetchFn(url, { headers: { Origin: CORS_PROBE_ORIGIN } }).then(
    (response) => response.headers.get('access-control-allow-origin'),
    () => null,
  );
  if (allowed !== '*' && allowed !== CORS_PROBE_ORIGIN)
    fail(
      `${shown(url)} does not allow other origins to read it (Access-Control-Allow-Origin: ${shown(allowed ?? 'none')}).`,
      'Do not strip or narrow CORS headers at the proxy: browser-based clients read the metadata.',
    );
}

/** What an MCP client needs of the authorization server: codes with S256 PKCE, and a way to get a client id. */
function checkCapabilities(
  metadata: {
    response_types_supported: string[];
    code_challenge_methods_supported?: string[];
    registration_endpoint?: string;
    client_id_metadata_document_supported?: boolean;
  },
  pass: Pass,
  fail: Fail,
): void {
  if (!metadata.response_types_supported.includes('code'))
    fail(
      'The metadata does not list "code" in response_types_supported.',
      'Serve the metadata the router builds, unchanged.',
    );
  // MCP authorization spec: a client must refuse a server that does not list S256.
  if (!metadata.code_challenge_methods_supported?.includes('S256'))
    fail(
      'The metadata does not list S256 in code_challenge_methods_supported.',
      'MCP clients require PKCE S256; serve the metadata the router builds.',
    );
  else pass('Authorization codes with PKCE S256 are offered.');
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
