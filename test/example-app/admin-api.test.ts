// The reference app's admin API ({base}/admin/api): the console's lists and acts as JSON, for automation. A client
// made by the real `npm run client:create -- --grant-types client_credentials --user <administrator> --scope admin`
// process gets a token for the API's resource, lists every client and grant a page at a time, revokes a grant,
// disables and enables a client and runs the idle purge; and every refusal is JSON: no token, a token of the tool
// server, a client whose user is no longer an administrator, bad parameters, an unknown route.
import { join } from 'node:path';
import { createUser } from '../../example-app/users';
import { clientRecord } from '../../lib/testing/fixtures';
import { runCommand } from '../helpers/app-process';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app';

const CLI = join(__dirname, '../../dist/example-app/cli/client-create.js');
const ADMIN = { email: 'admin@example.com', password: 'an administrator password', name: 'Ada Admin' };
// The SQLite runs are of the default app: the PostgreSQL and Redis that CI exports are not theirs.
const { DATABASE_URL: _postgres, REDIS_URL: _redis, ...baseEnv } = process.env;

let app: RunningExampleApp;
let admin: { id: string };
let ops: { client_id: string; client_secret: string; scope: string };
let token: string;

const clientCreate = (args: string[]) =>
  runCommand(CLI, ['--name', 'Ops automation', ...args], { ...baseEnv, DATABASE_PATH: app.databasePath });

