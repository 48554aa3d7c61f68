// DPoP (RFC 9449) end to end, as a client written elsewhere uses it: openid-client v6 (test/example-app/dpop-driver.mjs,
// in its own process since it is ESM-only) registers a public client of the reference app, gets a code bound to its
// key with dpop_jkt (§10), redeems it and refreshes with proofs (§5), calls a tool on /mcp with the bound token
// (§7.1), and sees what a thief of a token without the key gets: a refresh token refused without a proof or with
// another key (and not spent by the refusal), an access token refused as Bearer. The app's default settings, which
// turn DPoP on. SQLite; PostgreSQL too when DATABASE_URL is set.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';

const DRIVER = join(__dirname, 'dpop-driver.mjs');

// The SQLite runs are of the default app: the PostgreSQL and Redis that CI exports are not theirs. startExampleApp
// reads only the env it is given; the driver's process is started without them too, as client-credentials.test.ts
// starts its processes.
const { DATABASE_URL: _postgres, REDIS_URL: _redis, ...baseEnv } = process.env;

/** One token endpoint answer as the driver saw it. */
interface Grant {
  /** As openid-client reports it: lowercased (oauth4webapi's processGenericAccessTokenResponse). */
  tokenType: string;
  /** As the server sent it. */
  rawTokenType: string;
  cnfJkt: string | null;
  scope: string;
  hasRefreshToken: boolean;
}

/** An OAuth error as openid-client or a plain fetch saw it. */
interface Refusal {
  error: string;
  status: number;
  error_description?: string;
}

/** What dpop-driver.mjs prints. */
interface DpopJourney {
  dpopAlgorithms: string[];
  clientId: string;
  authMethod: string;
  hasSecret: boolean;
  jkt: string;
  jktByHand: string;
  codeWithOtherKey: Refusal;
  strayRedeemed: Grant;
  code: Grant;
  refresh: Grant & { rotated: boolean; newAccessToken: boolean };
  refreshWithoutProof: Refusal;
  refreshWithOtherKey: Refusal;
  afterRefusals: Grant & { rotated: boolean };
  tool: { status: number; id: number; isError: boolean; structuredContent: Record<string, unknown> | null };
  asBearer: Refusal & { challenge: string };
}

async function runJourney(baseUrl: string): Promise<DpopJourney> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [DRIVER, baseUrl, APP_USER.email, APP_USER.password],
    { timeout: 30_000, env: baseEnv },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as DpopJourney;
}

/** The observations, asserted the same way on every store. */
function expectDpopJourney(journey: DpopJourney, baseUrl: string): void {
  // RFC 9449 §5.1: the metadata names the proof algorithms; openid-client found them by discovery.
  expect(journey.dpopAlgorithms).toEqual(['ES256', 'RS256', 'PS256']);
  expect(journey).toMatchObject({ authMethod: 'none', hasSecret: false });
  // RFC 7638 §3: the dpop_jkt openid-client sent is the thumbprint of the key, computed independently.
  expect(journey.jkt).toMatch(/^[\w-]{43}$/);
  expect(journey.jktByHand).toBe(journey.jkt);

  const bound: Grant = {
    tokenType: 'dpop',
    rawTokenType: 'DPoP',
    // §6.1: the access token names its key in cnf.jkt.
    cnfJkt: journey.jkt,
    scope: 'fakture:read clients:read',
    hasRefreshToken: true,
  };
  // §5: every token answer of the journey is DPoP-bound to the one key.
  expect(journey.code).toEqual(bound);
  expect(journey.refresh).toEqual({ ...bound, rotated: true, newAccessToken: true });
  expect(journey.afterRefusals).toEqual({ ...bound, rotated: true });

  // §10: a code issued for a dpop_jkt is redeemed only with a proof of that key; the refusal did not spend it.
  expect(journey.codeWithOtherKey).toEqual({ error: 'invalid_dpop_proof', status: 400 });
  expect(journey.strayRedeemed).toEqual(bound);

  // §5: a public client's refresh token is bound to its key: refused without a proof, and with another key's.
  expect(journey.refreshWithoutProof).toEqual({
    status: 400,
    error: 'invalid_dpop_proof',
    error_description: expect.any(String),
  });
  expect(journey.refreshWithOtherKey).toEqual({ error: 'invalid_dpop_proof', status: 400 });

  // §7.1: the bound token with a proof (ath, htm, htu) is accepted at /mcp and the tool runs.
  expect(journey.tool).toEqual({
    status: 200,
    id: 1,
    isError: false,
    structuredContent: expect.objectContaining({ id: 3, name: 'Nordlicht GmbH' }),
  });

  // §7.1: the same token as Bearer is refused, and the challenge that leads says to use DPoP.
  expect(journey.asBearer).toEqual({
    status: 401,
    error: 'invalid_token',
    error_description: expect.stringContaining('DPoP'),
    challenge: expect.stringMatching(/^DPoP /),
  });
  expect(journey.asBearer.challenge).toContain(
    `resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/mcp"`,
  );
  expect(journey.asBearer.challenge).toContain('error="invalid_token"');
}

describe('DPoP through openid-client, on SQLite', () => {
  let app: RunningExampleApp;
  beforeAll(async () => {
    app = await startExampleApp();
  }, 60_000);
  afterAll(() => app?.stop());

  test('a public client: code bound with dpop_jkt, bound tokens and refresh, a tool call with proof; none of it usable without the key', async () => {
    expectDpopJourney(await runJourney(app.baseUrl), app.baseUrl);
  });
});

describeWith('DPoP through openid-client, on PostgreSQL', { postgres: true }, () => {
  let database: TestDatabase;
  let app: RunningExampleApp;
  beforeAll(async () => {
    database = await createTestDatabase();
    app = await startExampleApp({ DATABASE_URL: database.url });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await database?.drop();
  });

  test('the same journey, with proofs replay-checked and tokens kept in PostgreSQL', async () => {
    expectDpopJourney(await runJourney(app.baseUrl), app.baseUrl);
  });
});
