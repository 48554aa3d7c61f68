// One instance of several behind a load balancer: grants in PostgreSQL, rate limits counted in Redis, and the same
// signing key and cookie secret on every instance, so that any instance answers any request.
import { scryptSync, timingSafeEqual } from 'node:crypto';
import express from 'express';
import { createClient } from 'redis';
import { RedisStore } from 'rate-limit-redis';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createJwtSigner, createOAuthRouter } from 'express-mcp-oauth';
import { createMcpEndpoint } from 'express-mcp-oauth/mcp';
import { createPostgresStore } from 'express-mcp-oauth/postgres';

const port = Number(process.env.PORT ?? 3000);
const issuer = process.env.ISSUER; // the load balancer's public URL, the same on every instance
const { DATABASE_URL, REDIS_URL, SIGNING_KEY, COOKIE_SECRET } = process.env;

// Your users: here one, with a scrypt hash of its password. Use your own user table.
const user = { id: '1', name: 'Demo', email: process.env.DEMO_EMAIL ?? 'demo@example.com' };
const passwordHash = scryptSync(process.env.DEMO_PASSWORD ?? 'demo password', 'example-salt', 32);
const checkPassword = (password) => timingSafeEqual(scryptSync(password, 'example-salt', 32), passwordHash);

const store = createPostgresStore(DATABASE_URL, { schema: process.env.DATABASE_SCHEMA ?? 'public' });
await store.ready; // tables created (once, under an advisory lock) before serving
const redis = createClient({ url: REDIS_URL });
await redis.connect();
const prefix = process.env.RATE_LIMIT_PREFIX ?? 'rl:';

const oauth = createOAuthRouter(store, createJwtSigner({ keys: [{ privateKey: SIGNING_KEY }] }), {
  issuer,
  scopes: { 'notes:read': 'Read your notes' },
  secret: COOKIE_SECRET, // 32+ bytes: a consent started on one instance is finished on another
  authenticateUser: (email, password) => (email === user.email && checkPassword(password) ? user : null),
  // One count per limit across every instance.
  rateLimits: {
    store: (name) =>
      new RedisStore({ prefix: `${prefix}${name}:`, sendCommand: (...args) => redis.sendCommand(args) }),
  },
});

function createServer() {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool('list_notes', { description: 'Lists your notes.' }, async (extra) => ({
    content: [{ type: 'text', text: `Notes of ${extra.authInfo.userId} from instance ${port}.` }],
  }));
  return server;
}

const app = express();
app.set('trust proxy', 1); // behind one load balancer: clients' addresses come from X-Forwarded-For
app.use(oauth);
app.all(
  '/mcp',
  oauth.requireBearer(),
  createMcpEndpoint({ createServer, toolScopes: { list_notes: ['notes:read'] } }),
);
app.listen(port, process.env.HOST ?? 'localhost', () => console.log(`MCP server at ${issuer}/mcp`));
