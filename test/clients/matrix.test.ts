// The client matrix: each real MCP client (test/clients/fixtures, one ClientProfile each) driven against the
// reference app through its real endpoints, the way that client does it: discovery from the 401, its metadata
// document or its registration, its redirect URI, scope and resource habits, consent (in Chromium for every other
// client), the code exchange with its auth method, a tool call with the MCP SDK client, then three refreshes shared
// as the client shares its refresh token, each followed by a tool call. A client built on the MCP TypeScript SDK
// (ClientProfile.builtOn) is driven by the SDK's own OAuth code (drive-sdk.ts), refreshes included; the others by
// hand, by their recorded habits. One app, document server and Chromium for the file; each client has its own user.
import { connect, startMatrix, type Connection, type Matrix } from './drive';
import { refreshRounds, sharingInWords } from './drive-refresh';
import { connectWithSdk, type SdkConnection } from './drive-sdk';
import { sdkRefreshRounds } from './drive-sdk-refresh';
import { CLIENTS } from './fixtures';
import type { ClientProfile } from './profile';

let matrix: Matrix;

beforeAll(async () => {
  matrix = await startMatrix();
}, 60_000);
afterAll(() => matrix?.stop());

/** How the client identifies itself, in words. */
function identification(profile: ClientProfile): string {
  return profile.identification.kind === 'metadata-document' ? 'its metadata document' : 'registration';
}

/** The name the client gives itself in its document or registration body, which the consent page shows. */
function clientName(profile: ClientProfile): string | undefined {
  const { identification } = profile;
  const declared =
    identification.kind === 'metadata-document'
      ? identification.document.client_name
      : identification.body.client_name;
  return typeof declared === 'string' ? declared : undefined;
}

const ROWS = CLIENTS.map((profile, index) => ({
  id: profile.id,
  name: profile.name,
  profile,
  // Consent in Chromium for every other client; the scripted HTTP browser for the rest.
  chromium: index % 2 === 0,
}));

describe.each(ROWS)('$name ($id)', ({ profile, chromium }) => {
  let connection: Connection | SdkConnection | undefined;
  const consent = chromium ? 'consent in Chromium' : 'consent over HTTP';
  // A client built on the MCP TypeScript SDK is driven by the SDK's OAuth code; the others by hand, by their habits.
  const bySdk = profile.builtOn?.sdk === 'typescript';
  const driver = bySdk ? 'through the MCP TypeScript SDK: ' : '';

  it(
    `${profile.id}: ${driver}discovery from the 401, ${identification(profile)}, ${profile.redirect.port} redirect, ` +
      `scope ${profile.scopeOnAuthorize}, resource ${profile.resource}, ${consent}, ` +
      `code exchange with ${profile.authMethod}, a tool call`,
    async () => {
      connection = bySdk
        ? await connectWithSdk(matrix, profile, { chromium })
        : await connect(matrix, profile, { chromium });
      const { identity, tokens, authorizationUrl } = connection;

      if (profile.identification.kind === 'metadata-document') {
        // The document's URL is the client_id: no registration.
        expect(identity.clientId).toMatch(/^https:\/\//);
        expect(identity.clientSecret).toBeUndefined();
      }
      const asked = authorizationUrl.searchParams.get('scope');
      // The user allowed everything asked for: the grant is the scope asked, or all the client may have.
      if (asked) expect(tokens.scope.split(' ').sort()).toEqual(asked.split(' ').sort());
      else expect(tokens.scope).not.toBe('');
      const name = clientName(profile);
      if (connection.consent.in === 'chromium' && name) expect(connection.consent.text).toContain(name);
    },
  );

  it(`${profile.id}: ${driver}three refreshes (${sharingInWords(profile)}; scope ${profile.scopeOnRefresh}, resource ${profile.resource}), each after the access token expired and followed by a tool call`, async () => {
    if (!connection) throw new Error(`${profile.id}: not connected (the connection test failed)`);
    const report =
      'driver' in connection
        ? await sdkRefreshRounds(matrix, connection)
        : await refreshRounds(matrix, connection);
    const perRound = profile.refreshSharing === 'single' ? 1 : 2;
    expect(report.refreshes).toBeGreaterThanOrEqual(3 * perRound);
    expect(report.toolCalls).toBe(report.refreshes);
  });
});
