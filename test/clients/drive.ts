// The client matrix's driver: one reference app (with a clock the test moves), one document server and one Chromium
// for a test file, and each real MCP client (a ClientProfile) driven through the real endpoints the way it does it:
// discovery from the 401, identification (its metadata document or its registration body), the authorization
// request with its redirect URI, scope and resource habits, consent, the token exchange with its auth method, tool
// calls through /mcp with the MCP SDK client, and refreshes (drive-refresh.ts). Every step throws an error that
// names the client and the step.
import { createPublicKey, randomBytes, randomInt } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { createUser, type AppUser } from '../../example-app/users';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { chatGptDocument, type KeyedClient } from '../helpers/client-documents';
import { createMovableClock, type MovableClock } from '../helpers/clock';
import { resolveToLoopback, startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { pkcePair } from '../helpers/pkce';
import { TEST_HOSTS, testCa } from '../helpers/test-ca';
import { consentInChromium, consentOverHttp } from './drive-consent';
import type { ClientProfile } from './profile';

// Response bodies of the server, read as loosely as a client would.
type Json = Record<string, any>;

export interface Matrix {
  app: RunningExampleApp;
  documents: DocumentServer;
  /** Undefined where Chromium is not installed: every consent then goes through the HTTP browser. */
  browser: Browser | undefined;
  /** The OAuth server's clock: moved past an access token's expiry instead of waited for. */
  clock: MovableClock;
  mcpUrl: URL;
  stop(): Promise<void>;
}

/** The app (documents fetched from the loopback document server, trusted through the test CA), and Chromium. */
export async function startMatrix(): Promise<Matrix> {
  const clock = createMovableClock();
  const [app, documents, browser] = await Promise.all([
    startExampleApp(
      { CIMD_ALLOW_LOOPBACK: '1' },
      { clientMetadataDocuments: { ca: testCa().caPem, resolveHost: resolveToLoopback }, now: clock.now },
    ),
    startDocumentServer(),
    browserAvailable ? launchChromium() : Promise.resolve(undefined),
  ]);
  return {
    app,
    documents,
    browser,
    clock,
    mcpUrl: new URL(`${app.baseUrl}/mcp`),
    async stop() {
      await browser?.close();
      await app.stop();
      await documents.stop();
    },
  };
}

/** Runs `run`; a failure is rethrown with `label` in front ("claude-code: refresh 2: 400 invalid_grant ..."). */
export async function step<T>(label: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${label}: ${message}`);
  }
}

/** What the token endpoint answered. */
export interface Tokens {
  accessToken: string;
  refreshToken: string;
  scope: string;
  expiresIn: number;
}

/** What the client learnt from the 401 and the metadata documents. */
export interface Discovery {
  /** The parameters of the 401's WWW-Authenticate: Bearer challenge. */
  challenge: Record<string, string>;
  /** RFC 9728 protected resource metadata. */
  resource: Json;
  /** RFC 8414 authorization server metadata. */
  server: Json;
}

export interface Identity {
  clientId: string;
  clientSecret?: string;
  /** For private_key_jwt: a fresh client assertion for `audience`, at the app's time. */
  assertion?: (audience: string) => string;
}

/** A client connected for its user: what it holds after the code exchange, and the requests it knows how to make. */
export interface Connection {
  profile: ClientProfile;
  user: AppUser;
  discovery: Discovery;
  identity: Identity;
  redirectUri: string;
  authorizationUrl: URL;
  consent: { in: 'chromium' | 'http'; text: string };
  tokens: Tokens;
  /** The read-only tool the client calls, within the granted scope. */
  tool: string;
  /** A refresh as the client sends it (scope and resource by its habits); `round` counts from 1. */
  refresh(refreshToken: string, round: number): Promise<Tokens>;
  /** A tool call through /mcp with the MCP SDK client and `accessToken` as its Bearer token. */
  callTool(accessToken: string): Promise<void>;
  /** Whether /mcp still takes `accessToken` (false once it has expired). */
  accepts(accessToken: string): Promise<boolean>;
}

/** Read-only tools, each with the scope it needs, in the order a client is given one. */
const READ_TOOLS: Array<[scope: string, tool: string]> = [
  ['company:read', 'get_company'],
  ['clients:read', 'list_clients'],
  ['fakture:read', 'list_invoices'],
  ['products:read', 'list_products'],
  ['user:read', 'get_profile'],
  ['prospektor:read', 'list_prospects'],
  ['dokument:read', 'list_documents'],
  ['bridge:read', 'list_bank_accounts'],
];

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'matrix', version: '1.0.0' },
  },
};

/** The auth-param pairs of a `Bearer ...` challenge (RFC 9110 §11.2; quoted strings without escapes suffice here). */
function challengeParams(header: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [, name, quoted, token] of header.matchAll(/([A-Za-z_]+)=(?:"([^"]*)"|([^\s,]+))/g)) {
    params[name!] = quoted ?? token!;
  }
  return params;
}

async function readJson(response: Response, what: string): Promise<Json> {
  const text = await response.text();
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new Error(`${what}: ${response.status}, not JSON: ${text.slice(0, 200)}`);
  }
}

/** RFC 9728 §5.1 from the 401, then the resource metadata, then RFC 8414's metadata of its first server. */
export async function discover(mcpUrl: URL): Promise<Discovery> {
  const unauthorized = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(INITIALIZE),
  });
  if (unauthorized.status !== 401) throw new Error(`/mcp without a token: ${unauthorized.status}, not 401`);
  const header = unauthorized.headers.get('www-authenticate') ?? '';
  if (!/^Bearer\b/i.test(header)) throw new Error(`no Bearer challenge in the 401: "${header}"`);
  const challenge = challengeParams(header);
  if (!challenge.resource_metadata) throw new Error(`no resource_metadata in "${header}"`);
  const resource = await readJson(await fetch(challenge.resource_metadata), 'resource metadata');
  if (resource.resource !== mcpUrl.href) {
    throw new Error(`resource metadata names ${resource.resource}, not ${mcpUrl.href}`);
  }
  const issuer = new URL(resource.authorization_servers?.[0] ?? 'about:blank');
  // RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path.
  const path = issuer.pathname === '/' ? '' : issuer.pathname;
  const server = await readJson(
    await fetch(`${issuer.origin}/.well-known/oauth-authorization-server${path}`),
    'authorization server metadata',
  );
  if (server.issuer !== resource.authorization_servers[0]) {
    throw new Error(`authorization server metadata names issuer ${server.issuer}`);
  }
  return { challenge, resource, server };
}

/** A port the client's loopback listener could have been given (never listened on: the Location is read). */
const ephemeralPort = () => randomInt(49152, 65536);

/** The redirect URIs the client publishes or registers. */
function declaredRedirectUris(profile: ClientProfile): string[] {
  const declared =
    profile.identification.kind === 'metadata-document'
      ? profile.identification.document.redirect_uris
      : profile.identification.body.redirect_uris;
  return Array.isArray(declared) ? declared.filter((uri): uri is string => typeof uri === 'string') : [];
}

/**
 * The redirect URI of this run: for an ephemeral port one at random; for a fixed port the one the profile records,
 * the port p for which uri(p) is written in its document or body, its needs or its sources (VS Code's 33418,
 * opencode's 19876); a shape without a port (https, a private-use scheme) as it is.
 */
function redirectUriFor(profile: ClientProfile): string {
  const { redirect } = profile;
  if (redirect.port === 'none') return redirect.uri(0);
  if (redirect.port === 'ephemeral') return redirect.uri(ephemeralPort());
  const recorded = [
    ...declaredRedirectUris(profile),
    ...profile.needs,
    ...Object.values(profile.sources).map((source) => source.says),
  ].join(' ');
  const ports = [...recorded.matchAll(/:(\d{2,5})\//g)].map((match) => Number(match[1]));
  const fixed = ports.find((port) => recorded.includes(redirect.uri(port)));
  return redirect.uri(fixed ?? ephemeralPort());
}

/**
 * Metadata document: the profile's document served at a loopback https URL (on the test host named after the
 * document's own host when the certificate covers it), with that URL as client_id and, for private_key_jwt, a
 * jwks_uri beside it. Registration: the profile's body POSTed, with the redirect URI of this run when the port is
 * chosen at run time (the clients open their listener, then register), the scope derived from this server, and a
 * key of ours for private_key_jwt.
 */
async function identify(
  matrix: Matrix,
  profile: ClientProfile,
  discovery: Discovery,
  redirectUri: string,
): Promise<Identity> {
  const { documents, clock } = matrix;
  const { identification } = profile;
  const sign = (keyed: KeyedClient, clientId: string) => (audience: string) =>
    keyed.assertion(audience, { now: clock.now(), claims: { iss: clientId, sub: clientId } });

  if (identification.kind === 'metadata-document') {
    if (!discovery.server.client_id_metadata_document_supported) {
      throw new Error('the server does not say client_id_metadata_document_supported');
    }
    const original = URL.parse(String(identification.document.client_id ?? ''));
    const testHost = original && `${original.hostname}.test`;
    const host = testHost && TEST_HOSTS.includes(testHost) ? testHost : 'localhost';
    const path = `/${profile.id}${original?.pathname ?? '/client-metadata.json'}`;
    const document: Json = { ...identification.document };
    const clientId = documents.url(path, host);
    let assertion: Identity['assertion'];
    if (profile.authMethod === 'private_key_jwt') {
      // The helper's key and JWKS (served beside the document); the document served is the profile's.
      const keyed = chatGptDocument(documents, { path, host });
      delete document.jwks;
      document.jwks_uri = documents.url(keyed.jwksPath, host);
      assertion = sign(keyed, clientId);
    }
    document.client_id = clientId;
    documents.json(path, document, 'max-age=3600');
    return { clientId, ...(assertion ? { assertion } : {}) };
  }

  const body: Json = { ...identification.body };
  if (profile.redirect.port === 'ephemeral') body.redirect_uris = [redirectUri];
  // A recorded body's scope was derived from another server's metadata; the client derives it from this one's.
  if (body.scope !== undefined) {
    const scope = scopeToAsk(profile, discovery);
    if (scope) body.scope = scope;
    else delete body.scope;
  }
  let keyed: KeyedClient | undefined;
  if (profile.authMethod === 'private_key_jwt') {
    keyed = chatGptDocument(documents, { path: `/${profile.id}/registered-client`, host: 'localhost' });
    if (body.jwks_uri === undefined) {
      const jwk = { ...createPublicKey(keyed.privateKey).export({ format: 'jwk' }), kid: keyed.kid };
      body.jwks = { keys: [{ ...jwk, use: 'sig', alg: 'RS256' }] };
    } else body.jwks_uri = documents.url(keyed.jwksPath, 'localhost');
  }
  if (!discovery.server.registration_endpoint) throw new Error('the server has no registration_endpoint');
  const response = await fetch(discovery.server.registration_endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
  const registered = await readJson(response, 'registration');
  if (response.status !== 201) {
    throw new Error(`${response.status} ${registered.error} ${registered.error_description ?? ''}`.trim());
  }
  if (registered.token_endpoint_auth_method !== profile.authMethod) {
    throw new Error(
      `registered token_endpoint_auth_method ${registered.token_endpoint_auth_method}, not ${profile.authMethod}`,
    );
  }
  const clientId = registered.client_id as string;
  return {
    clientId,
    ...(registered.client_secret ? { clientSecret: registered.client_secret as string } : {}),
    ...(keyed ? { assertion: sign(keyed, clientId) } : {}),
  };
}

/** The scope of the authorization request, by the client's habit (the SDK falls back on scopes_supported). */
function scopeToAsk(profile: ClientProfile, discovery: Discovery): string | undefined {
  const supported = (discovery.resource.scopes_supported ??
    discovery.server.scopes_supported ??
    []) as string[];
  let scopes: string[];
  switch (profile.scopeOnAuthorize) {
    case 'none':
      scopes = [];
      break;
    case 'from-challenge':
      scopes = discovery.challenge.scope?.split(' ') ?? supported;
      break;
    case 'scopes-supported':
      scopes = supported;
      break;
    default:
      scopes = profile.scopeOnAuthorize.split(' ');
  }
  const serverScopes = (discovery.server.scopes_supported ?? []) as string[];
  if (
    profile.asksOfflineAccess &&
    serverScopes.includes('offline_access') &&
    !scopes.includes('offline_access')
  ) {
    scopes = [...scopes, 'offline_access'];
  }
  return scopes.length ? scopes.join(' ') : undefined;
}

/** Whether the client sends `resource` at this step; `sometimes` sends it on authorize and exchange, on odd refreshes. */
function sendsResource(profile: ClientProfile, at: 'authorize' | 'exchange' | { refresh: number }): boolean {
  switch (profile.resource) {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'authorize-only':
      return at === 'authorize';
    case 'token-only':
      return at !== 'authorize';
    case 'sometimes':
      return typeof at === 'string' || at.refresh % 2 === 1;
  }
}

/** A token request with the client's authentication method (RFC 6749 §2.3, RFC 7523 §2.2). */
async function tokenRequest(
  discovery: Discovery,
  profile: ClientProfile,
  identity: Identity,
  params: Record<string, string>,
): Promise<Tokens> {
  const body = new URLSearchParams(params);
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-www-form-urlencoded',
    Accept: 'application/json',
  };
  switch (profile.authMethod) {
    case 'none':
      body.set('client_id', identity.clientId);
      break;
    case 'client_secret_post':
      body.set('client_id', identity.clientId);
      body.set('client_secret', identity.clientSecret ?? '');
      break;
    case 'client_secret_basic': {
      // RFC 6749 §2.3.1: both form-urlencoded before the Basic encoding.
      const pair = `${encodeURIComponent(identity.clientId)}:${encodeURIComponent(identity.clientSecret ?? '')}`;
      headers.Authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
      break;
    }
    case 'private_key_jwt':
      body.set('client_id', identity.clientId);
      body.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      // RFC 7523 §3: the token endpoint's URL as the audience (ChatGPT's, and accepted beside the issuer).
      body.set('client_assertion', identity.assertion!(discovery.server.token_endpoint));
      break;
  }
  const response = await fetch(discovery.server.token_endpoint, { method: 'POST', headers, body });
  const answer = await readJson(response, 'token endpoint');
  if (response.status !== 200) {
    throw new Error(`${response.status} ${answer.error} ${answer.error_description ?? ''}`.trim());
  }
  for (const field of ['access_token', 'refresh_token'] as const) {
    if (typeof answer[field] !== 'string') {
      throw new Error(`200 without ${field} (it answered ${Object.keys(answer).join(', ')})`);
    }
  }
  return {
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token,
    scope: answer.scope ?? '',
    expiresIn: answer.expires_in,
  };
}

/** Where the browser came back: the code, once state, iss and the redirect URI are what the client expects. */
function readAuthorizationResponse(location: string, redirectUri: string, state: string, issuer: string) {
  if (location.split('?')[0] !== redirectUri.split('?')[0]) {
    throw new Error(`sent back to ${location}, not to ${redirectUri}`);
  }
  const query = new URL(location).searchParams;
  if (query.get('error')) throw new Error(`${query.get('error')} ${query.get('error_description') ?? ''}`);
  if (query.get('state') !== state) throw new Error(`state came back as ${query.get('state')}`);
  // RFC 9207: the response names its issuer.
  if (query.get('iss') !== issuer) throw new Error(`iss came back as ${query.get('iss')}`);
  const code = query.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

/** One MCP session with the SDK client and `accessToken` as its Bearer token; one read-only tool call. */
async function callToolWith(matrix: Matrix, profile: ClientProfile, tool: string, accessToken: string) {
  const client = new Client({ name: profile.id, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(matrix.mcpUrl, {
      requestInit: { headers: { Authorization: `Bearer ${accessToken}` } },
    }),
  );
  try {
    const result = await client.callTool({ name: tool, arguments: {} });
    if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content)}`);
    // The token is this client's user's: their company, not another client's user's.
    const company = result.structuredContent as { name?: string } | undefined;
    if (tool === 'get_company' && company?.name !== companyOf(profile)) {
      throw new Error(`get_company answered ${company?.name}, not ${companyOf(profile)}`);
    }
  } finally {
    await client.close();
  }
}

