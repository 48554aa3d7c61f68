// An app that already has its own sign-in: the consent page asks it who is signed in (getSessionUser) and sends a
// signed-out browser to its own login page (signInUrl), which brings the browser back when done.
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createJwtSigner, createOAuthRouter, createSqliteStore } from 'express-mcp-oauth';
import { createMcpEndpoint } from 'express-mcp-oauth/mcp';

const port = Number(process.env.PORT ?? 3000);
const issuer = process.env.ISSUER ?? `http://localhost:${port}`;

// The app's own users and sessions (yours live in your database and session store).
const salt = 'example-salt';
const user = { id: '1', name: 'Demo', email: process.env.DEMO_EMAIL ?? 'demo@example.com' };
const passwordHash = scryptSync(process.env.DEMO_PASSWORD ?? 'demo password', salt, 32);
const sessions = new Map(); // session id -> user
const sessionOf = (req) => /(?:^|;\s*)sid=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1];
// Only an address on this site may be returned to, or the login page would be an open redirect.
const safeReturn = (value) => (typeof value === 'string' && value.startsWith(`${issuer}/`) ? value : '/');

const app = express();
app.get('/login', (req, res) => {
  const returnTo = safeReturn(req.query.return_to);
  res.type('html').send(`<form method="post" action="/login?return_to=${encodeURIComponent(returnTo)}">
    <label>Email <input name="email" type="email"></label>
    <label>Password <input name="password" type="password"></label>
    <button>Sign in</button></form>`);
});
app.post('/login', express.urlencoded({ extended: false }), (req, res) => {
  const ok =
    req.body.email === user.email &&
    timingSafeEqual(scryptSync(String(req.body.password ?? ''), salt, 32), passwordHash);
  if (!ok) return res.status(401).type('text').send('Wrong email or password.');
  const sid = randomBytes(24).toString('base64url');
  sessions.set(sid, user);
  res.setHeader('Set-Cookie', `sid=${sid}; Path=/; HttpOnly; SameSite=Lax`);
  res.redirect(303, safeReturn(req.query.return_to));
});

const oauth = createOAuthRouter(
  createSqliteStore(process.env.DATABASE_PATH ?? 'oauth.db'),
  createJwtSigner(),
  {
    issuer,
    scopes: { 'notes:read': 'Read your notes' },
    // No password form of its own: the app's session says who is signed in ...
    getSessionUser: (req) => sessions.get(sessionOf(req)) ?? null,
    // ... and a signed-out browser goes to the app's login page, which sends it back to returnTo (on this site).
    signInUrl: (returnTo) => `/login?return_to=${encodeURIComponent(returnTo)}`,
  },
);
app.use(oauth);

function createServer() {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool('list_notes', { description: 'Lists your notes.' }, async (extra) => ({
    content: [{ type: 'text', text: `Notes of ${extra.authInfo.userId}: none yet.` }],
  }));
  return server;
}
app.all(
  '/mcp',
  oauth.requireBearer(),
  createMcpEndpoint({ createServer, toolScopes: { list_notes: ['notes:read'] } }),
);
app.listen(port, process.env.HOST ?? 'localhost', () => console.log(`MCP server at ${issuer}/mcp`));
