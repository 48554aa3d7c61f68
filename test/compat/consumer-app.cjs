// A host app written in CommonJS: mounts the installed package on whatever Express the app has, then prints its URL.
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');
const express = require('express');
const { createOAuthRouter, createSqliteStore, createJwtSigner } = require('express-mcp-oauth');
const { fastPath } = require('express-mcp-oauth/experimental');
const { createMcpEndpoint } = require('express-mcp-oauth/mcp');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { McpServer: McpServerV2, createMcpHandler } = require('@modelcontextprotocol/server');

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'consumer-cjs-'));
  const oauth = createOAuthRouter(createSqliteStore(path.join(dir, 'oauth.db')), createJwtSigner(), {
    issuer,
    scopes: { 'fakture:read': 'Read your invoices', 'clients:read': 'Read your clients' },
    authenticateUser: (email, password) =>
      email === process.env.USER_EMAIL && password === process.env.USER_PASSWORD ? { id: 'u1' } : null,
  });
  const app = express();
  app.use(oauth);
  // The MCP layer of the package (Node steps alone, so that the fast path can serve this route too): one tool,
  // which answers with the caller's user id, for a token with fakture:read. MCP_SDK=2: a server of
  // @modelcontextprotocol/server 2.x behind its createMcpHandler; else one of @modelcontextprotocol/sdk 1.x, pooled.
  const endpoint =
    process.env.MCP_SDK === '2'
      ? {
          handler: createMcpHandler(() => {
            const server = new McpServerV2({ name: 'consumer', version: '2.0.0' });
            server.registerTool('whoami', { description: 'Who is calling' }, (ctx) => ({
              content: [{ type: 'text', text: `user ${ctx.http.authInfo.userId} (2.x)` }],
            }));
            return server;
          }),
        }
      : {
          createServer: () => {
            const server = new McpServer({ name: 'consumer', version: '1.0.0' });
            server.registerTool('whoami', { description: 'Who is calling' }, (extra) => ({
              content: [{ type: 'text', text: `user ${extra.authInfo.userId}` }],
            }));
            return server;
          },
        };
  const mcp = [
    oauth.requireBearer(),
    createMcpEndpoint({ ...endpoint, toolScopes: { whoami: ['fakture:read'] } }),
  ];
  app.post('/mcp', ...mcp);
  // FAST_PATH=1: the API endpoints and POST /mcp through fastPath, counted by a `before` step, the count at
  // GET /fast-count.
  let fast = 0;
  app.get('/fast-count', (_req, res) => res.json({ fast }));
  const count = (_req, _res, next) => {
    fast += 1;
    next();
  };
  server.on(
    'request',
    process.env.FAST_PATH === '1' ? fastPath(oauth, app, { before: [count], routes: { '/mcp': mcp } }) : app,
  );
  console.log(JSON.stringify({ url: issuer, express: require('express/package.json').version }));
});