const companyOf = (profile: ClientProfile) => `${profile.name} test company`;

/** Each client has a user of its own (with a company of its own): the grants of two clients never mix. */
async function userFor(matrix: Matrix, profile: ClientProfile): Promise<AppUser> {
  return createUser(matrix.app.db, {
    email: `${profile.id}@matrix.example.com`,
    password: APP_USER.password,
    name: profile.name,
    company: companyOf(profile),
  });
}

/**
 * The client's first connection: discovery, identification, the authorization request, consent (in Chromium when
 * asked and available), the code exchange, and a tool call with the access token.
 */
export async function connect(
  matrix: Matrix,
  profile: ClientProfile,
  { chromium }: { chromium: boolean },
): Promise<Connection> {
  const at = (name: string) => `${profile.id}: ${name}`;
  const user = await step(at('create its user'), () => userFor(matrix, profile));
  const discovery = await step(at('discovery from the 401'), () => discover(matrix.mcpUrl));
  const redirectUri = redirectUriFor(profile);
  const identity = await step(at(`identification (${profile.identification.kind})`), () =>
    identify(matrix, profile, discovery, redirectUri),
  );

  const pkce = pkcePair();
  const state = randomBytes(16).toString('base64url');
  const authorizationUrl = new URL(discovery.server.authorization_endpoint);
  const scope = scopeToAsk(profile, discovery);
  authorizationUrl.search = new URLSearchParams({
    response_type: 'code',
    client_id: identity.clientId,
    redirect_uri: redirectUri,
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    state,
    ...(scope ? { scope } : {}),
    ...(sendsResource(profile, 'authorize') ? { resource: discovery.resource.resource } : {}),
  }).toString();

  const inChromium = chromium && matrix.browser !== undefined;
  const credentials = { email: user.email, password: APP_USER.password };
  const consent = await step(at(`consent ${inChromium ? 'in Chromium' : 'over HTTP'}`), () =>
    inChromium
      ? consentInChromium(matrix.browser!, authorizationUrl, credentials)
      : consentOverHttp(authorizationUrl, credentials),
  );
  const code = await step(at('authorization response'), async () =>
    readAuthorizationResponse(consent.location, redirectUri, state, discovery.server.issuer),
  );
  const tokens = await step(at(`code exchange (${profile.authMethod})`), () =>
    tokenRequest(discovery, profile, identity, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: pkce.verifier,
      ...(sendsResource(profile, 'exchange') ? { resource: discovery.resource.resource } : {}),
    }),
  );
  const granted = new Set(tokens.scope.split(' '));
  const tool = READ_TOOLS.find(([needs]) => granted.has(needs))?.[1];
  if (!tool) throw new Error(at(`no read-only tool within the granted scope "${tokens.scope}"`));

  const connection: Connection = {
    profile,
    user,
    discovery,
    identity,
    redirectUri,
    authorizationUrl,
    consent: { in: inChromium ? 'chromium' : 'http', text: consent.consentText },
    tokens,
    tool,
    refresh: (refreshToken, round) =>
      tokenRequest(discovery, profile, identity, {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        ...(profile.scopeOnRefresh === 'granted' ? { scope: tokens.scope } : {}),
        ...(sendsResource(profile, { refresh: round }) ? { resource: discovery.resource.resource } : {}),
      }),
    callTool: (accessToken) => callToolWith(matrix, profile, tool, accessToken),
    async accepts(accessToken) {
      const response = await fetch(matrix.mcpUrl, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${accessToken}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(INITIALIZE),
      });
      await response.body?.cancel();
      return response.status !== 401;
    },
  };
  await step(at(`tool call ${tool} after the code exchange`), () => connection.callTool(tokens.accessToken));
  return connection;
}
