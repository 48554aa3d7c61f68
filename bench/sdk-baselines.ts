// The MCP SDK's own building blocks as bench baselines, written the way its README and examples show them:
//   sdk-router   mcpAuthRouter + requireBearerAuth over a minimal in-memory provider issuing ES256 JWTs (a fair,
//                small implementation of OAuthServerProvider), and behind it the README's stateless /mcp: a new
//                McpServer with every tool of the reference app (their input schemas built with it, as the
//                README's inline `inputSchema` is) and a new transport per request
//   sdk-reused   the SDK transport with servers built once and reused (a free one per request), no auth at all
//   bare-ping    Express answering a JSON-RPC ping by hand, no MCP SDK: the floor of what /mcp could cost
import { createPrivateKey, createPublicKey, randomBytes, randomUUID } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import jwt from 'jsonwebtoken';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { s256Challenge } from '../lib/crypto/pkce';
import { ISSUER, RESOURCE, VERIFIER } from './fixtures';

/** What the load side needs to drive the SDK router: ids it can rebuild from the counts alone. */
export const SDK_CLIENT_ID = 'sdk-bench-client';
export const SDK_REDIRECT_URI = 'http://127.0.0.1:9/callback';
export const sdkCode = (i: number) => `sdk-code-${i}`;
export const sdkRefreshToken = (i: number) => `sdk-refresh-${i}`;

/** The claims the SDK baseline's tokens carry; the company rides in the token, so its tools need no lookup. */
export function signSdkAccessToken(
  keyPem: string,
  claims: { sub: string; scope: string; company_id: number },
) {
  return jwt.sign({ ...claims, client_id: SDK_CLIENT_ID }, createPrivateKey(keyPem), {
    algorithm: 'ES256',
    issuer: ISSUER,
    audience: RESOURCE,
    expiresIn: 3600,
    jwtid: randomUUID(),
  });
}

