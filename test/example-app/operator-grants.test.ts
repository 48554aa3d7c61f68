// The reference app's two operator grants, driven by openid-client v6 (test/example-app/operator-grants-driver.mjs, in
// its own process since it is ESM-only), a client written elsewhere that reads only the app's RFC 8414 metadata:
// - an enterprise app's jwt-bearer grant with an ID-JAG (RFC 7523 §2.1; draft-ietf-oauth-identity-assertion-authz-grant;
//   MCP's Enterprise-Managed Authorization), the ID-JAG minted by a real IdP served over https on loopback and named
//   in TRUSTED_IDPS, without DPoP and with it, and the ID-JAG refused when replayed;
// - a machine client's client_credentials grant (RFC 6749 §4.4) with DPoP.
// Each token then calls get_company on /mcp and must answer the company of the user the ID-JAG's email (or the machine
// client's --user) names, a user made for this purpose with a company of their own; a DPoP-bound token must carry its
// key's thumbprint and be worth nothing as a Bearer token (RFC 9449 §6.1, §7.1). The same table of checks runs on
// SQLite and, when DATABASE_URL is set, on PostgreSQL: the ID-JAG's jti record, the grants and the DPoP proofs' replay
// cache live in the store, so each store must keep them.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createOperatorClient, JWT_BEARER_GRANT } from '../../example-app/operator-clients';
import { createUser } from '../../example-app/users';
import { resolveToLoopback } from '../helpers/document-server';
import { idJagFor, startEnterpriseIdp, type EnterpriseIdp } from '../helpers/enterprise-idp';
import { startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';
import { testCa } from '../helpers/test-ca';

const DRIVER = join(__dirname, 'operator-grants-driver.mjs');

// The SQLite runs are of the default app: the PostgreSQL and Redis that CI exports are not theirs. startExampleApp
// reads only the env it is given; the driver's process is started without them too.
const { DATABASE_URL: _postgres, REDIS_URL: _redis, ...baseEnv } = process.env;

/** The user the ID-JAGs and the machine client name: a company of their own, so an answer shows whose it is. */
const DANA = { email: 'dana@example.com', password: 'a long enough password', company: 'Dana Data' };
const GET_COMPANY = { name: 'get_company', arguments: {} };

/** One step of the driver: a token request, then get_company with what it got. */
interface Step {
  name: string;
  grant: 'jwt-bearer' | 'client_credentials';
  clientId: string;
  clientSecret: string;
  assertion?: string;
  scope?: string;
  dpop: boolean;
}

/** One step's observations, as the driver prints them. */
interface Observed {
  grant?: {
    /** As openid-client reports it: lowercased (oauth4webapi's processGenericAccessTokenResponse). */
    tokenType: string;
    /** As the server sent it. */
    rawTokenType: string;
    cnfJkt: string | null;
    scope: string | null;
    expiresIn: number | null;
    hasRefreshToken: boolean;
  };
  /** The thumbprint openid-client computes of the DPoP key, and the same computed by hand (RFC 7638). */
  jkt?: string;
  jktByHand?: string;
  tool?: {
    status: number;
    isError?: boolean;
    structuredContent?: Record<string, unknown> | null;
    body?: string;
  };
  asBearer?: { status: number; challenge: string | null; error?: string; error_description?: string };
  refusal?: { name: string; error: string; description: string | null; status: number | null };
}

async function drive(base: string, steps: Step[]): Promise<Record<string, Observed>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [DRIVER, JSON.stringify({ base, tool: GET_COMPANY, steps })],
    { timeout: 30_000, env: baseEnv },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, Observed>;
}

let idp: EnterpriseIdp;
beforeAll(async () => {
  idp = await startEnterpriseIdp();
}, 30_000);
afterAll(() => idp?.stop());

/** An ID-JAG the IdP issues for Dana, to the app at `base`, for the client `clientId` (draft §3.1's claims). */
const danasIdJag = (base: string, clientId: string, claims: Record<string, unknown> = {}) =>
  idJagFor(idp, { base, clientId, email: DANA.email }, claims);

/** What get_company must answer with any of Dana's tokens: her company, through the tool, without error. */
const danasCompany = {
  status: 200,
  isError: false,
  structuredContent: expect.objectContaining({ name: DANA.company }),
};

/** What a DPoP-bound token presented as Bearer must get (RFC 9449 §7.1): 401 invalid_token, a DPoP challenge. */
const refusedAsBearer = (base: string) => ({
  status: 401,
  error: 'invalid_token',
  error_description: expect.stringContaining('DPoP'),
  challenge: expect.stringMatching(
    new RegExp(
      `^DPoP .*resource_metadata="${base.replace(/\./g, '\\.')}/\\.well-known/oauth-protected-resource/mcp".*error="invalid_token"`,
    ),
  ),
});

