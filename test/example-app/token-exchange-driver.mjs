// Drives the reference app's token exchange (RFC 8693) with openid-client v6, an OAuth client written elsewhere:
// discovery (RFC 8414), then per step one genericGrantRequest with the token-exchange grant from a confidential client
// authenticated with client_secret_basic; each token it gets is then sent to {base}/mcp, where it must be refused.
// One JSON argument: { base, clientId, clientSecret, steps: [{ name, parameters }] }. Prints one JSON line: each
// step's observations by name.
import * as client from 'openid-client';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const { base, clientId, clientSecret, steps } = JSON.parse(process.argv[2]);

const claimsOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

// The app is on http://127.0.0.1: plain http is allowed for this test only.
const config = await client.discovery(
  new URL(base),
  clientId,
  undefined,
  client.ClientSecretBasic(clientSecret),
  { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
);

async function runStep({ parameters }) {
  let tokens;
  try {
    tokens = await client.genericGrantRequest(config, TOKEN_EXCHANGE, parameters);
  } catch (error) {
    return {
      refusal: {
        error: error.error ?? error.code ?? String(error),
        description: error.error_description ?? null,
        status: error.status ?? null,
      },
    };
  }
  const mcp = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${tokens.access_token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  return {
    issued: {
      issuedTokenType: tokens.issued_token_type ?? null,
      tokenType: tokens.token_type,
      expiresIn: tokens.expires_in ?? null,
      scope: tokens.scope ?? null,
      hasRefreshToken: tokens.refresh_token !== undefined,
      claims: claimsOf(tokens.access_token),
    },
    mcp: { status: mcp.status, challenge: mcp.headers.get('www-authenticate') },
  };
}

const results = {};
for (const step of steps) results[step.name] = await runStep(step);
console.log(JSON.stringify(results));
