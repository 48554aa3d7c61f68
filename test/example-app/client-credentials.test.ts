// Machine clients of the reference app, as its contract states them: `npm run client:create` as a real process (the
// JSON it prints, each refusal a one-line message and a non-zero exit), then real clients: openid-client v6's
// clientCredentialsGrant (client_secret_basic, and private_key_jwt with a jwks_uri served over https) and the
// official MCP client calling tools on the account of the user given with --user. SQLite; the command against
// PostgreSQL too when DATABASE_URL is set.
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createUser } from '../../example-app/users';
import { runCommand, type CommandRun } from '../helpers/app-process';
import { resolveToLoopback, startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { APP_USER, startExampleApp, TEST_SECRET_KEY, type RunningExampleApp } from '../helpers/example-app';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';
import { testCa } from '../helpers/test-ca';

const ROOT = join(__dirname, '../..');
const CLI = join(ROOT, 'dist/example-app/cli/client-create.js');
const DRIVER = join(__dirname, 'client-credentials-driver.mjs');

// The SQLite runs are of the default app: the PostgreSQL and Redis that CI exports are not theirs.
const { DATABASE_URL: _postgres, REDIS_URL: _redis, ...baseEnv } = process.env;

const run = (env: Record<string, string>, args: string[]) => runCommand(CLI, args, { ...baseEnv, ...env });

/** What `client:create` prints last. */
interface CreatedClient {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method: string;
  grant_types: string[];
  scope: string;
  redirect_uris?: string[];
  jwks_uri?: string;
  acts_for?: string;
}

async function clientCreate(env: Record<string, string>, args: string[]): Promise<CreatedClient> {
  const result = await run(env, args);
  if (result.code !== 0) throw new Error(`client:create exited with ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as CreatedClient;
}

/** One token request's outcome, as openid-client reports it. */
type GrantResult =
  | { accessToken: string; tokenType: string; scope: string; refreshToken: string | null }
  | { error: string; status?: number };

/** openid-client's discovery then one clientCredentialsGrant per request, in its own process (it is ESM-only). */
async function clientCredentials(
  base: string,
  client: { clientId: string; clientSecret?: string; privateJwk?: Record<string, unknown> },
  requests: Record<string, string>[] = [{}],
): Promise<GrantResult[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [DRIVER, JSON.stringify({ base, ...client, requests })],
    { timeout: 30_000 },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as GrantResult[];
}

const tokenOf = (result: GrantResult | undefined): string => {
  if (!result || !('accessToken' in result)) throw new Error(`no token: ${JSON.stringify(result)}`);
  return result.accessToken;
};

/** The official MCP client with a Bearer token: the tools it sees, and one tool's structured answer. */
async function withMcp<T>(base: string, token: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'machine-client', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

const companyName = (base: string, token: string) =>
  withMcp(base, token, async (client) => {
    const result = await client.callTool({ name: 'get_company', arguments: {} });
    return (result.structuredContent as { name: string }).name;
  });

/** Whether the token may call the tool: true when it runs, false when it is refused with 403 insufficient_scope. */
const mayCall = (base: string, token: string, name: string) =>
  withMcp(base, token, (client) =>
    client.callTool({ name, arguments: {} }).then(
      () => true,
      (error: { code?: number }) => {
        if (error.code === 403) return false;
        throw error;
      },
    ),
  );

let app: RunningExampleApp;
let documents: DocumentServer;
let sqlite: Record<string, string>;
beforeAll(async () => {
  documents = await startDocumentServer();
  // The jwks_uri of a private_key_jwt client is fetched like a metadata document: here from the loopback test
  // server, trusted through the test CA.
  app = await startExampleApp(
    { CIMD_ALLOW_LOOPBACK: '1' },
    { clientMetadataDocuments: { ca: testCa().caPem, resolveHost: resolveToLoopback } },
  );
  sqlite = { DATABASE_PATH: app.databasePath };
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await documents?.stop();
});

describe('npm run client:create', () => {
  test('a machine client: its id and secret as JSON on the last line, and its user kept with it', async () => {
    const result = await run(sqlite, [
      '--name',
      'Nightly export',
      '--grant-types',
      'client_credentials',
      '--user',
      APP_USER.email.toUpperCase(),
      '--scope',
      'company:read clients:read',
    ]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const created = JSON.parse(result.stdout.trim().split('\n').pop()!) as CreatedClient;
    expect(created).toEqual({
      client_id: expect.stringMatching(/^[\w-]{22}$/),
      client_secret: expect.stringMatching(/^[\w-]{40,}$/),
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['client_credentials'],
      scope: 'company:read clients:read',
      acts_for: APP_USER.email,
    });
    const record = await app.store.findClient(created.client_id);
    expect(record).toMatchObject({
      clientName: 'Nightly export',
      metadata: { acts_for_user: app.user.id },
    });
    // Only the secret's hash is kept.
    expect(JSON.stringify(record)).not.toContain(created.client_secret);
  });

  test('a browser client with --redirect-uri and --jwks-uri: private_key_jwt, no secret, no user', async () => {
    const created = await clientCreate(sqlite, [
      '--name',
      'Back office',
      '--grant-types',
      'authorization_code,refresh_token',
      '--redirect-uri',
      'https://backoffice.example.com/callback',
      '--redirect-uri',
      'http://127.0.0.1/callback',
      '--jwks-uri',
      'https://backoffice.example.com/jwks.json',
    ]);
    expect(created).toEqual({
      client_id: expect.any(String),
      token_endpoint_auth_method: 'private_key_jwt',
      grant_types: ['authorization_code', 'refresh_token'],
      scope: expect.stringContaining('company:read'),
      redirect_uris: ['https://backoffice.example.com/callback', 'http://127.0.0.1/callback'],
      jwks_uri: 'https://backoffice.example.com/jwks.json',
    });
  });

  const machine = ['--name', 'Bot', '--grant-types', 'client_credentials', '--user', APP_USER.email];
  test.each([
    ['no name', machine.slice(2), 1, /A client name is required: --name/],
    ['an empty name', ['--name', '  ', ...machine.slice(2)], 1, /A client name is required/],
    ['a name too long', ['--name', 'x'.repeat(201), ...machine.slice(2)], 1, /at most 200 characters/],
    ['no grant types', ['--name', 'Bot', '--user', APP_USER.email], 1, /Grant types are required/],
    [
      'an unknown grant type',
      ['--name', 'Bot', '--grant-types', 'client_credentials,password', '--user', APP_USER.email],
      1,
      /"password" is not a grant type a client may have here: use client_credentials, authorization_code, refresh_token/,
    ],
    [
      'the jwt-bearer grant type with --user (the user comes from each ID-JAG)',
      [
        '--name',
        'Bot',
        '--grant-types',
        'urn:ietf:params:oauth:grant-type:jwt-bearer',
        '--user',
        APP_USER.email,
      ],
      1,
      /--user goes with client_credentials only/,
    ],
    [
      'refresh_token without authorization_code',
      ['--name', 'Bot', '--grant-types', 'client_credentials,refresh_token', '--user', APP_USER.email],
      1,
      /refresh_token goes with authorization_code/,
    ],
    [
      'client_credentials without --user',
      ['--name', 'Bot', '--grant-types', 'client_credentials'],
      1,
      /--user EMAIL is required with client_credentials/,
    ],
    [
      'an unknown user',
      [...machine.slice(0, 4), '--user', 'nobody@example.com'],
      1,
      /No user has the email nobody@example\.com: create one first with npm run user:create/,
    ],
    [
      'a malformed user email',
      [...machine.slice(0, 4), '--user', 'nobody-at-example'],
      1,
      /"nobody-at-example" is not a valid email address \(--user\)/,
    ],
    [
      '--user on a client that is not a machine client',
      [
        '--name',
        'Web',
        '--grant-types',
        'authorization_code',
        '--redirect-uri',
        'https://a.example/cb',
        '--user',
        APP_USER.email,
      ],
      1,
      /--user goes with client_credentials only/,
    ],
    [
      'a scope not in the catalogue',
      [...machine, '--scope', 'company:read bank:write'],
      1,
      /"bank:write" is not a scope of this service: use any of fakture:read/,
    ],
    ['an empty scope', [...machine, '--scope', ' '], 1, /--scope is empty/],
    [
      'an http jwks-uri',
      [...machine, '--jwks-uri', 'http://keys.example.com/jwks.json'],
      1,
      /--jwks-uri must be an https URL/,
    ],
    [
      'authorization_code without a redirect URI',
      ['--name', 'Web', '--grant-types', 'authorization_code,refresh_token'],
      1,
      /authorization_code needs --redirect-uri URI/,
    ],
    [
      'a redirect URI the registration rules refuse',
      ['--name', 'Web', '--grant-types', 'authorization_code', '--redirect-uri', 'http://a.example/cb'],
      1,
      /Invalid redirect URI: http redirect URIs are allowed only on a loopback host/,
    ],
    [
      'a redirect URI on a machine client',
      [...machine, '--redirect-uri', 'https://a.example/cb'],
      1,
      /--redirect-uri goes with authorization_code only/,
    ],
    [
      'an unknown option',
      [...machine, '--admin'],
      2,
      /Unknown option '--admin'.* Usage: npm run client:create/,
    ],
    [
      'a stray argument',
      [...machine, 'extra'],
      2,
      /Unexpected argument 'extra'.* Usage: npm run client:create/,
    ],
  ])('refuses %s: a non-zero exit and one line saying what to fix', async (_name, args, code, message) => {
    const result = await run(sqlite, args);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stdout).toBe('');
  });

  test('input refused before the database is opened: a typo creates no database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'client-create-'));
    try {
      const databasePath = join(dir, 'app.db');
      const result = await run({ DATABASE_PATH: databasePath }, ['--name', 'Bot', '--grant-types', 'client']);
      expect(result.code).toBe(1);
      expect(existsSync(databasePath)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a machine client, through openid-client and the MCP client', () => {
  test('client_secret_basic: a token for what --scope allowed, narrower on request, never wider; the tools act on the --user account', async () => {
    const bob = await createUser(app.db, {
      email: 'bob@example.com',
      password: 'a long enough password',
      company: 'Bob Builders',
    });
    const created = await clientCreate(sqlite, [
      '--name',
      "Bob's nightly export",
      '--grant-types',
      'client_credentials',
      '--user',
      bob.email,
      '--scope',
      'company:read clients:read',
    ]);
    const [full, narrower, wider] = await clientCredentials(
      app.baseUrl,
      { clientId: created.client_id, clientSecret: created.client_secret! },
      [{}, { scope: 'company:read' }, { scope: 'company:read fakture:read' }],
    );
    // RFC 6749 §4.4.3: no refresh token.
    expect(full).toEqual({
      accessToken: expect.any(String),
      tokenType: 'bearer',
      scope: 'company:read clients:read',
      refreshToken: null,
    });
    expect(narrower).toMatchObject({ scope: 'company:read' });
    expect(wider).toEqual({ error: 'invalid_scope', status: 400 });

    // The MCP client with the machine's token: Bob's company, not the owner's.
    expect(await companyName(app.baseUrl, tokenOf(full))).toBe('Bob Builders');
    for (const [token, name, allowed] of [
      [tokenOf(full), 'list_clients', true],
      [tokenOf(full), 'list_invoices', false],
      [tokenOf(narrower), 'get_company', true],
      [tokenOf(narrower), 'list_clients', false],
    ] as const)
      expect([name, await mayCall(app.baseUrl, token, name)]).toEqual([name, allowed]);
    // A user's token works as before, on its own user's company.
    expect(await companyName(app.baseUrl, await app.mintToken(['company:read']))).not.toBe('Bob Builders');
  });

  test('private_key_jwt: a client whose --jwks-uri is served over https gets a token, and its user’s tools', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const kid = 'machine-key-1';
    documents.json('/machine/jwks.json', {
      keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' }],
    });
    const created = await clientCreate(sqlite, [
      '--name',
      'Signed export',
      '--grant-types',
      'client_credentials',
      '--user',
      APP_USER.email,
      '--scope',
      'company:read',
      '--jwks-uri',
      documents.url('/machine/jwks.json'),
    ]);
    expect(created).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt' });
    expect(created.client_secret).toBeUndefined();
    const [signed] = await clientCredentials(app.baseUrl, {
      clientId: created.client_id,
      privateJwk: { ...privateKey.export({ format: 'jwk' }), kid },
    });
    expect(signed).toMatchObject({ scope: 'company:read', refreshToken: null });
    expect(documents.hits('/machine/jwks.json')).toBeGreaterThan(0);
    const owners = await companyName(app.baseUrl, await app.mintToken(['company:read']));
    expect(await companyName(app.baseUrl, tokenOf(signed))).toBe(owners);
  });

  test('dynamic registration never gets client_credentials: asked for, refused; its clients are refused the grant', async () => {
    const register = (body: Record<string, unknown>) =>
      fetch(`${app.baseUrl}/v1/oauth/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Stranger',
          redirect_uris: ['http://127.0.0.1/cb'],
          token_endpoint_auth_method: 'client_secret_basic',
          ...body,
        }),
      });
    const asked = await register({ grant_types: ['client_credentials'] });
    expect(asked.status).toBe(400);
    expect(await asked.json()).toMatchObject({ error: 'invalid_client_metadata' });
    const asked2 = await register({ grant_types: ['authorization_code', 'client_credentials'] });
    expect(asked2.status).toBe(400);

    const registered = await register({});
    expect(registered.status).toBe(201);
    const answer = (await registered.json()) as {
      client_id: string;
      client_secret: string;
      grant_types: string[];
    };
    expect(answer.grant_types).not.toContain('client_credentials');
    const [refused] = await clientCredentials(app.baseUrl, {
      clientId: answer.client_id,
      clientSecret: answer.client_secret,
    });
    expect(refused).toEqual({ error: 'unauthorized_client', status: 400 });
  });

  const tokenForUserOf = async (registered: { clientId: string; clientSecret?: string }) =>
    tokenOf((await clientCredentials(app.baseUrl, registered))[0]);

  const refusal = async (token: string) => {
    const res = await fetch(`${app.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        Accept: 'application/json, text/event-stream',
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    return { status: res.status, challenge: res.headers.get('www-authenticate') };
  };
  // The refusal of a deleted user's token (mcp-endpoint.test.ts).
  const deletedUser = () => ({
    status: 401,
    challenge: `Bearer resource_metadata="${app.baseUrl}/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="The user of this token no longer exists."`,
  });

  test('a machine token whose user was deleted is refused at /mcp, as a deleted user’s token is', async () => {
    const temp = await createUser(app.db, { email: 'temp@example.com', password: 'a long enough password' });
    const created = await clientCreate(sqlite, [
      '--name',
      'Temp export',
      '--grant-types',
      'client_credentials',
      '--user',
      temp.email,
    ]);
    const token = await tokenForUserOf({ clientId: created.client_id, clientSecret: created.client_secret });
    await app.db.run('DELETE FROM users WHERE id = ?', [Number(temp.id)]);
    expect(await refusal(token)).toEqual(deletedUser());
  });

  test('a client_credentials client registered with no user of this app is refused the same way', async () => {
    // Through the library, without the app's command: nothing says whose account it would act on.
    const bare = await app.oauth.registerOperatorClient({ name: 'Bare', grantTypes: ['client_credentials'] });
    const token = await tokenForUserOf({ clientId: bare.clientId, clientSecret: bare.clientSecret });
    expect(await refusal(token)).toEqual(deletedUser());
  });
});

