// The quick start's server on the MCP SDK 1.x (@modelcontextprotocol/sdk): its servers are built once and pooled.
import { scryptSync, timingSafeEqual } from 'node:crypto';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createJwtSigner, createOAuthRouter, createSqliteStore } from 'express-mcp-oauth';
import { createMcpEndpoint } from 'express-mcp-oauth/mcp';

const port = Number(process.env.PORT ?? 3000);
const issuer = process.env.ISSUER ?? `http://localhost:${port}`;

// Your users: here one, with a scrypt hash of its password. Use your own user table.
const salt = 'example-salt';
const user = { id: '1', name: 'Demo', email: process.env.DEMO_EMAIL ?? 'demo@example.com' };
const passwordHash = scryptSync(process.env.DEMO_PASSWORD ?? 'demo password', salt, 32);
const checkPassword = (password) => timingSafeEqual(scryptSync(password, salt, 32), passwordHash);

const oauth = createOAuthRouter(
  createSqliteStore(process.env.DATABASE_PATH ?? 'oauth.db'),
  createJwtSigner(),
  {
    issuer,
    scopes: { 'notes:read': 'Read your notes' },
    authenticateUser: (email, password) => (email === user.email && checkPassword(password) ? user : null),
  },
);

function createServer() {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool('list_notes', { description: 'Lists your notes.' }, async (extra) => ({
    content: [{ type: 'text', text: `Notes of user ${extra.authInfo.userId}: none yet.` }],
  }));
  return server;
}

const app = express();
app.use(oauth); // discovery, registration, the consent page, tokens, revocation
app.all(
  '/mcp',
  oauth.requireBearer(),
  createMcpEndpoint({ createServer, toolScopes: { list_notes: ['notes:read'] } }),
);
app.listen(port, process.env.HOST ?? 'localhost', () => console.log(`MCP server at ${issuer}/mcp`));
