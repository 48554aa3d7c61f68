// A host app written as an ES module: mounts the installed package on whatever Express the app has, then prints its URL.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import express from 'express';
import { createJwtSigner, createOAuthRouter, createSqliteStore } from 'express-mcp-oauth';
import { fastPath } from 'express-mcp-oauth/experimental';
import { createMcpEndpoint } from 'express-mcp-oauth/mcp';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpServer as McpServerV2, createMcpHandler } from '@modelcontextprotocol/server';

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'consumer-esm-'));
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
  const version = createRequire(import.meta.url)('express/package.json').version;
  console.log(JSON.stringify({ url: issuer, express: version }));
});
