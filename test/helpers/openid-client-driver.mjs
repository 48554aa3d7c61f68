// Drives the server with openid-client, an OAuth client written elsewhere: discovery (RFC 8414), registration
// (RFC 7591), the code flow with PKCE and iss checking (RFC 9207), refresh, revocation. The user's part (sign in,
// Allow) is played by a scripted browser with a cookie jar. Prints one JSON line of results.
import * as client from 'openid-client';
import { createScriptedBrowser } from './scripted-browser.mjs';

// With a fourth argument `call-tool`: also calls the MCP tool `whoami` at {base}/mcp with the refreshed token.
const [base, email, password, extraStep] = process.argv.slice(2);
const redirectUri = 'http://127.0.0.1:9/callback';

const { browse, form, post } = createScriptedBrowser();

const config = await client.dynamicClientRegistration(
  new URL(base),
  {
    client_name: 'openid-client',
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: 'client_secret_post',
    grant_types: ['authorization_code', 'refresh_token'],
    scope: 'fakture:read clients:read',
  },
  undefined,
  { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
);

const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const authorizationUrl = client.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  scope: 'fakture:read clients:read',
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  resource: `${base}/mcp`,
});

const signIn = form(await (await browse(authorizationUrl)).text());
const signedIn = await post(signIn.action, [...signIn.fields, ['email', email], ['password', password]]);
const consent = form(await (await browse(new URL(signedIn.headers.get('location'), base))).text());
const decided = await post(consent.action, [...consent.fields, ['decision', 'allow']]);
const callbackUrl = new URL(decided.headers.get('location'));

const tokens = await client.authorizationCodeGrant(
  config,
  callbackUrl,
  { pkceCodeVerifier: verifier, expectedState: state },
  { resource: `${base}/mcp` },
);
const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
const toolCall = extraStep === 'call-tool' ? await callTool(refreshed.access_token) : undefined;
await client.tokenRevocation(config, refreshed.refresh_token, { token_type_hint: 'refresh_token' });
let refreshAfterRevocation;
try {
  await client.refreshTokenGrant(config, refreshed.refresh_token);
  refreshAfterRevocation = 'accepted';
} catch (error) {
  refreshAfterRevocation = error.error ?? error.code ?? String(error);
}

console.log(
  JSON.stringify({
    clientId: config.clientMetadata().client_id,
    authMethod: config.clientMetadata().token_endpoint_auth_method,
    issuerInCallback: callbackUrl.searchParams.get('iss'),
    tokenType: tokens.token_type,
    scope: tokens.scope,
    expiresIn: tokens.expires_in,
    rotated: refreshed.refresh_token !== tokens.refresh_token,
    accessToken: refreshed.access_token,
    refreshAfterRevocation,
    toolCall,
  }),
);

/** A tools/call of `whoami` (JSON-RPC over Streamable HTTP, without initialize: the endpoint is stateless). */
async function callTool(accessToken) {
  const answer = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${accessToken}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-06-18',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'whoami', arguments: {} },
    }),
  });
  const text = await answer.text();
  const data = answer.headers.get('content-type')?.startsWith('text/event-stream')
    ? text
        .split('\n')
        .find((line) => line.startsWith('data:'))
        ?.slice(5)
    : text;
  return JSON.parse(data ?? 'null')?.result?.content?.[0]?.text ?? `${answer.status} ${text}`;
}