async function tokenFor(client: { client_id: string; client_secret: string }, body: Record<string, string>) {
  const res = await fetch(`${app.baseUrl}/v1/oauth/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...body }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

async function api(path: string, { method = 'GET', bearer = token } = {}) {
  const res = await fetch(`${app.baseUrl}/admin/api${path}`, {
    method,
    headers: bearer ? { Authorization: `Bearer ${bearer}` } : {},
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> & { next?: string | null },
  };
}

const listTools = (accessToken: string) =>
  fetch(`${app.baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${accessToken}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  }).then((res) => res.status);

beforeAll(async () => {
  app = await startExampleApp();
  admin = await createUser(app.db, { ...ADMIN, admin: true });
  const created = await clientCreate([
    '--grant-types',
    'client_credentials',
    '--user',
    ADMIN.email,
    '--scope',
    'admin',
  ]);
  if (created.code !== 0) throw new Error(`client:create: ${created.stderr}`);
  ops = JSON.parse(created.stdout.trim().split('\n').pop()!);
  const issued = await tokenFor(ops, { resource: `${app.baseUrl}/admin/api` });
  if (issued.status !== 200) throw new Error(`token: ${JSON.stringify(issued.body)}`);
  token = issued.body.access_token!;
}, 60_000);
afterAll(() => app?.stop());

describe('npm run client:create -- --scope admin', () => {
  test('makes a client_credentials client of an administrator with the admin scope alone', () => {
    expect(ops.scope).toBe('admin');
  });

  test.each([
    [
      'for a user who is not an administrator',
      ['--grant-types', 'client_credentials', '--user', 'owner@example.com'],
      /owner@example\.com is not an administrator/,
    ],
    [
      'without client_credentials',
      ['--grant-types', 'authorization_code', '--redirect-uri', 'https://ops.example/cb'],
      /--scope admin goes with --grant-types client_credentials/,
    ],
  ])('refuses %s, with a one-line message', async (_name, args, message) => {
    const run = await clientCreate([...args, '--scope', 'admin']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('its token', () => {
  test('is for the admin API alone, with the admin scope', async () => {
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ aud: `${app.baseUrl}/admin/api`, scope: 'admin', sub: ops.client_id });
    expect(await listTools(token)).toBe(401);
    // Without the resource, the tool server's: this client may ask for none of its scopes.
    const plain = await tokenFor(ops, {});
    expect(plain.status).toBe(400);
    expect(plain.body.error).toBe('invalid_scope');
  });

  test('the API’s metadata names its scope; the server’s does not', async () => {
    const own = await fetch(`${app.baseUrl}/.well-known/oauth-protected-resource/admin/api`).then((res) =>
      res.json(),
    );
    expect(own).toMatchObject({ resource: `${app.baseUrl}/admin/api`, scopes_supported: ['admin'] });
    const server = (await fetch(`${app.baseUrl}/.well-known/oauth-authorization-server`).then((res) =>
      res.json(),
    )) as { scopes_supported: string[] };
    expect(server.scopes_supported).not.toContain('admin');
  });
});

describe('the lists', () => {
  test('every client, a page at a time, each with how it came, its last use and its active grants', async () => {
    await app.mintToken(['clients:read']);
    const seen: Record<string, unknown>[] = [];
    let after: string | null | undefined;
    do {
      const page = await api(`/clients?limit=1${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      seen.push(...(page.body.clients as Record<string, unknown>[]));
      after = page.body.next;
    } while (after);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seen.map((client) => client.client_id)).size).toBe(seen.length);
    expect(seen.find((client) => client.client_id === ops.client_id)).toEqual({
      client_id: ops.client_id,
      client_name: 'Ops automation',
      kind: 'operator',
      grant_types: ['client_credentials'],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      // Its token, a grant of its own made when issued, is its last use.
      last_used_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      active_grants: expect.any(Number),
      disabled: false,
    });
    expect(seen.find((client) => client.client_name === 'Test agent')).toMatchObject({
      kind: 'registration',
      active_grants: 1,
    });
  });

  test('every active grant, newest first, with its user’s email', async () => {
    await app.mintToken(['fakture:read']);
    const { status, body } = await api('/grants?limit=200');
    expect(status).toBe(200);
    const grants = body.grants as Record<string, unknown>[];
    const ids = grants.map((grant) => grant.grant_id as string);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(grants.find((grant) => (grant.scopes as string[]).includes('fakture:read'))).toMatchObject({
      client_name: 'Test agent',
      user_id: app.user.id,
      user_email: app.user.email,
      resource: `${app.baseUrl}/mcp`,
      granted_at: expect.stringMatching(/Z$/),
      expires_at: expect.stringMatching(/Z$/),
    });
    // The API's own token, a grant with no user.
    expect(grants.find((grant) => grant.client_id === ops.client_id)).toMatchObject({
      user_id: null,
      user_email: null,
      scopes: ['admin'],
      resource: `${app.baseUrl}/admin/api`,
    });
  });
});

describe('the acts', () => {
  test('revoke ends a grant at once; a second revoke finds nothing', async () => {
    const victim = await app.mintToken(['company:read']);
    expect(await listTools(victim)).toBe(200);
    const grantId = JSON.parse(Buffer.from(victim.split('.')[1]!, 'base64url').toString()).grant_id;
    const revoked = await api(`/grants/${grantId}/revoke`, { method: 'POST' });
    expect(revoked).toMatchObject({ status: 200, body: { grant_id: grantId, revoked: true } });
    expect(await listTools(victim)).toBe(401);
    const again = await api(`/grants/${grantId}/revoke`, { method: 'POST' });
    expect(again).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });

  test('disable ends a client’s grants and refuses it; enable lets it ask again', async () => {
    const held = await app.mintToken(['products:read']);
    const clientId = JSON.parse(Buffer.from(held.split('.')[1]!, 'base64url').toString()).client_id;
    const disabled = await api(`/clients/${encodeURIComponent(clientId)}/disable`, { method: 'POST' });
    expect(disabled).toMatchObject({ status: 200, body: { client_id: clientId, disabled: true } });
    expect(await listTools(held)).toBe(401);
    const listed = await api(`/clients?limit=200`);
    expect(
      (listed.body.clients as { client_id: string; disabled: boolean }[]).find(
        (c) => c.client_id === clientId,
      )?.disabled,
    ).toBe(true);
    const enabled = await api(`/clients/${encodeURIComponent(clientId)}/enable`, { method: 'POST' });
    expect(enabled).toMatchObject({ status: 200, body: { disabled: false } });
    expect(await listTools(held)).toBe(401);
  });

  test('a metadata-document client cannot be disabled; an unknown one is not found', async () => {
    const documentId = 'https://agent.example/client.json';
    await app.store.registerClient(
      clientRecord({ clientId: documentId, clientSecretHash: null, tokenEndpointAuthMethod: 'none' }),
    );
    const refused = await api(`/clients/${encodeURIComponent(documentId)}/disable`, { method: 'POST' });
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    const unknown = await api('/clients/no-such-client/disable', { method: 'POST' });
    expect(unknown).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });

  test('purge-idle removes old public registrations nothing names, and says how many', async () => {
    // A public registration from long ago (issuedAt 0) that nothing names.
    await app.store.registerClient(
      clientRecord({ clientId: 'forgotten-cli', clientSecretHash: null, tokenEndpointAuthMethod: 'none' }),
    );
    const purged = await api('/purge-idle', { method: 'POST' });
    expect(purged).toEqual(expect.objectContaining({ status: 200, body: { removed: 1 } }));
    expect(await app.store.findClient('forgotten-cli')).toBeUndefined();
  });
});

describe('the audit trail', () => {
  test('each act names the automation client that did it', async () => {
    const held = await app.mintToken(['products:read']);
    const clientId = JSON.parse(Buffer.from(held.split('.')[1]!, 'base64url').toString()).client_id as string;
    await api(`/clients/${encodeURIComponent(clientId)}/disable`, { method: 'POST' });
    await api(`/clients/${encodeURIComponent(clientId)}/enable`, { method: 'POST' });
    await app.audit.flush();
    const rows = await app.db.all<{ type: string; client_id: string; detail: string }>(
      `SELECT type, client_id, detail FROM audit_events WHERE client_id = ? AND type IN
         ('client.disabled', 'client.enabled', 'grant.revoked') ORDER BY id`,
      [clientId],
    );
    expect(rows.map((row) => [row.type, JSON.parse(row.detail).actor])).toEqual([
      ['client.disabled', `client:${ops.client_id}`],
      ['grant.revoked', `client:${ops.client_id}`],
      ['client.enabled', `client:${ops.client_id}`],
    ]);
  });
});

describe('refusals, each as JSON', () => {
  test('no token: 401 with a challenge naming the API’s metadata', async () => {
    const res = await api('/clients', { bearer: '' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain(
      `resource_metadata="${app.baseUrl}/.well-known/oauth-protected-resource/admin/api"`,
    );
  });

  test('a token of the tool server, whatever its scopes: 401', async () => {
    const res = await api('/clients', { bearer: await app.mintToken(['clients:read', 'company:read']) });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });

  test('a client whose user is no longer an administrator: 403 access_denied, at once', async () => {
    await app.db.run('UPDATE users SET is_admin = 0 WHERE id = ?', [Number(admin.id)]);
    try {
      const res = await api('/grants');
      expect(res).toMatchObject({ status: 403, body: { error: 'access_denied' } });
      expect((await api('/purge-idle', { method: 'POST' })).status).toBe(403);
    } finally {
      await app.db.run('UPDATE users SET is_admin = 1 WHERE id = ?', [Number(admin.id)]);
    }
    expect((await api('/grants')).status).toBe(200);
  });

  test('a disabled client: 403, even with a token issued before another instance heard of it', async () => {
    // As an instance that had the client in memory would leave things: disabled, its new grant active.
    await app.store.setClientDisabled!(ops.client_id, true);
    try {
      expect(await api('/clients')).toMatchObject({ status: 403, body: { error: 'access_denied' } });
    } finally {
      await app.store.setClientDisabled!(ops.client_id, false);
    }
    expect((await api('/clients')).status).toBe(200);
  });

  test('an unexpected failure: 500 server_error as JSON, logged', async () => {
    const findGrant = app.store.findGrant;
    app.store.findGrant = () => {
      throw new Error('the disk is on fire');
    };
    try {
      const res = await api('/grants/some-grant/revoke', { method: 'POST' });
      expect(res).toMatchObject({ status: 500, body: { error: 'server_error' } });
      expect(JSON.stringify(res.body)).not.toContain('fire');
    } finally {
      app.store.findGrant = findGrant;
    }
  });

  test.each([
    ['/clients?after=%00', 'after'],
    ['/grants/a%00b/revoke', 'grant id'],
    ['/clients/%1F/disable', 'client id'],
    ['/clients/%E0%A4%A/disable', 'well-formed URL'],
    ['/clients?limit=0', 'limit'],
    ['/clients?limit=201', 'limit'],
    ['/clients?limit=ten', 'limit'],
    ['/clients?limit=1&limit=2', 'limit'],
    ['/grants?before=', 'before'],
    ['/clients?sort=name', 'Unknown parameter "sort"'],
  ])('%s: 400 invalid_request', async (path, says) => {
    const res = await api(path, {
      method: path.endsWith('able') || path.endsWith('revoke') ? 'POST' : 'GET',
    });
    expect(res).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(res.body.error_description).toContain(says);
  });

  test('an unknown route, or a bad JSON body: JSON, never a page or a 500', async () => {
    expect(await api('/users')).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await api('/clients', { method: 'DELETE' })).toMatchObject({
      status: 404,
      body: { error: 'not_found' },
    });
    const res = await fetch(`${app.baseUrl}/admin/api/purge-idle`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_request' });
  });
});
