// The reference app for tests: a temp database with one user (and their demo company), served on a free port,
// and tokens minted straight from the app's own signer for a chosen set of scopes.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createExampleApp, type ExampleApp, type ExampleAppExtras } from '../../example-app/app';
import { readConfig } from '../../example-app/config';
import { createUser, type AppUser } from '../../example-app/users';
import { BUSINESS_SCOPES } from '../../example-app/scopes';

export const ALL_SCOPES = Object.keys(BUSINESS_SCOPES);
/** The SECRET_KEY of the test instances on PostgreSQL (32 bytes, base64). */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');
export const APP_USER = { email: 'owner@example.com', password: 'a long enough password', name: 'Owner' };

export interface RunningExampleApp extends ExampleApp {
  baseUrl: string;
  user: AppUser;
  databasePath: string;
  /** An access token of a fresh grant for `scopes`, as if the user had consented. */
  mintToken(scopes: string[], user?: AppUser): Promise<string>;
  /** An MCP client connected with a token for `scopes`. */
  connect(scopes: string[], user?: AppUser): Promise<Client>;
  stop(): Promise<void>;
}

export async function startExampleApp(
  env: Record<string, string> = {},
  extras: ExampleAppExtras = {},
): Promise<RunningExampleApp> {
  const dir = mkdtempSync(join(tmpdir(), 'example-app-'));
  const databasePath = join(dir, 'app.db');
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(Number(env.PORT ?? 0), '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  // Instances on one PostgreSQL share the key that seals the app's secrets, as in production.
  const secretKey = env.DATABASE_URL ? { SECRET_KEY: TEST_SECRET_KEY } : {};
  const example = await createExampleApp(
    readConfig({
      BASE_URL: baseUrl,
      DATABASE_PATH: databasePath,
      RATE_LIMITS: 'off',
      LOG_LEVEL: 'silent',
      ...secretKey,
      ...env,
    }),
    extras,
  );
  // As server.ts serves it: the OAuth fast path in front of the Express app.
  http.on('request', example.listener);
  const user = await createUser(example.db, APP_USER);
  const clients: Client[] = [];

  const mintToken = async (scopes: string[], owner = user) => {
    const clientId = randomUUID();
    const now = Date.now();
    await example.store.registerClient({
      clientId,
      clientSecretHash: null,
      clientName: 'Test agent',
      redirectUris: ['http://127.0.0.1/cb'],
      grantTypes: ['authorization_code', 'refresh_token'],
      responseTypes: ['code'],
      tokenEndpointAuthMethod: 'none',
      scope: scopes.join(' '),
      metadata: {},
      issuedAt: now,
    });
    const grantId = randomUUID();
    await example.store.createGrant({
      grantId,
      clientId,
      userId: owner.id,
      scopes,
      resource: `${baseUrl}/mcp`,
      createdAt: now,
      expiresAt: now + 86_400_000,
      lastUsedAt: null,
      revokedAt: null,
    });
    return example.signer.signAccessToken({
      issuer: baseUrl,
      subject: owner.id,
      audience: `${baseUrl}/mcp`,
      clientId,
      scope: scopes.join(' '),
      grantId,
      expiresIn: 3600,
    }).token;
  };

  return {
    ...example,
    baseUrl,
    user,
    databasePath,
    mintToken,
    async connect(scopes, owner = user) {
      const token = await mintToken(scopes, owner);
      const client = new Client({ name: 'tool-tests', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      return client;
    },
    async stop() {
      await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await example.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every row of every business table of the app, to prove a refused call changed nothing. */
export async function snapshot(example: ExampleApp): Promise<string> {
  const tables = [
    'companies',
    'users',
    'clients',
    'products',
    'invoices',
    'invoice_lines',
    'bank_accounts',
    'bank_transactions',
    'prospects',
    'document_templates',
    'documents',
  ];
  return JSON.stringify(
    await Promise.all(tables.map((table) => example.db.all(`SELECT * FROM ${table} ORDER BY id`))),
  );
}
