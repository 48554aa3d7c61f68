// Drives the reference app's two operator grants with openid-client v6, an OAuth client written elsewhere: discovery
// (RFC 8414), then per step one token request from a confidential client authenticated with client_secret_basic:
// the jwt-bearer grant with an ID-JAG (RFC 7523 §2.1, draft-ietf-oauth-identity-assertion-authz-grant §4.3) through
// genericGrantRequest, or client_credentials (RFC 6749 §4.4) through clientCredentialsGrant; with a DPoP proof of a
// fresh key (RFC 9449 §5) or without. Then get_company on /mcp with the token: as Bearer with a plain fetch, or with
// fetchProtectedResource and a proof (§7.1), and then the bound token as Bearer too (what a thief without the key
// has). It talks only to the app, never to the IdP: the test mints the ID-JAGs.
// One JSON argument: { base, tool: { name, arguments }, steps: [{ name, grant: 'jwt-bearer' | 'client_credentials',
// clientId, clientSecret, assertion?, scope?, dpop }] }. Prints one JSON line: each step's observations by name.
import { createHash } from 'node:crypto';
import * as client from 'openid-client';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const { base, tool, steps } = JSON.parse(process.argv[2]);
const mcpUrl = new URL(`${base}/mcp`);

/** RFC 7638 §3: the SHA-256 of the EC key's required members, in lexicographic order, with no whitespace. */
async function thumbprintByHand(publicKey) {
  const { crv, kty, x, y } = await crypto.subtle.exportKey('jwk', publicKey);
  return createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
}

const claimsOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

/** The body of a Streamable HTTP answer: JSON, or the first event of a stream. */
async function jsonRpcOf(res) {
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text);
  return JSON.parse(/^data: (.*)$/m.exec(text)[1]);
}

const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: tool });
const mcpHeaders = () => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
});

async function toolAnswerOf(res) {
  if (res.status !== 200) return { status: res.status, body: await res.text() };
  const answer = await jsonRpcOf(res);
  return {
    status: res.status,
    isError: answer.error !== undefined || answer.result?.isError === true,
    structuredContent: answer.result?.structuredContent ?? null,
  };
}

/** The token as a plain Bearer token (RFC 6750 §2.1), with no proof. */
const asBearer = (accessToken) =>
  fetch(mcpUrl, {
    method: 'POST',
    headers: { ...mcpHeaders(), authorization: `Bearer ${accessToken}` },
    body: call,
  });

// One configuration per client: discovery, with what the server itself answered at the token endpoint recorded
// (openid-client lowercases token_type before the caller sees it).
const configs = new Map();
async function configFor(clientId, clientSecret) {
  if (configs.has(clientId)) return configs.get(clientId);
  // The app is on http://127.0.0.1: plain http is allowed for this test only.
  const config = await client.discovery(
    new URL(base),
    clientId,
    undefined,
    client.ClientSecretBasic(clientSecret),
    { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
  );
  const raw = [];
  config[client.customFetch] = async (url, options) => {
    const res = await fetch(url, options);
    if (new URL(url).pathname === new URL(config.serverMetadata().token_endpoint).pathname)
      raw.push(await res.clone().json());
    return res;
  };
  const entry = { config, raw };
  configs.set(clientId, entry);
  return entry;
}

async function runStep(step) {
  const { config, raw } = await configFor(step.clientId, step.clientSecret);
  const keyPair = step.dpop ? await client.randomDPoPKeyPair() : undefined;
  const options = keyPair ? { DPoP: client.getDPoPHandle(config, keyPair) } : undefined;
  const parameters = step.scope === undefined ? {} : { scope: step.scope };
  let tokens;
  try {
    tokens =
      step.grant === 'jwt-bearer'
        ? await client.genericGrantRequest(
            config,
            JWT_BEARER,
            { assertion: step.assertion, ...parameters },
            options,
          )
        : await client.clientCredentialsGrant(config, parameters, options);
  } catch (error) {
    // A refusal as openid-client reports it (ResponseBodyError): the OAuth error, its description, the status.
    return {
      refusal: {
        name: error.name,
        error: error.error ?? error.code ?? String(error),
        description: error.error_description ?? null,
        status: error.status ?? null,
      },
    };
  }
  const observed = {
    grant: {
      tokenType: tokens.token_type,
      rawTokenType: raw.at(-1)?.token_type ?? null,
      cnfJkt: claimsOf(tokens.access_token).cnf?.jkt ?? null,
      scope: tokens.scope ?? null,
      expiresIn: tokens.expires_in ?? null,
      hasRefreshToken: tokens.refresh_token !== undefined,
    },
  };
  if (!keyPair) {
    observed.tool = await toolAnswerOf(await asBearer(tokens.access_token));
    return observed;
  }
  // RFC 9449 §7.1: "Authorization: DPoP <token>" with a proof carrying ath, htm POST and htu {base}/mcp.
  observed.jkt = await options.DPoP.calculateThumbprint();
  observed.jktByHand = await thumbprintByHand(keyPair.publicKey);
  observed.tool = await toolAnswerOf(
    await client.fetchProtectedResource(
      config,
      tokens.access_token,
      mcpUrl,
      'POST',
      call,
      new Headers(mcpHeaders()),
      options,
    ),
  );
  const bearer = await asBearer(tokens.access_token);
  observed.asBearer = {
    status: bearer.status,
    challenge: bearer.headers.get('www-authenticate'),
    ...(await bearer.json().catch(() => ({}))),
  };
  return observed;
}

const results = {};
// In order: a replay step presents an ID-JAG an earlier step already spent.
for (const step of steps) results[step.name] = await runStep(step);
console.log(JSON.stringify(results));
