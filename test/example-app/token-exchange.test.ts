// The reference app's token exchange (RFC 8693), as its contract states it: `npm run client:create` registers a
// client for the grant, and openid-client v6 (test/example-app/token-exchange-driver.mjs, its own process: it is
// ESM-only) trades a user's /mcp token for one of DOWNSTREAM_RESOURCES; every refusal the contract names. Then the
// render_document tool end to end: the official MCP client calls it, the tool exchanges the user's token in process
// for the document renderer's, and the renderer (an API of the app) takes only that token.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TOKEN_EXCHANGE_GRANT } from '../../example-app/operator-clients';
import { runCommand } from '../helpers/app-process';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app';

const ROOT = join(__dirname, '../..');
const CLI = join(ROOT, 'dist/example-app/cli/client-create.js');
const DRIVER = join(__dirname, 'token-exchange-driver.mjs');
const TOKEN_EXCHANGE = TOKEN_EXCHANGE_GRANT;
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const DOWNSTREAM = 'https://downstream.example/api';

// The SQLite runs are of the default app: the PostgreSQL and Redis that CI exports are not theirs.
const { DATABASE_URL: _postgres, REDIS_URL: _redis, ...baseEnv } = process.env;

interface Observed {
  issued?: {
    issuedTokenType: string | null;
    tokenType: string;
    expiresIn: number | null;
    scope: string | null;
    hasRefreshToken: boolean;
    claims: Record<string, unknown>;
  };
  mcp?: { status: number; challenge: string | null };
  refusal?: { error: string; description: string | null; status: number | null };
}

let app: RunningExampleApp;
beforeAll(async () => {
  app = await startExampleApp({ DOWNSTREAM_RESOURCES: `${DOWNSTREAM}, https://ledger.example` });
});
afterAll(() => app.stop());

