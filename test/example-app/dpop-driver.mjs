// Drives DPoP (RFC 9449) with openid-client v6, an OAuth client written elsewhere, as a public client of the reference
// app: discovery (RFC 8414) and registration (RFC 7591) of a client with no secret, the code flow with PKCE and
// dpop_jkt (§10), the code redeemed and the refresh token refreshed with proofs (§5), the bound refresh token refused
// without a proof or with another key, a tool call on /mcp with the bound token (§7.1), and the same token refused as
// Bearer. The user's part (sign in, Allow) is played by a scripted browser with a cookie jar
// (test/helpers/scripted-browser.mjs). Args: base URL, email, password. Prints one JSON line of observations.
import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { createScriptedBrowser } from '../helpers/scripted-browser.mjs';

const [base, email, password] = process.argv.slice(2);
const redirectUri = 'http://127.0.0.1:9/callback';
const scope = 'fakture:read clients:read';
const mcpUrl = `${base}/mcp`;

const { browse, form, post } = createScriptedBrowser();

/**
 * The user's part of one authorization: sign in if the page asks for it (the session cookie spares a second
 * sign-in), Allow on the consent page, and the redirect back to the client.
 */
async function authorize(authorizationUrl) {
  let res = await browse(authorizationUrl);
  for (let step = 0; step < 5; step += 1) {
    if (res.status >= 300 && res.status < 400) {
      const location = new URL(res.headers.get('location'), base);
      if (location.href.startsWith(redirectUri)) return location;
      res = await browse(location);
      continue;
    }
    const html = await res.text();
    const page = form(html);
    res = /name="password"/.test(html)
      ? await post(page.action, [...page.fields, ['email', email], ['password', password]])
      : await post(page.action, [...page.fields, ['decision', 'allow']]);
  }
  throw new Error('the authorization never came back to the redirect URI');
}

/** A code flow with PKCE whose code is bound to `jkt` (RFC 9449 §10); returns the callback URL and what checks it. */
async function codeFor(config, jkt) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const authorizationUrl = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    resource: mcpUrl,
    dpop_jkt: jkt,
  });
  return {
    callbackUrl: await authorize(authorizationUrl),
    checks: { pkceCodeVerifier: verifier, expectedState: state },
  };
}

/** RFC 7638 §3: the SHA-256 of the required members of the JWK, in lexicographic order, with no whitespace. */
async function thumbprintByHand(publicKey) {
  const { crv, kty, x, y } = await crypto.subtle.exportKey('jwk', publicKey);
  return createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
}

const claimsOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

/** A refusal as openid-client reports it: the OAuth error code and the HTTP status. */
async function refusalOf(promise) {
  try {
    await promise;
    return { accepted: true };
  } catch (error) {
    return { error: error.error ?? error.code ?? String(error), status: error.status };
  }
}

/** The body of a Streamable HTTP answer: JSON, or the first event of a stream. */
async function jsonRpcOf(res) {
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text);
  return JSON.parse(/^data: (.*)$/m.exec(text)[1]);
}

// What the server itself answered at the token endpoint, before openid-client lowercased token_type.
const rawTokenResponses = [];
const recordingFetch = async (url, options) => {
  const res = await fetch(url, options);
  if (new URL(url).pathname.endsWith('/token')) rawTokenResponses.push(await res.clone().json());
  return res;
};
const lastRawTokenType = () => rawTokenResponses.at(-1)?.token_type;

const insecure = { algorithm: 'oauth2', execute: [client.allowInsecureRequests] };
// A public client (RFC 9449 §5: its refresh tokens are bound to its DPoP key, since it has no secret to bind them to).
const config = await client.dynamicClientRegistration(
  new URL(base),
  {
    client_name: 'openid-client DPoP',
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    scope,
  },
  undefined,
  insecure,
);
config[client.customFetch] = recordingFetch;

const keyPair = await client.randomDPoPKeyPair();
const DPoP = client.getDPoPHandle(config, keyPair);
const otherKey = client.getDPoPHandle(config, await client.randomDPoPKeyPair());
// The dpop_jkt openid-client computes, and the same thumbprint computed here from the key itself: the server must
// bind to exactly this value.
const jkt = await DPoP.calculateThumbprint();
const jktByHand = await thumbprintByHand(keyPair.publicKey);

