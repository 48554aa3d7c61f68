// The client matrix driver's shared types (the Matrix, what discovery, identification and the token endpoint give a
// client, and the Connection it holds), in one module so the drive-*.ts files import them without importing each other.
import type { Browser } from 'playwright-core';
import type { AppUser } from '../../example-app/users';
import type { MovableClock } from '../helpers/clock';
import type { DocumentServer } from '../helpers/document-server';
import type { RunningExampleApp } from '../helpers/example-app';
import type { ClientProfile } from './profile';

// Response bodies of the server, read as loosely as a client would.
export type Json = Record<string, any>;

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

/** What any driver's first connection gives the matrix test to check: who the client is, what it asked and got. */
export type Connected = Pick<
  Connection,
  'profile' | 'user' | 'identity' | 'redirectUri' | 'authorizationUrl' | 'consent' | 'tokens' | 'tool'
>;

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
