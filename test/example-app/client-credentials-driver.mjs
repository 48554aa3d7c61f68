// Drives the client_credentials grant with openid-client v6, an OAuth client written elsewhere: discovery (RFC 8414),
// then one clientCredentialsGrant per request asked for, authenticated with client_secret_basic (a secret) or
// private_key_jwt (a private JWK). Reads one JSON argument; prints one JSON line: each request's token or error.
import * as client from 'openid-client';

const { base, clientId, clientSecret, privateJwk, requests } = JSON.parse(process.argv[2]);

async function authentication() {
  if (clientSecret !== undefined) return client.ClientSecretBasic(clientSecret);
  const key = await crypto.subtle.importKey(
    'jwk',
    privateJwk,
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['sign'],
  );
  return client.PrivateKeyJwt({ key, kid: privateJwk.kid });
}

const config = await client.discovery(new URL(base), clientId, undefined, await authentication(), {
  algorithm: 'oauth2',
  execute: [client.allowInsecureRequests],
});

const results = [];
for (const parameters of requests) {
  try {
    const tokens = await client.clientCredentialsGrant(config, parameters);
    results.push({
      accessToken: tokens.access_token,
      tokenType: tokens.token_type,
      scope: tokens.scope,
      refreshToken: tokens.refresh_token ?? null,
    });
  } catch (error) {
    results.push({ error: error.error ?? error.code ?? String(error), status: error.status });
  }
}
console.log(JSON.stringify(results));