// RFC 9449 §10: a code issued for one key's dpop_jkt, redeemed with a proof of another key, is refused and not spent.
const stray = await codeFor(config, jkt);
const codeWithOtherKey = await refusalOf(
  client.authorizationCodeGrant(
    config,
    stray.callbackUrl,
    stray.checks,
    { resource: mcpUrl },
    { DPoP: otherKey },
  ),
);
const strayRedeemed = await client.authorizationCodeGrant(
  config,
  stray.callbackUrl,
  stray.checks,
  { resource: mcpUrl },
  { DPoP },
);
const strayRawTokenType = lastRawTokenType();

const { callbackUrl, checks } = await codeFor(config, jkt);
const tokens = await client.authorizationCodeGrant(
  config,
  callbackUrl,
  checks,
  { resource: mcpUrl },
  { DPoP },
);
const codeRawTokenType = lastRawTokenType();

const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token, undefined, { DPoP });
const refreshRawTokenType = lastRawTokenType();

// §5: the new refresh token, presented without a proof, as a thief of it alone would.
const withoutProof = await fetch(config.serverMetadata().token_endpoint, {
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: refreshed.refresh_token,
    client_id: config.clientMetadata().client_id,
  }),
});
const refreshWithoutProof = { status: withoutProof.status, ...(await withoutProof.json()) };
// ... and with a proof of a key that is not the one it is bound to.
const refreshWithOtherKey = await refusalOf(
  client.refreshTokenGrant(config, refreshed.refresh_token, undefined, { DPoP: otherKey }),
);
// Neither refusal spent the token: its key's owner still refreshes with it.
const afterRefusals = await client.refreshTokenGrant(config, refreshed.refresh_token, undefined, { DPoP });

// §7.1: the tool call, with "Authorization: DPoP <token>" and a proof carrying ath, htm POST and htu {base}/mcp.
const call = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'get_client', arguments: { client_id: 3 } },
};
const mcpHeaders = () =>
  new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
const toolRes = await client.fetchProtectedResource(
  config,
  afterRefusals.access_token,
  new URL(mcpUrl),
  'POST',
  JSON.stringify(call),
  mcpHeaders(),
  { DPoP },
);
const toolAnswer = await jsonRpcOf(toolRes);

// The same bound token as a plain Bearer token: worth nothing without a proof of its key.
const asBearer = await fetch(mcpUrl, {
  method: 'POST',
  headers: {
    Authorization: `Bearer ${afterRefusals.access_token}`,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
  },
  body: JSON.stringify(call),
});

const grantOf = (response, rawTokenType) => ({
  tokenType: response.token_type,
  rawTokenType,
  cnfJkt: claimsOf(response.access_token).cnf?.jkt ?? null,
  scope: response.scope,
  hasRefreshToken: typeof response.refresh_token === 'string',
});

console.log(
  JSON.stringify({
    dpopAlgorithms: config.serverMetadata().dpop_signing_alg_values_supported,
    clientId: config.clientMetadata().client_id,
    authMethod: config.clientMetadata().token_endpoint_auth_method,
    hasSecret: config.clientMetadata().client_secret !== undefined,
    jkt,
    jktByHand,
    codeWithOtherKey,
    strayRedeemed: grantOf(strayRedeemed, strayRawTokenType),
    code: grantOf(tokens, codeRawTokenType),
    refresh: {
      ...grantOf(refreshed, refreshRawTokenType),
      rotated: refreshed.refresh_token !== tokens.refresh_token,
      newAccessToken: refreshed.access_token !== tokens.access_token,
    },
    refreshWithoutProof,
    refreshWithOtherKey,
    afterRefusals: {
      ...grantOf(afterRefusals, lastRawTokenType()),
      rotated: afterRefusals.refresh_token !== refreshed.refresh_token,
    },
    tool: {
      status: toolRes.status,
      id: toolAnswer.id,
      isError: toolAnswer.error !== undefined || toolAnswer.result?.isError === true,
      structuredContent: toolAnswer.result?.structuredContent ?? null,
    },
    asBearer: {
      status: asBearer.status,
      challenge: asBearer.headers.get('www-authenticate'),
      ...(await asBearer.json()),
    },
  }),
);
