// The clients built on the official MCP TypeScript SDK (ClientProfile.builtOn) driven by the SDK's own OAuth code:
// a process of the client (drive-sdk-process.ts) meets the 401 and its SDK discovers, identifies the client and
// builds the authorization URL; consent as the hand-written driver gives it; finishAuth(code); then tool calls
// through transports with the provider, whose SDK refreshes when /mcp answers 401 (drive-sdk-refresh.ts).
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { APP_USER } from '../helpers/example-app';
import { step, userFor } from './drive';
import { consentInChromium, consentOverHttp } from './drive-consent';
import { redirectUriFor, serveDocument } from './drive-identify';
import { readToolWithin } from './drive-mcp';
import { readAuthorizationResponse } from './drive-requests';
import { callToolThrough, heldTokens, lastAnswer, sdkProcess, type SdkProcess } from './drive-sdk-process';
import type { Connected, Json, Matrix } from './drive-types';
import type { ClientProfile } from './profile';

export interface SdkConnection extends Connected {
  driver: 'sdk';
  /** The process that connected. */
  process: SdkProcess;
  /** Another process of the same client, started from the client and tokens `from` has stored. */
  fork(from: SdkProcess): SdkProcess;
  /** A tool call through a new SDK client with `process`'s provider (its SDK refreshes when /mcp answers 401). */
  callTool(process: SdkProcess): Promise<void>;
}

/**
 * The first connection through the SDK: the document served (for a metadata-document client), initialize without a
 * token, the SDK's discovery, identification and authorization URL, consent, finishAuth(code), and a tool call.
 */
export async function connectWithSdk(
  matrix: Matrix,
  profile: ClientProfile,
  { chromium }: { chromium: boolean },
): Promise<SdkConnection> {
  const at = (name: string) => `${profile.id}: ${name}`;
  if (profile.builtOn?.sdk !== 'typescript') throw new Error(at('not built on the MCP TypeScript SDK'));
  // The SDK signs no client assertion itself (that takes an addClientAuthentication the profile does not record).
  if (profile.authMethod === 'private_key_jwt')
    throw new Error(at('private_key_jwt is not driven through the SDK'));
  const user = await step(at('create its user'), () => userFor(matrix, profile));
  const redirectUri = redirectUriFor(profile);
  const documentUrl =
    profile.identification.kind === 'metadata-document' ? serveDocument(matrix, profile).clientId : undefined;
  const process = sdkProcess(matrix, profile, redirectUri, documentUrl);
  const { state } = process;

  const transport = process.transport();
  const authorizationUrl = await step(at('the SDK from the 401 to the authorization URL'), async () => {
    try {
      await new Client({ name: profile.id, version: '1.0.0' }).connect(transport);
      throw new Error('/mcp took the initialize without a token');
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
    }
    const url = state.authorizationUrls.at(-1);
    if (!url) throw new Error(`the SDK asked for no authorization (${lastAnswer(process)})`);
    return url;
  });
  const identity = await step(at(`identification by the SDK (${profile.identification.kind})`), async () => {
    const client = state.client as Json | undefined;
    if (!client?.client_id) throw new Error(`the SDK holds no client_id (${lastAnswer(process)})`);
    if (documentUrl && client.client_id !== documentUrl) {
      throw new Error(`the SDK used client_id ${client.client_id}, not its document's URL ${documentUrl}`);
    }
    if (!documentUrl && client.token_endpoint_auth_method !== profile.authMethod) {
      throw new Error(
        `registered token_endpoint_auth_method ${client.token_endpoint_auth_method}, not ${profile.authMethod}`,
      );
    }
    return {
      clientId: client.client_id as string,
      ...(client.client_secret ? { clientSecret: client.client_secret } : {}),
    };
  });

  const inChromium = chromium && matrix.browser !== undefined;
  const credentials = { email: user.email, password: APP_USER.password };
  const consent = await step(at(`consent ${inChromium ? 'in Chromium' : 'over HTTP'}`), () =>
    inChromium
      ? consentInChromium(matrix.browser!, authorizationUrl, credentials)
      : consentOverHttp(authorizationUrl, credentials),
  );
  const issuer = process.sent.find((request) =>
    request.url.pathname.startsWith('/.well-known/oauth-authorization-server'),
  )?.answer?.issuer as string | undefined;
  const code = await step(at('authorization response'), async () =>
    readAuthorizationResponse(
      consent.location,
      redirectUri,
      authorizationUrl.searchParams.get('state') ?? '',
      issuer ?? '',
    ),
  );
  const sentBefore = process.sent.length;
  const tokens = await step(at(`code exchange by the SDK (${profile.authMethod})`), async () => {
    try {
      await transport.finishAuth(code);
    } catch (error) {
      throw new Error(`${(error as Error).message} (${lastAnswer(process, sentBefore)})`);
    }
    return heldTokens(process);
  });
  const tool = readToolWithin(tokens.scope);
  if (!tool) throw new Error(at(`no read-only tool within the granted scope "${tokens.scope}"`));

  const connection: SdkConnection = {
    driver: 'sdk',
    profile,
    user,
    identity,
    redirectUri,
    authorizationUrl,
    consent: { in: inChromium ? 'chromium' : 'http', text: consent.consentText },
    tokens,
    tool,
    process,
    fork(from) {
      const forked = sdkProcess(matrix, profile, redirectUri, documentUrl);
      forked.state.client = structuredClone(from.state.client);
      forked.state.tokens = structuredClone(from.state.tokens);
      return forked;
    },
    callTool: (holder) => callToolThrough(holder, profile, tool),
  };
  await step(at(`tool call ${tool} through the SDK after the code exchange`), () =>
    connection.callTool(process),
  );
  return connection;
}
