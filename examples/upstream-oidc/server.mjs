// An MCP server with no user table: people sign in with an OpenID provider they already have (Google, Entra, Okta,
// Keycloak, Auth0...), and its one tool calls the provider's API (user info) with the signed-in person's own token.
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createJwtSigner, createOAuthRouter, createSqliteStore } from 'express-mcp-oauth';
import { createMcpEndpoint } from 'express-mcp-oauth/mcp';
import { createPostgresStore } from 'express-mcp-oauth/postgres';

const port = Number(process.env.PORT ?? 3000);
const issuer = process.env.ISSUER ?? `http://localhost:${port}`;
const { UPSTREAM_OIDC_ISSUER, UPSTREAM_CLIENT_ID, UPSTREAM_CLIENT_SECRET, DATABASE_URL } = process.env;
if (!UPSTREAM_OIDC_ISSUER || !UPSTREAM_CLIENT_ID) {
  console.error(
    'Set UPSTREAM_OIDC_ISSUER and UPSTREAM_CLIENT_ID (and UPSTREAM_CLIENT_SECRET): your OpenID provider.',
  );
  process.exit(1);
}
const providerName = process.env.UPSTREAM_NAME ?? new URL(UPSTREAM_OIDC_ISSUER).host;

// SQLite by default, PostgreSQL with DATABASE_URL: the users' upstream tokens are kept (sealed) with their grants.
const store = DATABASE_URL
  ? createPostgresStore(DATABASE_URL)
  : createSqliteStore(process.env.DATABASE_PATH ?? 'oauth.db');
if (DATABASE_URL) await store.ready; // tables created before serving

const oauth = createOAuthRouter(store, createJwtSigner(), {
  issuer,
  scopes: { 'profile:read': `Read your ${providerName} profile` },
  // Seals the upstream tokens at rest: keep it (32+ bytes) across restarts, or the kept tokens cannot be opened.
  secret: process.env.SECRET,
  lifetimes: process.env.ACCESS_TOKEN_TTL ? { accessToken: Number(process.env.ACCESS_TOKEN_TTL) } : {},
  upstream: {
    providers: [
      {
        id: 'oidc',
        name: providerName,
        issuer: UPSTREAM_OIDC_ISSUER,
        clientId: UPSTREAM_CLIENT_ID,
        clientSecret: UPSTREAM_CLIENT_SECRET,
        // Keep the person's upstream tokens for the tool. A refresh token is asked for as each provider wants it:
        // Google `authorizationParams: { access_type: 'offline', prompt: 'consent' }`, most others the scope
        // `offline_access`.
        keepTokens: true,
      },
    ],
    // No user table: the person is the provider's subject. (An app with users would look them up by verified email.)
    findUser: (identity) => ({ id: `oidc:${identity.sub}`, name: identity.name, email: identity.email }),
  },
});

// The provider's user-info endpoint, from its metadata.
const metadata = await (
  await fetch(new URL('.well-known/openid-configuration', `${UPSTREAM_OIDC_ISSUER}/`))
).json();

function createServer() {
  const server = new McpServer({ name: 'upstream-profile', version: '1.0.0' });
  server.registerTool(
    'upstream_profile',
    { description: `Your profile at ${providerName}, as its user-info endpoint returns it.` },
    async (extra) => {
      // The signed-in person's own upstream token, refreshed upstream when it has expired.
      const upstream = await oauth.upstreamToken(extra.authInfo);
      const response = await fetch(metadata.userinfo_endpoint, {
        headers: { Authorization: `Bearer ${upstream.accessToken}` },
      });
      return { content: [{ type: 'text', text: await response.text() }], isError: !response.ok };
    },
  );
  return server;
}

const app = express();
app.use(oauth); // discovery, registration, sign-in through the provider, consent, tokens, revocation
app.all(
  '/mcp',
  oauth.requireBearer(),
  createMcpEndpoint({ createServer, toolScopes: { upstream_profile: ['profile:read'] } }),
);
app.listen(port, process.env.HOST ?? 'localhost', () => {
  console.log(`Register ${issuer}/v1/oauth/upstream/callback as a redirect URI at ${providerName}.`);
  console.log(`MCP server at ${issuer}/mcp`);
});