async function clientCreate(grantTypes: string, extra: string[] = []) {
  const result = await runCommand(CLI, ['--name', 'Gateway', '--grant-types', grantTypes, ...extra], {
    ...baseEnv,
    DATABASE_PATH: app.databasePath,
  });
  if (result.code !== 0) throw new Error(`client:create exited with ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as {
    client_id: string;
    client_secret: string;
    token_endpoint_auth_method: string;
    grant_types: string[];
  };
}

async function drive(
  client: { client_id: string; client_secret: string },
  steps: { name: string; parameters: Record<string, string> }[],
): Promise<Record<string, Observed>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      DRIVER,
      JSON.stringify({
        base: app.baseUrl,
        clientId: client.client_id,
        clientSecret: client.client_secret,
        steps,
      }),
    ],
    { timeout: 30_000, env: baseEnv },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, Observed>;
}

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());

test('client:create registers a confidential client for the grant, and the metadata lists it', async () => {
  const created = await clientCreate(TOKEN_EXCHANGE);
  expect(created).toMatchObject({
    client_secret: expect.any(String),
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: [TOKEN_EXCHANGE],
  });
  const metadata = (await (await fetch(`${app.baseUrl}/.well-known/oauth-authorization-server`)).json()) as {
    grant_types_supported: string[];
  };
  expect(metadata.grant_types_supported).toContain(TOKEN_EXCHANGE);
});

test('the contract’s exchange and refusals, through openid-client', async () => {
  const client = await clientCreate(TOKEN_EXCHANGE);
  const machine = await clientCreate('client_credentials', ['--user', app.user.email]);
  const subject = await app.mintToken(['company:read', 'dokument:read', 'fakture:read']);
  const revoked = await app.mintToken(['company:read']);
  await app.oauth.revokeGrant(claimsOf(revoked).grant_id);
  const forged = `${subject.slice(0, subject.lastIndexOf('.'))}.${Buffer.from('forged').toString('base64url')}`;
  const exchange = (parameters: Record<string, string>) => ({
    subject_token: subject,
    subject_token_type: ACCESS_TOKEN,
    resource: DOWNSTREAM,
    ...parameters,
  });
  const results = await drive(client, [
    { name: 'narrower', parameters: exchange({ scope: 'company:read' }) },
    { name: 'byAudience', parameters: { ...exchange({}), resource: '', audience: DOWNSTREAM } },
    { name: 'unlisted', parameters: exchange({ resource: 'https://elsewhere.example/api' }) },
    { name: 'renderer', parameters: exchange({ resource: `${app.baseUrl}/renderer` }) },
    { name: 'ownMcp', parameters: exchange({ resource: `${app.baseUrl}/mcp` }) },
    { name: 'wider', parameters: exchange({ scope: 'company:read company:write' }) },
    { name: 'forged', parameters: exchange({ subject_token: forged }) },
    { name: 'revoked', parameters: exchange({ subject_token: revoked }) },
    { name: 'notAToken', parameters: exchange({ subject_token: 'a-refresh-token-perhaps' }) },
  ]);
  const issued = results.narrower!.issued!;
  expect(issued).toMatchObject({
    issuedTokenType: ACCESS_TOKEN,
    tokenType: 'bearer',
    scope: 'company:read',
    hasRefreshToken: false,
  });
  expect(issued.claims).toMatchObject({
    aud: DOWNSTREAM,
    sub: app.user.id,
    scope: 'company:read',
    act: { sub: client.client_id },
  });
  expect(issued.claims.exp as number).toBeLessThanOrEqual(claimsOf(subject).exp);
  // Never accepted at {base}/mcp.
  expect(results.narrower!.mcp!.status).toBe(401);
  expect(results.byAudience!.issued!.claims.aud).toBe(DOWNSTREAM);
  expect(results.byAudience!.issued!.scope).toBe('company:read dokument:read fakture:read');
  expect(results.byAudience!.mcp!.status).toBe(401);
  const refusals = Object.fromEntries(
    Object.entries(results)
      .filter(([, observed]) => observed.refusal)
      .map(([name, observed]) => [name, observed.refusal!.error]),
  );
  expect(refusals).toEqual({
    unlisted: 'invalid_target',
    renderer: 'invalid_target',
    ownMcp: 'invalid_target',
    wider: 'invalid_scope',
    forged: 'invalid_grant',
    revoked: 'invalid_grant',
    notAToken: 'invalid_grant',
  });
  // A client not registered for the grant.
  const refused = await drive({ client_id: machine.client_id, client_secret: machine.client_secret }, [
    { name: 'machine', parameters: exchange({}) },
  ]);
  expect(refused.machine!.refusal!.error).toBe('unauthorized_client');
});

test('render_document: the tool exchanges the user’s token for the renderer’s, and the renderer takes only that', async () => {
  const writer = await app.connect(['dokument:write', 'dokument:read', 'fakture:read']);
  const templates = (await writer.callTool({
    name: 'list_document_templates',
    arguments: {},
  })) as CallToolResult;
  const template = (templates.structuredContent as { items: { id: number }[] }).items[0]!;
  const invoices = (await writer.callTool({ name: 'list_invoices', arguments: {} })) as CallToolResult;
  const invoice = (invoices.structuredContent as { items: { id: number }[] }).items[0]!;
  const generated = (await writer.callTool({
    name: 'generate_document',
    arguments: { template_id: template.id, invoice_id: invoice.id },
  })) as CallToolResult;
  const document = generated.structuredContent as { id: number; title: string };

  const reader = await app.connect(['dokument:read']);
  const rendered = (await reader.callTool({
    name: 'render_document',
    arguments: { document_id: document.id },
  })) as CallToolResult;
  expect(rendered.isError).toBeFalsy();
  expect(rendered.structuredContent).toMatchObject({
    id: document.id,
    title: document.title,
    format: 'text/html',
    html: expect.stringContaining('<article><h1>'),
    // The renderer saw the user, and the tool server acting for them.
    renderedFor: { userId: app.user.id, actor: { sub: `${app.baseUrl}/mcp` } },
  });
  const exchanged = await app.db.all<{ type: string; detail: string }>(
    "SELECT type FROM audit_events WHERE type = 'token.exchanged'",
  );
  expect(exchanged.length).toBeGreaterThan(0);
  const missing = (await reader.callTool({
    name: 'render_document',
    arguments: { document_id: 999_999 },
  })) as CallToolResult;
  expect(missing.isError).toBe(true);

  // The renderer refuses the user's own /mcp token: its audience is not the renderer.
  const ownToken = await app.mintToken(['dokument:read']);
  const direct = await fetch(`${app.baseUrl}/renderer/v1/documents/${document.id}`, {
    headers: { authorization: `Bearer ${ownToken}` },
  });
  expect(direct.status).toBe(401);
});
