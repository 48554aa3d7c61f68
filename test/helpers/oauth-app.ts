// A test server: the OAuth router on a temp SQLite store, a fake clock, one user, and a protected endpoint.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type Express } from 'express';
import request from 'supertest';
import { createJwtSigner, type JwtSigner } from '../../lib/crypto/signer';
import type { OAuthRouterOptions } from '../../lib/options';
import { createOAuthRouter, type OAuthRouter } from '../../lib/router';
import { createSqliteStore, type SqliteStore } from '../../lib/store/sqlite';
import type { OAuthStore } from '../../lib/store/types';
import type { AuthenticatedRequest } from '../../lib/middleware/bearer';
import { createFakeClock, type FakeClock } from './clock';
import { inEditLoop } from './edit-loop';
import { registerFastPath } from './fast-path';
import { pkcePair } from './pkce';
import { BUSINESS_SCOPES } from '../../example-app/scopes';

export const ISSUER = 'http://127.0.0.1:4000';
export const RESOURCE = `${ISSUER}/mcp`;
export const USER = {
  id: 'user-1',
  email: 'ana@example.com',
  password: 'correct horse battery',
  name: 'Ana',
};
export const REDIRECT_URI = 'https://client.example/callback';

export interface TestServer {
  app: Express;
  oauth: OAuthRouter;
  store: SqliteStore;
  signer: JwtSigner;
  clock: FakeClock;
  dbPath: string;
  close(): void;
}

/** The test app on any store: the OAuth router, one user, a fake clock, and protected endpoints. */
export function mountTestApp(
  store: OAuthStore,
  clock: FakeClock,
  options: Partial<OAuthRouterOptions> = {},
): { app: Express; oauth: OAuthRouter; signer: JwtSigner } {
  const signer = createJwtSigner({ now: clock.now });
  const oauth = createOAuthRouter(store, signer, {
    issuer: ISSUER,
    scopes: BUSINESS_SCOPES,
    now: clock.now,
    rateLimits: false,
    // As every deployment should: without it, each router warns once and makes its own.
    secret: 'test-secret-'.repeat(3),
    authenticateUser: (email, password) =>
      email === USER.email && password === USER.password
        ? { id: USER.id, name: USER.name, email: USER.email }
        : null,
    onError: () => undefined,
    ...options,
  });
  const app = express();
  app.use(oauth);
  app.post('/mcp', oauth.requireBearer(), (req, res) => {
    res.json({ ok: true, auth: (req as AuthenticatedRequest).auth });
  });
  app.get('/mcp/invoices', oauth.requireBearer({ scopes: ['fakture:read'] }), (_req, res) => {
    res.json({ invoices: [] });
  });
  registerFastPath(app, oauth);
  return { app, oauth, signer };
}

// The edit loop's stores start as copies of one database migrated once per test file: the schema's statements are
// not run again for every test.
let migrated: Buffer | undefined;
function migratedCopy(): import('better-sqlite3').Database {
  if (!migrated) {
    const template = createSqliteStore(':memory:');
    migrated = template.database.serialize();
    template.close();
  }
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  return new Database(migrated);
}

/**
 * The test app on a fresh SQLite store, in a temp file. In the edit loop (`npm run test:fast`, edit-loop.ts) the same
 * store lives in memory instead: creating, writing and closing a file per test was an eighth of the HTTP tests'
 * time, and `npm test` runs them all on a file. A test that reads the file itself (`dbPath`) fails there at once
 * rather than finding no file and passing.
 */
