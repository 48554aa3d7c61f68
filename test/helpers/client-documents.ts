// Client ID Metadata Documents shaped like the ones real MCP clients publish (Claude Code, ChatGPT, VS Code), served
// from the local document server, and the client assertions a private_key_jwt client signs.
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { DocumentServer } from './document-server';

/** Claude Code: a public client with portless loopback redirects, used with an ephemeral port. */
export function claudeCodeDocument(
  server: DocumentServer,
  path = '/oauth/claude-code-client-metadata',
  host = 'claude.ai.test',
) {
  const clientId = server.url(path, host);
  const document = {
    client_id: clientId,
    client_name: 'Claude Code',
    client_uri: 'https://claude.ai',
    redirect_uris: ['http://localhost/callback', 'http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  server.json(path, document, 'max-age=3600');
  return { clientId, path, document };
}

/** VS Code: a public client with a fixed-port loopback redirect and a web one. */
export function vsCodeDocument(
  server: DocumentServer,
  redirectUris?: string[],
  path = '/oauth/client-metadata.json',
) {
  const clientId = server.url(path, 'vscode.dev.test');
  const document = {
    client_id: clientId,
    client_name: 'Visual Studio Code',
    client_uri: 'https://code.visualstudio.com',
    redirect_uris: redirectUris ?? ['http://127.0.0.1:33418/', 'https://vscode.dev/redirect'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  server.json(path, document);
  return { clientId, path, document };
}

export interface KeyedClient {
  clientId: string;
  path: string;
  jwksPath: string;
  document: Record<string, unknown>;
  privateKey: KeyObject;
  kid: string;
  /** Replaces the published key with a new one (rotation); later assertions are signed with it. */
  rotate(): void;
  /** A client assertion for `audience`, valid for `lifetimeSeconds`, with optional changes. */
  assertion(audience: string, options?: AssertionOptions): string;
}

export interface AssertionOptions {
  lifetimeSeconds?: number;
  jti?: string;
  claims?: Record<string, unknown>;
  key?: KeyObject | string;
  algorithm?: jwt.Algorithm | 'none';
  kid?: string | null;
  now?: number;
}

/** ChatGPT: a confidential client that signs private_key_jwt assertions (RS256) with a key of its jwks_uri. */
export function chatGptDocument(
  server: DocumentServer,
  path = '/oauth/chatgpt-client.json',
  host = 'chatgpt.com.test',
): KeyedClient {
  const clientId = server.url(path, host);
  const jwksPath = `${path}.jwks`;
  const client: KeyedClient = {
    clientId,
    path,
    jwksPath,
    document: {
      client_id: clientId,
      client_name: 'ChatGPT',
      client_uri: 'https://chatgpt.com',
      redirect_uris: ['https://chatgpt.com/connector_platform_oauth_redirect'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'RS256',
      jwks_uri: server.url(jwksPath, host),
    },
    privateKey: undefined as unknown as KeyObject,
    kid: '',
    rotate() {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      client.privateKey = privateKey;
      client.kid = `key-${randomUUID().slice(0, 8)}`;
      const jwk = { ...publicKey.export({ format: 'jwk' }), kid: client.kid, use: 'sig', alg: 'RS256' };
      server.json(jwksPath, { keys: [jwk] }, 'max-age=3600');
    },
    assertion(audience, options = {}) {
      const now = Math.floor((options.now ?? Date.now()) / 1000);
      const claims: Record<string, unknown> = {
        iss: clientId,
        sub: clientId,
        aud: audience,
        iat: now,
        exp: now + (options.lifetimeSeconds ?? 60),
        jti: options.jti ?? randomUUID(),
        ...options.claims,
      };
      for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
      const algorithm = options.algorithm ?? 'RS256';
      const kid = options.kid === null ? undefined : (options.kid ?? client.kid);
      return jwt.sign(claims, (options.key ?? client.privateKey) as jwt.Secret, {
        algorithm: algorithm as jwt.Algorithm,
        ...(kid ? { keyid: kid } : {}),
      });
    },
  };
  client.rotate();
  server.json(path, client.document, 'max-age=3600');
  return client;
}
