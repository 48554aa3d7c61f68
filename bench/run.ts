// npm run bench: every hot path of the library and the reference app, each beside a baseline measured in the same
// run, as ratios with targets. Exits non-zero when a target is missed. BENCH_ROUNDS (default 20) sets how many
// 1-second target rounds each comparison has, BENCH_SOAK_SECONDS (default 300) the fresh-token memory run's length,
// BENCH_MCP_SOAK_SECONDS (default 1800) the /mcp memory run's. BENCH_ONLY (a regular expression) runs only the rows
// whose names match it ("mcp", "grant", "memory", "1M grants"), for a quick look while working on one path.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createJwtSigner, createSqliteStore, generateSigningKey } from '../lib';
import { openAppDatabase } from '../example-app/db/open';
import { createUser } from '../example-app/users';
import { ISSUER, RESOURCE, seedFixtures, type Fixtures } from './fixtures';
import {
  compare,
  measure,
  residentMb,
  startServer,
  type Load,
  type Measurement,
  type RequestSpec,
  type Server,
} from './load';
import {
  bearer,
  cryptoOnlyRequests,
  cycling,
  listClients,
  mcpMix,
  mcpPing,
  open,
  redeeming,
  refreshing,
  registering,
  withAuth,
} from './requests';
import {
  OIDC_CLIENT_ID,
  OIDC_REDIRECT_URI,
  OIDC_TOKEN_PATH,
  oidcCode,
  oidcRefreshToken,
} from './oidc-provider-baseline';
import {
  SDK_CLIENT_ID,
  SDK_REDIRECT_URI,
  sdkCode,
  sdkRefreshToken,
  signSdkAccessToken,
} from './sdk-baselines';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 300);
const MCP_SOAK_SECONDS = Number(process.env.BENCH_MCP_SOAK_SECONDS ?? 1800);
const ONLY = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY, 'i') : undefined;
const wanted = (name: string) => !ONLY || ONLY.test(name);
/**
 * Codes are single-use, so each server is seeded with enough for its code rows: `perRow` is what one row of 20 rounds
 * takes at a rate above any measured on the bench machines (about 23 s of load per side), scaled to BENCH_ROUNDS. A
 * server that runs out answers errors, which fail the row rather than inflate it.
 */
const codesFor = (rows: number, perRow: number) => Math.ceil((rows * perRow * (ROUNDS + 3)) / 23);
const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-bench-'));
const keyPem = generateSigningKey('ES256').export({ type: 'pkcs8', format: 'pem' }) as string;
const common = { BENCH_KEY: keyPem, BENCH_DIR: dir };