export function createTestServer(options: Partial<OAuthRouterOptions> = {}): TestServer {
  const clock = createFakeClock(Date.now());
  if (inEditLoop) {
    const database = migratedCopy();
    const store = createSqliteStore(database, { now: clock.now });
    const { app, oauth, signer } = mountTestApp(store, clock, options);
    const server = {
      app,
      oauth,
      store,
      signer,
      clock,
      close: () => {
        store.close();
        database.close();
      },
    };
    // Not enumerable: a spread copy of the server (upstream-world.ts) leaves it out rather than throwing.
    return Object.defineProperty(server, 'dbPath', {
      get(): string {
        throw new Error('this test reads the database file: npm test runs it, npm run test:fast cannot');
      },
    }) as TestServer;
  }
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-app-'));
  const dbPath = join(dir, 'oauth.db');
  const store = createSqliteStore(dbPath, { now: clock.now });
  const { app, oauth, signer } = mountTestApp(store, clock, options);
  return {
    app,
    oauth,
    store,
    signer,
    clock,
    dbPath,
    close: () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  [field: string]: unknown;
}

export async function registerClient(
  app: Express,
  metadata: Record<string, unknown> = {},
): Promise<RegisteredClient> {
  const res = await request(app)
    .post('/v1/oauth/register')
    .send({ client_name: 'Test Client', redirect_uris: [REDIRECT_URI], ...metadata });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Form fields and the form's action from a rendered page. */
export function formOf(html: string): { action: string; fields: Record<string, string | string[]> } {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '';
  const fields: Record<string, string | string[]> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    fields[match[1]!] = match[2]!;
  }
  // Ticked checkboxes (the consent page's scopes) are sent as a list, as a browser sends them.
  for (const match of html.matchAll(/<input type="checkbox"[^>]* name="([^"]+)" value="([^"]*)" checked>/g)) {
    fields[match[1]!] = [...((fields[match[1]!] as string[] | undefined) ?? []), match[2]!];
  }
  return { action: new URL(action.replace(/&amp;/g, '&'), 'http://relative.invalid').pathname, fields };
}

export function authorizeQuery(client: RegisteredClient, overrides: Record<string, string | undefined> = {}) {
  const pkce = pkcePair();
  const params: Record<string, string> = {};
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: client.redirect_uris[0],
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    state: 'state-123',
    scope: 'fakture:read clients:read',
    resource: RESOURCE,
    ...overrides,
  };
  for (const [key, value] of Object.entries(all)) if (value !== undefined) params[key] = value;
  return { query: new URLSearchParams(params).toString(), pkce };
}

/**
 * A browser (cookie jar) that signs in and allows (or denies), returning the redirect back to the client. With
 * `ticked`, only those scopes' boxes are left ticked on the consent page, as a person unticking the rest sends it.
 */
export async function authorizeInBrowser(
  app: Express,
  client: RegisteredClient,
  overrides: Record<string, string | undefined> = {},
  decision: 'allow' | 'deny' = 'allow',
  ticked?: string[],
) {
  const browser = request.agent(app);
  const { query, pkce } = authorizeQuery(client, overrides);
  const login = await browser.get(`/v1/oauth/authorize?${query}`);
  if (login.status !== 200) throw new Error(`authorize page: ${login.status} ${login.text}`);
  const signIn = formOf(login.text);
  const signedIn = await browser
    .post(signIn.action)
    .type('form')
    .send({ ...signIn.fields, email: USER.email, password: USER.password });
  if (signedIn.status !== 303) throw new Error(`sign-in: ${signedIn.status} ${signedIn.text}`);
  const consent = await browser.get(
    new URL(signedIn.headers.location!).pathname + new URL(signedIn.headers.location!).search,
  );
  const form = formOf(consent.text);
  const decided = await browser
    .post(form.action)
    .type('form')
    .send({ ...form.fields, ...(ticked ? { scope: ticked } : {}), decision });
  const location = new URL(decided.headers.location ?? 'about:blank');
  return {
    browser,
    pkce,
    decided,
    location,
    code: location.searchParams.get('code') ?? undefined,
    page: consent.text,
  };
}

/** Registers, authorizes and exchanges: a client holding fresh tokens. */
export async function obtainTokens(
  server: TestServer,
  metadata: Record<string, unknown> = {},
  overrides = {},
) {
  const client = await registerClient(server.app, metadata);
  const { code, pkce } = await authorizeInBrowser(server.app, client, overrides);
  const res = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: pkce.verifier,
  });
  if (res.status !== 200) throw new Error(`token exchange: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    client,
    tokens: res.body as { access_token: string; refresh_token: string; scope: string; expires_in: number },
  };
}

/** A token endpoint request, authenticated the way the client registered. */
export function tokenRequest(
  app: Express,
  client: RegisteredClient,
  body: Record<string, string>,
  path = '/v1/oauth/token',
) {
  const req = request(app).post(path).type('form');
  const method = client.token_endpoint_auth_method;
  if (method === 'client_secret_basic') return req.auth(client.client_id, client.client_secret!).send(body);
  if (method === 'client_secret_post')
    return req.send({ ...body, client_id: client.client_id, client_secret: client.client_secret! });
  return req.send({ ...body, client_id: client.client_id });
}