function inMemoryProvider(
  keyPem: string,
  counts: { codes: number; refreshTokens: number },
): OAuthServerProvider {
  const privateKey = createPrivateKey(keyPem);
  const publicKey = createPublicKey(keyPem);
  const clients = new Map<string, OAuthClientInformationFull>();
  clients.set(SDK_CLIENT_ID, {
    client_id: SDK_CLIENT_ID,
    redirect_uris: [SDK_REDIRECT_URI],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    scope: 'fakture:read clients:read',
  });
  type Code = { clientId: string; challenge: string; redirectUri: string; scopes: string[] };
  const codes = new Map<string, Code>();
  const refreshTokens = new Map<string, { clientId: string; scopes: string[]; sub: string }>();
  const challenge = s256Challenge(VERIFIER);
  const scopes = ['fakture:read', 'clients:read'];
  for (let i = 0; i < counts.codes; i += 1)
    codes.set(sdkCode(i), { clientId: SDK_CLIENT_ID, challenge, redirectUri: SDK_REDIRECT_URI, scopes });
  for (let i = 0; i < counts.refreshTokens; i += 1)
    refreshTokens.set(sdkRefreshToken(i), { clientId: SDK_CLIENT_ID, scopes, sub: 'bench-user' });

  const issue = (clientId: string, sub: string, granted: string[]): OAuthTokens => {
    const refresh = randomBytes(32).toString('base64url');
    refreshTokens.set(refresh, { clientId, scopes: granted, sub });
    const access = jwt.sign({ sub, client_id: clientId, scope: granted.join(' ') }, privateKey, {
      algorithm: 'ES256',
      issuer: ISSUER,
      audience: RESOURCE,
      expiresIn: 3600,
      jwtid: randomUUID(),
    });
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: refresh,
      scope: granted.join(' '),
    };
  };

  return {
    clientsStore: {
      getClient: async (clientId) => clients.get(clientId),
      registerClient: async (client) => {
        const full = {
          ...client,
          client_id: randomUUID(),
          client_id_issued_at: Math.floor(Date.now() / 1000),
        };
        clients.set(full.client_id, full);
        return full;
      },
    },
    async authorize(client, params, res) {
      const code = randomBytes(32).toString('base64url');
      codes.set(code, {
        clientId: client.client_id,
        challenge: params.codeChallenge,
        redirectUri: params.redirectUri,
        scopes: params.scopes ?? [],
      });
      const target = new URL(params.redirectUri);
      target.searchParams.set('code', code);
      if (params.state) target.searchParams.set('state', params.state);
      res.redirect(target.href);
    },
    async challengeForAuthorizationCode(client, code) {
      const entry = codes.get(code);
      if (!entry || entry.clientId !== client.client_id) throw new InvalidGrantError('Unknown code.');
      return entry.challenge;
    },
    async exchangeAuthorizationCode(client, code, _verifier, redirectUri) {
      const entry = codes.get(code);
      if (!entry || entry.clientId !== client.client_id) throw new InvalidGrantError('Unknown code.');
      if (redirectUri !== undefined && redirectUri !== entry.redirectUri)
        throw new InvalidGrantError('redirect_uri mismatch.');
      codes.delete(code);
      return issue(client.client_id, 'bench-user', entry.scopes);
    },
    async exchangeRefreshToken(client, refreshToken, requested) {
      const entry = refreshTokens.get(refreshToken);
      if (!entry || entry.clientId !== client.client_id)
        throw new InvalidGrantError('Unknown refresh token.');
      refreshTokens.delete(refreshToken);
      const granted = requested ? entry.scopes.filter((scope) => requested.includes(scope)) : entry.scopes;
      return issue(client.client_id, entry.sub, granted);
    },
    async verifyAccessToken(token): Promise<AuthInfo> {
      try {
        const claims = jwt.verify(token, publicKey, {
          algorithms: ['ES256'],
          issuer: ISSUER,
          audience: RESOURCE,
        }) as jwt.JwtPayload;
        return {
          token,
          clientId: String(claims.client_id),
          scopes: String(claims.scope ?? '').split(' '),
          expiresAt: claims.exp,
          extra: { userId: claims.sub, companyId: claims.company_id },
        };
      } catch {
        throw new InvalidTokenError('The token is not valid.');
      }
    },
  };
}

/** mcpAuthRouter and, behind requireBearerAuth, the README's stateless pattern: everything built per request. */
export function sdkRouterApp(
  keyPem: string,
  counts: { codes: number; refreshTokens: number },
  createServer: () => McpServer,
): Express {
  const app = express();
  app.disable('x-powered-by');
  const provider = inMemoryProvider(keyPem, counts);
  const off = { rateLimit: false as const };
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(ISSUER),
      resourceServerUrl: new URL(RESOURCE),
      tokenOptions: off,
      authorizationOptions: off,
      clientRegistrationOptions: off,
      revocationOptions: off,
    }),
  );
  app.post('/mcp', requireBearerAuth({ verifier: provider }), express.json(), async (req, res) => {
    const server = createServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  return app;
}

/** The SDK transport with servers built once and reused, one request at a time each, and no auth. */
export function sdkReusedApp(createServer: () => McpServer, auth: AuthInfo): Express {
  const app = express();
  app.disable('x-powered-by');
  const idle: McpServer[] = [];
  const asBenchUser: RequestHandler = (req, _res, next) => {
    (req as { auth?: AuthInfo }).auth = auth;
    next();
  };
  app.post('/mcp', asBenchUser, express.json(), async (req, res) => {
    const server = idle.pop() ?? createServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
    await server.close();
    idle.push(server);
  });
  return app;
}

/** A JSON-RPC ping answered by hand: what a request costs Express with no MCP SDK. */
export function barePingApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.post('/mcp', express.json(), (req, res) => {
    res.json({ jsonrpc: '2.0', id: (req.body as { id?: unknown }).id ?? null, result: {} });
  });
  return app;
}