describeWith('npm run client:create on PostgreSQL', { postgres: true }, () => {
  let database: TestDatabase;
  let pgApp: RunningExampleApp;
  let postgres: Record<string, string>;
  beforeAll(async () => {
    database = await createTestDatabase();
    pgApp = await startExampleApp({ DATABASE_URL: database.url });
    postgres = { DATABASE_URL: database.url, SECRET_KEY: TEST_SECRET_KEY };
  }, 60_000);
  afterAll(async () => {
    await pgApp?.stop();
    await database?.drop();
  });

  test('registers a machine client whose token acts on the --user account', async () => {
    const created = await clientCreate(postgres, [
      '--name',
      'Nightly export',
      '--grant-types',
      'client_credentials',
      '--user',
      APP_USER.email,
      '--scope',
      'company:read',
    ]);
    expect(await pgApp.store.findClient(created.client_id)).toMatchObject({
      metadata: { acts_for_user: pgApp.user.id },
    });
    const token = tokenOf(
      (
        await clientCredentials(pgApp.baseUrl, {
          clientId: created.client_id,
          clientSecret: created.client_secret!,
        })
      )[0],
    );
    const owners = await companyName(pgApp.baseUrl, await pgApp.mintToken(['company:read']));
    expect(await companyName(pgApp.baseUrl, token)).toBe(owners);
  });

  test('refuses an unknown user with one line and a non-zero exit', async () => {
    const result = await run(postgres, [
      '--name',
      'Bot',
      '--grant-types',
      'client_credentials',
      '--user',
      'nobody@example.com',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'No user has the email nobody@example.com: create one first with npm run user:create.',
    );
  });
});
