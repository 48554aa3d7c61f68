// Client ID Metadata Documents shaped like the ones real MCP clients publish (Claude Code, ChatGPT, VS Code), served
// from the local document server, and the client assertions a private_key_jwt client signs.
import { randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { DocumentServer } from './document-server';
import { claudeCode } from '../clients/fixtures/claude-code';
import { rsaKeyPair } from './rsa-keys';

/**
 * RSA keys for the keyed clients, handed out in turn from three (rsa-keys.ts keeps them between runs). A client's
 * next key (rotate) always differs from its current one; tests that need a key no client has take another name.
 */
const RSA_POOL_SIZE = 3;
let rsaTurn = 0;
const nextRsaKey = () => rsaKeyPair(`keyed-client-${rsaTurn++ % RSA_POOL_SIZE}`);

/** Where a document is served, and what a test changes in it. */
export interface DocumentOptions {
  path?: string;
  /** The host name of its URL (the certificate covers the test hosts and 127.0.0.1). */
  host?: string;
  redirectUris?: string[];
  cacheControl?: string;
}

export interface PublishedDocument {
  clientId: string;
  path: string;
  document: Record<string, unknown>;
}

/** Serves `shape` (the document without its client_id) at its URL, with the test's changes. */
function publish(
  server: DocumentServer,
  defaults: Required<Pick<DocumentOptions, 'path' | 'host'>>,
  options: DocumentOptions,
  shape: (clientId: string) => Record<string, unknown>,
): PublishedDocument {
  const path = options.path ?? defaults.path;
  const clientId = server.url(path, options.host ?? defaults.host);
  const document: Record<string, unknown> = { client_id: clientId, ...shape(clientId) };
  if (options.redirectUris) document.redirect_uris = options.redirectUris;
  server.json(path, document, 'cacheControl' in options ? options.cacheControl : 'max-age=3600');
  return { clientId, path, document };
}

/**
 * Claude Code: a public client with portless loopback redirects, used with an ephemeral port. Its document as the
 * client matrix records it (test/clients/fixtures/claude-code.ts, with its sources).
 */
export function claudeCodeDocument(server: DocumentServer, options: DocumentOptions = {}): PublishedDocument {
  if (claudeCode.identification.kind !== 'metadata-document')
    throw new Error('Claude Code publishes a document');
  const { client_id: _published, ...shape } = claudeCode.identification.document;
  return publish(
    server,
    { path: '/oauth/claude-code-client-metadata', host: 'claude.ai.test' },
    options,
    () => ({ ...shape }),
  );
}

/** VS Code: a public client with a fixed-port loopback redirect and a web one. */
export function vsCodeDocument(server: DocumentServer, options: DocumentOptions = {}): PublishedDocument {
  return publish(server, { path: '/oauth/client-metadata.json', host: 'vscode.dev.test' }, options, () => ({
    client_name: 'Visual Studio Code',
    client_uri: 'https://code.visualstudio.com',
    redirect_uris: ['http://127.0.0.1:33418/', 'https://vscode.dev/redirect'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }));
}

export interface KeyedClient extends PublishedDocument {
  jwksPath: string;
  privateKey: KeyObject;
  kid: string;
  /** Replaces the published key with a new one (rotation); later assertions are signed with it. */
  rotate(): void;
  /** A client assertion for `audience`, valid for `lifetimeSeconds`, with optional changes. */
  assertion(audience: string, options?: AssertionOptions): string;
}

interface AssertionOptions {
  lifetimeSeconds?: number;
  jti?: string;
  /** Claims to add or replace; an undefined value removes the claim. */
  claims?: Record<string, unknown>;
  key?: KeyObject;
  kid?: string;
  now?: number;
}

/** ChatGPT: a confidential client that signs private_key_jwt assertions (RS256) with a key of its jwks_uri. */
export function chatGptDocument(server: DocumentServer, options: DocumentOptions = {}): KeyedClient {
  const path = options.path ?? '/oauth/chatgpt-client.json';
  const host = options.host ?? 'chatgpt.com.test';
  const jwksPath = `${path}.jwks`;
  const published = publish(server, { path, host }, options, () => ({
    client_name: 'ChatGPT',
    client_uri: 'https://chatgpt.com',
    redirect_uris: ['https://chatgpt.com/connector_platform_oauth_redirect'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'private_key_jwt',
    token_endpoint_auth_signing_alg: 'RS256',
    jwks_uri: server.url(jwksPath, host),
  }));
  const client: KeyedClient = {
    ...published,
    jwksPath,
    privateKey: undefined as unknown as KeyObject,
    kid: '',
    rotate() {
      const { privateKey, publicKey } = nextRsaKey();
      client.privateKey = privateKey;
      client.kid = `key-${randomUUID().slice(0, 8)}`;
      const jwk = { ...publicKey.export({ format: 'jwk' }), kid: client.kid, use: 'sig', alg: 'RS256' };
      server.json(jwksPath, { keys: [jwk] }, 'max-age=3600');
    },
    assertion(audience, assertion = {}) {
      const now = Math.floor((assertion.now ?? Date.now()) / 1000);
      const claims: Record<string, unknown> = {
        iss: published.clientId,
        sub: published.clientId,
        aud: audience,
        iat: now,
        exp: now + (assertion.lifetimeSeconds ?? 60),
        jti: assertion.jti ?? randomUUID(),
        ...assertion.claims,
      };
      for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
      return jwt.sign(claims, assertion.key ?? client.privateKey, {
        algorithm: 'RS256',
        keyid: assertion.kid ?? client.kid,
      });
    },
  };
  client.rotate();
  return client;
}
