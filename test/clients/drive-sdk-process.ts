// One process of a client built on the MCP TypeScript SDK, as the SDK path of the client matrix runs it: an
// in-memory OAuthClientProvider (the profile's redirect URI, its document URL as clientMetadataUrl or its
// registration body as clientMetadata) and a fetch that records every OAuth request the SDK sends with the server's
// answer, so a refresh is checked on the wire and a refusal is reported as the server wrote it.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { memoryProvider, type ProviderState } from '../helpers/mcp-client-provider';
import { callToolOn } from './drive-mcp';
import type { Json, Matrix, Tokens } from './drive-types';
import type { ClientProfile } from './profile';

/** One request the SDK sent (outside /mcp), with the server's answer. */
interface SdkRequest {
  method: string;
  url: URL;
  /** A form body (token requests). */
  form?: URLSearchParams;
  /** A JSON body (registration). */
  json?: Json;
  status: number;
  answer?: Json;
}

/** One process of the client: its provider's memory (client, tokens, authorization URLs) and what its SDK sent. */
export interface SdkProcess {
  state: ProviderState;
  sent: SdkRequest[];
  /** A transport to /mcp with this process's provider and recording fetch. */
  transport(): StreamableHTTPClientTransport;
}

/** A fetch that records each OAuth request and its answer (the /mcp stream is passed through unread). */
function recordingFetch(mcpUrl: URL, sent: SdkRequest[]): FetchLike {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(String(input));
    if (url.origin === mcpUrl.origin && url.pathname === mcpUrl.pathname) return response;
    const request: SdkRequest = { method: init?.method ?? 'GET', url, status: response.status };
    if (init?.body instanceof URLSearchParams) request.form = new URLSearchParams(init.body);
    if (typeof init?.body === 'string') request.json = JSON.parse(init.body) as Json;
    request.answer = (await response
      .clone()
      .json()
      .catch(() => undefined)) as Json | undefined;
    sent.push(request);
    return response;
  };
}

/** The last OAuth answer the SDK read since `from`, in words, for an error message. */
export function lastAnswer(process: SdkProcess, from = 0): string {
  const last = process.sent.slice(from).at(-1);
  if (!last) return 'the SDK sent no OAuth request';
  const grant = last.form?.get('grant_type');
  return `${last.method} ${last.url.pathname}${grant ? ` (${grant})` : ''} answered ${last.status} ${JSON.stringify(last.answer)}`;
}

/** A process with an empty provider: the profile's redirect URI and client metadata, and its document URL if any. */
export function sdkProcess(
  matrix: Matrix,
  profile: ClientProfile,
  redirectUri: string,
  clientMetadataUrl: string | undefined,
): SdkProcess {
  const { identification } = profile;
  const declared = {
    ...(identification.kind === 'metadata-document' ? identification.document : identification.body),
  };
  // The document's client_id is its URL (clientMetadataUrl); a loopback listener's port is chosen at run time.
  delete declared.client_id;
  if (profile.redirect.port === 'ephemeral') declared.redirect_uris = [redirectUri];
  const { provider, state } = memoryProvider(redirectUri, {
    clientMetadata: declared as OAuthClientMetadata,
    ...(clientMetadataUrl ? { clientMetadataUrl } : {}),
    // The SDK sends a state only when the provider gives one; the driver checks it on the way back.
    state: () => randomBytes(16).toString('base64url'),
  });
  const sent: SdkRequest[] = [];
  const fetchFn = recordingFetch(matrix.mcpUrl, sent);
  return {
    state,
    sent,
    transport: () =>
      new StreamableHTTPClientTransport(matrix.mcpUrl, { authProvider: provider, fetch: fetchFn }),
  };
}

/** What the provider holds after a token request, as the matrix reads tokens. */
export function heldTokens(process: SdkProcess): Tokens {
  const { tokens } = process.state;
  if (!tokens?.refresh_token || tokens.expires_in === undefined) {
    throw new Error(`the provider holds no refresh token and expiry: ${JSON.stringify(tokens)}`);
  }
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    scope: tokens.scope ?? '',
    expiresIn: tokens.expires_in,
  };
}

/** One MCP session through the SDK with `process`'s provider; one read-only tool call. */
export async function callToolThrough(process: SdkProcess, profile: ClientProfile, tool: string) {
  const client = new Client({ name: profile.id, version: '1.0.0' });
  await client.connect(process.transport());
  try {
    await callToolOn(client, profile, tool);
  } finally {
    await client.close();
  }
}