interface Row {
  name: string;
  result: Measurement;
  /** The median over the rounds of target / (mean of the baseline rounds before and after). */
  ratio?: number;
  baseline?: { name: string; result: Measurement };
  target?: { min: number } | { within: number };
}
const rows: Row[] = [];
const memoryLines: string[] = [];
const header = `express-mcp-oauth bench, ${new Date().toISOString().slice(0, 10)}: ${cpus().length} x ${cpus()[0]?.model}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;

async function seedDatabase(file: string, counts: Parameters<typeof seedFixtures>[2]): Promise<Fixtures> {
  const store = createSqliteStore(join(dir, file));
  const fixtures = await seedFixtures(store, createJwtSigner({ keys: [{ privateKey: keyPem }] }), counts);
  store.close();
  return fixtures;
}

async function withServer<T>(
  mode: string,
  env: Record<string, string>,
  work: (url: string) => Promise<T>,
): Promise<T> {
  const server = await startServer(mode, { BENCH_KEY: keyPem, BENCH_DIR: dir, ...env });
  try {
    return await work(server.url);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  console.log(header);
  console.log(
    `Servers on core 0, load on core 1, 32 keep-alive connections; each target round of 1 s between two baseline rounds, ${ROUNDS} rounds, median ratio.\n`,
  );
  const fixtures = await seedDatabase('oauth.db', {
    freshTokens: 20_000,
    refreshTokens: 6_000,
    // The library's two code rows, at up to 12,000 redemptions a second.
    codes: codesFor(2, 280_000),
    fillerGrants: 0,
  });
  const document = await metadataDocument();
  const app = await appFixtures();
  const sdk = { ...sdkFixtures(), token: app.sdkToken };
  const oidc = oidcFixtures();
  const started = await Promise.all([
    startServer('verify-only', common),
    startServer('crypto-only', common),
    startServer('oauth', { ...common, BENCH_DB: join(dir, 'oauth.db'), BENCH_STATIC_JSON: document }),
    startServer('app', { ...common, ...app.env }),
    startServer('sdk-router', { ...common, ...app.env, ...sdk.env }),
    startServer('sdk-reused', { ...common, ...app.env }),
    startServer('bare-ping', common),
    startServer('sdk-router', { ...common, ...app.env, BENCH_SDK_SHARED_SCHEMAS: '1' }),
    startServer('oidc-provider', { ...common, ...oidc.env }),
  ]);
  const [
    verifyOnly,
    cryptoOnly,
    oauth,
    appServer,
    sdkRouter,
    sdkReused,
    barePing,
    sdkSharedSchemas,
    oidcProvider,
  ] = started.map((server) => server.url) as string[];
  try {
    const row = async (
      name: string,
      target: Load,
      baseline: Load & { name: string },
      goal?: Row['target'],
    ) => {
      if (!wanted(name)) return;
      const { target: result, baseline: base, ratio } = await compare(target, baseline, ROUNDS);
      rows.push({ name, result, ratio, baseline: { name: baseline.name, result: base }, target: goal });
    };
    const crypto = { name: 'crypto-only handler', url: cryptoOnly!, requests: cryptoOnlyRequests };
    await row(
      'bearer check, reused token',
      { url: oauth!, requests: bearer(fixtures.reusedToken) },
      { name: 'same app, route without auth', url: oauth!, requests: open(fixtures.reusedToken) },
      { min: 0.9 },
    );
    await row(
      'bearer check, fresh token',
      { url: oauth!, requests: cycling(fixtures.freshTokens) },
      { name: 'verify-only handler', url: verifyOnly!, requests: cycling(fixtures.freshTokens) },
      { min: 0.8 },
    );
    await row('refresh grant (rotation)', { url: oauth!, requests: refreshing(fixtures) }, crypto, {
      min: 0.7,
    });
    await row(
      'refresh grant (rotation)',
      { url: oauth!, requests: refreshing(fixtures) },
      { name: 'MCP SDK mcpAuthRouter, in memory', url: sdkRouter!, requests: refreshing(sdk.fixtures) },
      { min: 1.0 },
    );
    await row('code grant with PKCE', { url: oauth!, requests: redeeming(fixtures) }, crypto, { min: 0.7 });
    await row(
      'code grant with PKCE',
      { url: oauth!, requests: redeeming(fixtures) },
      { name: 'MCP SDK mcpAuthRouter, in memory', url: sdkRouter!, requests: redeeming(sdk.fixtures) },
      { min: 1.0 },
    );
    await row('registration', { url: oauth!, requests: registering }, crypto, { min: 0.8 });
    await row(
      'metadata',
      { url: oauth!, requests: [{ method: 'GET', path: '/.well-known/oauth-authorization-server' }] },
      { name: 'static JSON handler, same app', url: oauth!, requests: [{ method: 'GET', path: '/static' }] },
      { min: 0.95 },
    );
    // The reference app's token endpoint as a user runs it: SQLite with group commit, audit events written, logs on.
    const sdkRouterLoad = (requests: RequestSpec[]) => ({
      name: 'MCP SDK mcpAuthRouter, in memory',
      url: sdkRouter!,
      requests,
    });
    await row(
      'refresh grant, reference app',
      { url: appServer!, requests: refreshing(app.grants) },
      sdkRouterLoad(refreshing(sdk.fixtures)),
      { min: 1.3 },
    );
    await row(
      'code grant, reference app',
      { url: appServer!, requests: redeeming(app.grants) },
      sdkRouterLoad(redeeming(sdk.fixtures)),
      { min: 1.3 },
    );
    // panva's oidc-provider in memory (a Map adapter), with the same client, grant and ES256 JWT access tokens.
    const oidcLoad = (requests: RequestSpec[]) => ({
      name: 'oidc-provider, in memory',
      url: oidcProvider!,
      requests,
    });
    await row(
      'refresh grant, reference app',
      { url: appServer!, requests: refreshing(app.grants) },
      oidcLoad(refreshing(oidc.fixtures)),
      { min: 2.5 },
    );
    await row(
      'code grant, reference app',
      { url: appServer!, requests: redeeming(app.grants) },
      oidcLoad(redeeming(oidc.fixtures)),
      { min: 2.5 },
    );
    for (const [what, requests, vsReadme, vsReused] of [
      ['MCP ping via /mcp', mcpPing, 4, 1.3],
      ['list_clients via /mcp', listClients, 2.5, 1.2],
    ] as const) {
      const ours = { url: appServer!, requests: withAuth(requests, app.token) };
      await row(
        what,
        ours,
        {
          name: 'SDK README stateless McpServer + requireBearerAuth',
          url: sdkRouter!,
          requests: withAuth(requests, sdk.token),
        },
        { min: vsReadme },
      );
      await row(
        what,
        ours,
        { name: 'SDK transport, reused servers, no auth', url: sdkReused!, requests },
        { min: vsReused },
      );
      // For information: the README pattern with one optimisation of the app, the tools' input schemas built once
      // for the process instead of with each server (the baseline above builds them as the README does).
      await row(what, ours, {
        name: 'SDK README pattern, input schemas built once',
        url: sdkSharedSchemas!,
        requests: withAuth(requests, sdk.token),
      });
    }
    await row(
      'MCP ping via /mcp',
      { url: appServer!, requests: withAuth(mcpPing, app.token) },
      { name: 'bare Express JSON-RPC ping, no SDK', url: barePing!, requests: mcpPing },
      { min: 0.6 },
    );
  } finally {
    await Promise.all(started.map((server) => server.stop()));
  }
  if (wanted('bearer check, 1M grants')) await scale();
  if (wanted('memory, fresh-token load')) await soak(fixtures);
  if (wanted('memory, mixed /mcp load')) await mcpSoak(app);
  report();
}

/** The SDK router's fixtures, rebuilt from the counts it seeds itself in memory. */
function sdkFixtures() {
  // Its two code rows (the library's and the reference app's), at up to 9,000 a second.
  const counts = { codes: codesFor(2, 210_000), refreshTokens: 6_000 };
  return {
    env: { BENCH_SDK_CODES: String(counts.codes), BENCH_SDK_REFRESH: String(counts.refreshTokens) },
    fixtures: {
      // mcpAuthRouter serves its endpoints at the issuer's root.
      tokenPath: '/token',
      clientId: SDK_CLIENT_ID,
      redirectUri: SDK_REDIRECT_URI,
      codes: Array.from({ length: counts.codes }, (_, i) => sdkCode(i)),
      codeCursor: { next: 0 },
      refreshTokens: Array.from({ length: counts.refreshTokens }, (_, i) => sdkRefreshToken(i)),
    },
  };
}

/** oidc-provider's fixtures: it seeds codes and refresh tokens whose values the load side rebuilds from the counts. */
function oidcFixtures() {
  // Its one code row, at up to 5,000 a second.
  const counts = { codes: codesFor(1, 115_000), refreshTokens: 6_000 };
  return {
    env: { BENCH_OIDC_CODES: String(counts.codes), BENCH_OIDC_REFRESH: String(counts.refreshTokens) },
    fixtures: {
      tokenPath: OIDC_TOKEN_PATH,
      clientId: OIDC_CLIENT_ID,
      redirectUri: OIDC_REDIRECT_URI,
      codes: Array.from({ length: counts.codes }, (_, i) => oidcCode(i)),
      codeCursor: { next: 0 },
      refreshTokens: Array.from({ length: counts.refreshTokens }, (_, i) => oidcRefreshToken(i)),
    },
  };
}

async function metadataDocument(): Promise<string> {
  return withServer('oauth', { BENCH_DB: join(dir, 'meta.db') }, async (url) =>
    (await fetch(`${url}/.well-known/oauth-authorization-server`)).text(),
  );
}

async function appFixtures() {
  const path = join(dir, 'app.db');
  const database = await openAppDatabase({ databasePath: path });
  const user = await createUser(database.db, { email: 'bench@example.com', password: 'bench password 1' });
  const clientId = randomUUID();
  const grantId = randomUUID();
  const scopes = ['company:read', 'fakture:read', 'clients:read'];
  await database.store.registerClient({
    clientId,
    clientSecretHash: null,
    clientName: 'Bench',
    redirectUris: ['http://127.0.0.1/cb'],
    grantTypes: ['authorization_code'],
    responseTypes: ['code'],
    tokenEndpointAuthMethod: 'none',
    scope: scopes.join(' '),
    metadata: {},
    issuedAt: Date.now(),
  });
  await database.store.createGrant({
    grantId,
    clientId,
    userId: user.id,
    scopes,
    resource: RESOURCE,
    createdAt: Date.now(),
    expiresAt: Date.now() + 86_400_000,
    lastUsedAt: null,
    revokedAt: null,
  });
  await database.close();
  // Grants of that user for the app's token endpoint: refresh tokens to rotate and codes to redeem, in its own
  // database, so that its grant rows run as a user runs the app (its store, audit events and logs).
  const oauthStore = createSqliteStore(path);
  const grants = await seedFixtures(
    oauthStore,
    createJwtSigner({ keys: [{ privateKey: keyPem }] }),
    // Its two code rows, at up to 16,000 a second.
    { freshTokens: 0, refreshTokens: 6_000, codes: codesFor(2, 370_000), fillerGrants: 0 },
    user.id,
  );
  oauthStore.close();
  const token = createJwtSigner({ keys: [{ privateKey: keyPem }] }).signAccessToken({
    issuer: ISSUER,
    subject: user.id,
    audience: RESOURCE,
    clientId,
    scope: scopes.join(' '),
    grantId,
    expiresIn: 3600,
  }).token;
  const auth = {
    token,
    clientId,
    userId: user.id,
    scopes,
    grantId,
    expiresAt: Math.floor(Date.now() / 1000) + 3600,
    extra: { userId: user.id, grantId, companyId: user.companyId },
  };
  const sdkToken = signSdkAccessToken(keyPem, {
    sub: user.id,
    scope: scopes.join(' '),
    company_id: user.companyId,
  });
  // A token of the same user and grant without clients:read, for the mixed load's 403s.
  const narrowToken = createJwtSigner({ keys: [{ privateKey: keyPem }] }).signAccessToken({
    issuer: ISSUER,
    subject: user.id,
    audience: RESOURCE,
    clientId,
    scope: 'company:read',
    grantId,
    expiresIn: 3600,
  }).token;
  return {
    token,
    sdkToken,
    narrowToken,
    grants,
    env: { BENCH_APP_DB: path, BENCH_APP_AUTH: JSON.stringify(auth) },
  };
}

/** The bearer check and the refresh grant with 1,000 and with 1,000,000 stored grants, measured in turns. */
async function scale(): Promise<void> {
  const small = await seedDatabase('small.db', {
    freshTokens: 0,
    refreshTokens: 1_000,
    codes: 0,
    fillerGrants: 0,
  });
  const large = await seedDatabase('large.db', {
    freshTokens: 0,
    refreshTokens: 1_000,
    codes: 0,
    fillerGrants: 999_000,
  });
  const servers = await Promise.all([
    startServer('oauth', { ...common, BENCH_DB: join(dir, 'small.db') }),
    startServer('oauth', { ...common, BENCH_DB: join(dir, 'large.db') }),
  ]);
  const [few, many] = servers.map((server) => server.url) as [string, string];
  try {
    const bearerRun = await compare(
      { url: many, requests: bearer(large.reusedToken) },
      { url: few, requests: bearer(small.reusedToken) },
      ROUNDS,
    );
    rows.push({
      name: 'bearer check, 1M grants',
      result: bearerRun.target,
      ratio: bearerRun.ratio,
      baseline: { name: 'same, 1k grants', result: bearerRun.baseline },
      target: { within: 0.1 },
    });
    const refreshRun = await compare(
      { url: many, requests: refreshing(large) },
      { url: few, requests: refreshing(small) },
      ROUNDS,
    );
    rows.push({
      name: 'refresh grant, 1M grants',
      result: refreshRun.target,
      ratio: refreshRun.ratio,
      baseline: { name: 'same, 1k grants', result: refreshRun.baseline },
      target: { within: 0.1 },
    });
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** Sustained load with a fresh token per request; resident memory sampled every 5 s. */
async function soak(fixtures: Fixtures): Promise<void> {
  const server = await startServer('oauth', {
    BENCH_KEY: keyPem,
    BENCH_DIR: dir,
    BENCH_DB: join(dir, 'oauth.db'),
  });
  await memoryRun(
    `memory, ${SOAK_SECONDS} s of fresh-token load`,
    server,
    cycling(fixtures.freshTokens),
    SOAK_SECONDS,
  );
}

/** The reference app's /mcp under a mix of pings, tool lists, tool calls and refusals (1 in 7 a 403, 1 in 7 a 401). */
async function mcpSoak(app: Awaited<ReturnType<typeof appFixtures>>): Promise<void> {
  const server = await startServer('app', { ...common, ...app.env });
  await memoryRun(
    `memory, ${MCP_SOAK_SECONDS} s of mixed /mcp load`,
    server,
    mcpMix(app.token, app.narrowToken),
    MCP_SOAK_SECONDS,
  );
}

/** Resident memory sampled every 5 s under `seconds` of load: peak under 200 MB, last minute within 10 % of the second. */
async function memoryRun(
  name: string,
  server: Server,
  requests: RequestSpec[],
  seconds: number,
): Promise<void> {
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(residentMb(server.child.pid!)), 5000);
  let result: Measurement;
  try {
    result = await measure(server.url, requests, seconds);
  } finally {
    clearInterval(timer);
    await server.stop();
  }
  const minute = Math.max(1, Math.round(60 / 5));
  const average = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
  const early = average(samples.slice(minute, 2 * minute));
  const late = average(samples.slice(-minute));
  const peak = Math.max(...samples);
  const growth = early ? late / early - 1 : 0;
  const passed = peak < 200 && growth < 0.1 && result.failures === 0;
  memoryLines.push(
    `| ${name} | peak ${peak.toFixed(0)} MB, growth ${(growth * 100).toFixed(1)} % | < 200 MB, < 10 % | ${passed ? 'PASS' : 'FAIL'} | ${result.opsPerSecond.toFixed(0)} | | | ${result.p50} | ${result.p99} |`,
  );
  console.log(
    `${name}: peak ${peak.toFixed(0)} MB (target < 200), second minute ${early.toFixed(0)} MB, last minute ${late.toFixed(0)} MB (growth ${(growth * 100).toFixed(1)} %, target < 10 %), ${result.failures} failed requests ${passed ? 'PASS' : 'FAIL'}\n`,
  );
  if (!passed) process.exitCode = 1;
}

function report(): void {
  const lines = [
    '| path | ratio | target | | ops/s | baseline | baseline ops/s | p50 ms | p99 ms |',
    '| --- | ---: | --- | --- | ---: | --- | ---: | ---: | ---: |',
  ];
  for (const row of rows) {
    const ratio = row.ratio;
    let verdict = '';
    let target = '';
    if (row.target && 'min' in row.target) {
      target = `>= ${row.target.min}`;
      verdict = ratio !== undefined && ratio >= row.target.min ? 'PASS' : 'FAIL';
    } else if (row.target) {
      target = `1 ± ${row.target.within}`;
      verdict = ratio !== undefined && Math.abs(ratio - 1) <= row.target.within ? 'PASS' : 'FAIL';
    }
    if (row.result.errors > 0) verdict = `FAIL (${row.result.errors} errors)`;
    // A baseline that answered errors measured something else: the ratio means nothing.
    if ((row.baseline?.result.errors ?? 0) > 0)
      verdict = `FAIL (${row.baseline!.result.errors} baseline errors)`;
    if (verdict.startsWith('FAIL')) process.exitCode = 1;
    lines.push(
      `| ${row.name} | ${ratio?.toFixed(2) ?? ''} | ${target} | ${verdict} | ${row.result.opsPerSecond.toFixed(0)} | ${row.baseline?.name ?? ''} | ${row.baseline?.result.opsPerSecond.toFixed(0) ?? ''} | ${row.result.p50} | ${row.result.p99} |`,
    );
  }
  lines.push(...memoryLines);
  console.log(lines.join('\n'));
  mkdirSync('.bench-results', { recursive: true });
  writeFileSync(join('.bench-results', 'latest.md'), `${header}\n\n${lines.join('\n')}\n`);
  console.log(process.exitCode ? '\nA target was missed.' : '\nEvery target met.');
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    rmSync(dir, { recursive: true, force: true });
  });