/** The checks, the same on every store; `env` is the store's part of the app's environment. */
function operatorGrantsOn(store: { env(): Promise<Record<string, string>>; drop(): Promise<void> }) {
  let app: RunningExampleApp;
  let enterprise: { clientId: string; clientSecret: string };
  let machine: { clientId: string; clientSecret: string };
  beforeAll(async () => {
    // The IdP's metadata and keys are fetched like client documents: from loopback, trusted through the test CA.
    app = await startExampleApp(
      { ...(await store.env()), CIMD_ALLOW_LOOPBACK: '1', TRUSTED_IDPS: idp.issuer },
      { clientMetadataDocuments: { ca: testCa().caPem, resolveHost: resolveToLoopback } },
    );
    await createUser(app.db, DANA);
    // What `npm run client:create` runs, in process: an enterprise app (no user of its own: each ID-JAG names one)...
    const chat = await createOperatorClient(app.db, app.store, {
      name: 'Chat for Work',
      grantTypes: JWT_BEARER_GRANT,
      scope: 'company:read clients:read',
    });
    enterprise = { clientId: chat.client_id, clientSecret: chat.client_secret! };
    // ... and a machine client acting for Dana (kept in its metadata as acts_for_user).
    const nightly = await createOperatorClient(app.db, app.store, {
      name: 'Nightly export',
      grantTypes: 'client_credentials',
      user: DANA.email,
      scope: 'company:read',
    });
    machine = { clientId: nightly.client_id, clientSecret: nightly.client_secret! };
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await store.drop();
  });

  test('jwt-bearer without DPoP: a Bearer token for the ID-JAG’s user and no refresh token; the tool answers her company; the same ID-JAG again is invalid_grant', async () => {
    const assertion = danasIdJag(app.baseUrl, enterprise.clientId);
    const seen = await drive(app.baseUrl, [
      // RFC 6749 §3.3 and the extension §7.2.1: the scope asked for narrows what the ID-JAG grants.
      { name: 'bearer', grant: 'jwt-bearer', ...enterprise, assertion, scope: 'company:read', dpop: false },
      { name: 'replay', grant: 'jwt-bearer', ...enterprise, assertion, dpop: false },
    ]);
    // Draft §4.4.3: no refresh token (the client presents a new ID-JAG instead); no proof, so no cnf.
    expect(seen.bearer).toEqual({
      grant: {
        tokenType: 'bearer',
        rawTokenType: 'Bearer',
        cnfJkt: null,
        scope: 'company:read',
        expiresIn: 3600,
        hasRefreshToken: false,
      },
      tool: danasCompany,
    });
    // The extension §7.4.2 makes replay detection REQUIRED (RFC 7523 §3 item 7 leaves it optional): the jti, once
    // spent, is refused, and openid-client surfaces the server's error as a ResponseBodyError.
    expect(seen.replay).toEqual({
      refusal: {
        name: 'ResponseBodyError',
        error: 'invalid_grant',
        description: expect.stringMatching(/already used/),
        status: 400,
      },
    });
  });

  test('jwt-bearer with DPoP: a DPoP token bound to the key’s thumbprint, a tool call with a proof answers her company, the token is refused as Bearer', async () => {
    const seen = await drive(app.baseUrl, [
      {
        name: 'dpop',
        grant: 'jwt-bearer',
        ...enterprise,
        // No scope parameter: the token gets what the ID-JAG's scope claim grants (the extension §7.6.2).
        assertion: danasIdJag(app.baseUrl, enterprise.clientId, { scope: 'company:read clients:read' }),
        dpop: true,
      },
    ]);
    const { dpop } = seen;
    // RFC 7638 §3: the thumbprint openid-client computes is the one computed by hand from the key.
    expect(dpop!.jkt).toMatch(/^[\w-]{43}$/);
    expect(dpop!.jktByHand).toBe(dpop!.jkt);
    expect(dpop).toEqual({
      // RFC 9449 §5: token_type DPoP; §6.1: the access token names its key in cnf.jkt. Still no refresh token.
      grant: {
        tokenType: 'dpop',
        rawTokenType: 'DPoP',
        cnfJkt: dpop!.jkt,
        scope: 'company:read clients:read',
        expiresIn: 3600,
        hasRefreshToken: false,
      },
      jkt: dpop!.jkt,
      jktByHand: dpop!.jkt,
      // §7.1: "Authorization: DPoP" with a proof (ath, htm, htu) is accepted at /mcp.
      tool: danasCompany,
      asBearer: refusedAsBearer(app.baseUrl),
    });
  });

  test('client_credentials with DPoP: a machine client’s bound token acts on its user’s account, and is refused as Bearer', async () => {
    const seen = await drive(app.baseUrl, [
      { name: 'machine', grant: 'client_credentials', ...machine, scope: 'company:read', dpop: true },
    ]);
    const { machine: observed } = seen;
    expect(observed!.jkt).toMatch(/^[\w-]{43}$/);
    expect(observed).toEqual({
      // RFC 6749 §4.4.3: no refresh token; RFC 9449 §5 and §6.1: bound to the proof's key.
      grant: {
        tokenType: 'dpop',
        rawTokenType: 'DPoP',
        cnfJkt: observed!.jkt,
        scope: 'company:read',
        expiresIn: 3600,
        hasRefreshToken: false,
      },
      jkt: observed!.jkt,
      jktByHand: observed!.jkt,
      // The machine acts on the account of the user it was registered for (acts_for_user), not the app's owner.
      tool: danasCompany,
      asBearer: refusedAsBearer(app.baseUrl),
    });
  });
}

describe('operator grants through openid-client, on SQLite', () => {
  operatorGrantsOn({ env: async () => ({}), drop: async () => undefined });
});

describeWith('operator grants through openid-client, on PostgreSQL', { postgres: true }, () => {
  let database: TestDatabase | undefined;
  operatorGrantsOn({
    async env() {
      database = await createTestDatabase();
      return { DATABASE_URL: database.url };
    },
    drop: async () => database?.drop(),
  });
});
