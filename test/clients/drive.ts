// The client matrix's driver: one reference app (with a clock the test moves), one document server and one Chromium
// for a test file, and each real MCP client (a ClientProfile) driven through the real endpoints the way it does it:
// discovery from the 401 (drive-discovery.ts), identification (its metadata document or its registration body,
// drive-identify.ts), the authorization request with its redirect URI, scope and resource habits (drive-requests.ts),
// consent (drive-consent.ts), the token exchange with its auth method, tool calls through /mcp with the MCP SDK
// client (drive-mcp.ts), and refreshes (drive-refresh.ts). Every step throws an error that names the client and the
// step.
import { createUser, type AppUser } from '../../example-app/users';
import { browserAvailable, launchChromium } from '../helpers/browser';
import { createMovableClock } from '../helpers/clock';
import { resolveToLoopback, startDocumentServer } from '../helpers/document-server';
import { APP_USER, startExampleApp } from '../helpers/example-app';
import { testCa } from '../helpers/test-ca';
import { consentInChromium, consentOverHttp } from './drive-consent';
import { discover } from './drive-discovery';
import { identify, redirectUriFor } from './drive-identify';
import { callToolWith, companyOf, mcpAccepts, readToolWithin } from './drive-mcp';
import { authorizationRequest, readAuthorizationResponse, resourceAt, tokenRequest } from './drive-requests';
import type { Connection, Matrix } from './drive-types';
import type { ClientProfile } from './profile';

export type { Connection, Matrix } from './drive-types';

/** The app (documents fetched from the loopback document server, trusted through the test CA), and Chromium. */
export async function startMatrix(): Promise<Matrix> {
  const clock = createMovableClock();
  const [app, documents, browser] = await Promise.all([
    startExampleApp(
      { CIMD_ALLOW_LOOPBACK: '1' },
      { clientMetadataDocuments: { ca: testCa().caPem, resolveHost: resolveToLoopback }, now: clock.now },
    ),
    startDocumentServer(),
    browserAvailable ? launchChromium() : Promise.resolve(undefined),
  ]);
  return {
    app,
    documents,
    browser,
    clock,
    mcpUrl: new URL(`${app.baseUrl}/mcp`),
    async stop() {
      await browser?.close();
      await app.stop();
      await documents.stop();
    },
  };
}

/** Runs `run`; a failure is rethrown with `label` in front ("claude-code: refresh 2: 400 invalid_grant ..."). */
export async function step<T>(label: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${label}: ${message}`);
  }
}

/** Each client has a user of its own (with a company of its own): the grants of two clients never mix. */
export async function userFor(matrix: Matrix, profile: ClientProfile): Promise<AppUser> {
  return createUser(matrix.app.db, {
    email: `${profile.id}@matrix.example.com`,
    password: APP_USER.password,
    name: profile.name,
    company: companyOf(profile),
  });
}

/**
 * The client's first connection: discovery, identification, the authorization request, consent (in Chromium when
 * asked and available), the code exchange, and a tool call with the access token.
 */
export async function connect(
  matrix: Matrix,
  profile: ClientProfile,
  { chromium }: { chromium: boolean },
): Promise<Connection> {
  const at = (name: string) => `${profile.id}: ${name}`;
  const user = await step(at('create its user'), () => userFor(matrix, profile));
  const discovery = await step(at('discovery from the 401'), () => discover(matrix.mcpUrl));
  const redirectUri = redirectUriFor(profile);
  const identity = await step(at(`identification (${profile.identification.kind})`), () =>
    identify(matrix, profile, discovery, redirectUri),
  );
  const authorization = authorizationRequest(profile, discovery, identity, redirectUri);

  const inChromium = chromium && matrix.browser !== undefined;
  const credentials = { email: user.email, password: APP_USER.password };
  const consent = await step(at(`consent ${inChromium ? 'in Chromium' : 'over HTTP'}`), () =>
    inChromium
      ? consentInChromium(matrix.browser!, authorization.url, credentials)
      : consentOverHttp(authorization.url, credentials),
  );
  const code = await step(at('authorization response'), async () =>
    readAuthorizationResponse(consent.location, redirectUri, authorization.state, discovery.server.issuer),
  );
  const tokens = await step(at(`code exchange (${profile.authMethod})`), () =>
    tokenRequest(discovery, profile, identity, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: authorization.codeVerifier,
      ...resourceAt(profile, discovery, 'exchange'),
    }),
  );
  const tool = readToolWithin(tokens.scope);
  if (!tool) throw new Error(at(`no read-only tool within the granted scope "${tokens.scope}"`));

  const connection: Connection = {
    profile,
    user,
    discovery,
    identity,
    redirectUri,
    authorizationUrl: authorization.url,
    consent: { in: inChromium ? 'chromium' : 'http', text: consent.consentText },
    tokens,
    tool,
    refresh: (refreshToken, round) =>
      tokenRequest(discovery, profile, identity, {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        ...(profile.scopeOnRefresh === 'granted' ? { scope: tokens.scope } : {}),
        ...resourceAt(profile, discovery, { refresh: round }),
      }),
    callTool: (accessToken) => callToolWith(matrix.mcpUrl, profile, tool, accessToken),
    accepts: (accessToken) => mcpAccepts(matrix.mcpUrl, accessToken),
  };
  await step(at(`tool call ${tool} after the code exchange`), () => connection.callTool(tokens.accessToken));
  return connection;
}
