// One bench server per process, chosen by BENCH_MODE; prints "READY <port>" on stderr once it listens on 127.0.0.1
// (stdout is the app's logs, which the load side does not read).
//   oauth        the OAuth router on SQLite, POST /data behind requireBearer (BENCH_DB, BENCH_KEY), and in the same
//                app the baselines: POST /open with no auth, GET /static (a static JSON document)
//   verify-only  POST /data that does nothing but verify the ES256 access token (BENCH_KEY)
//   crypto-only  POST /op that does the least a grant must: one ES256 signature, one SHA-256, one insert
//   app          the reference app (BENCH_APP_DB, BENCH_KEY): its /mcp and OAuth endpoints
//   sdk-router, sdk-reused, bare-ping  the MCP SDK baselines of sdk-baselines.ts
//   oidc-provider  panva's oidc-provider in memory (oidc-provider-baseline.ts), its token endpoint at /token
//                (BENCH_KEY; BENCH_OIDC_CODES codes and BENCH_OIDC_REFRESH refresh tokens seeded at startup)
import { createPublicKey, createPrivateKey, randomBytes } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import express, { type RequestHandler } from 'express';
import jwt from 'jsonwebtoken';
import { createJwtSigner, createOAuthRouter, createSqliteStore } from '../lib';
import { sha256 } from '../lib/crypto/secrets';
import type * as AppModule from '../example-app/app';
import type * as ConfigModule from '../example-app/config';
import type * as OpenModule from '../example-app/db/open';
import type * as ServerModule from '../example-app/mcp/server';
import type * as BaselinesModule from './sdk-baselines';
import type * as OidcProviderModule from './oidc-provider-baseline';
import { ISSUER, RESOURCE } from './fixtures';

const mode = process.env.BENCH_MODE ?? 'plain';
const keyPem = process.env.BENCH_KEY ?? '';
const ok = Buffer.from(JSON.stringify({ ok: true }));
const sendOk: RequestHandler = (_req, res) => {
  res.setHeader('Content-Type', 'application/json');
  res.end(ok);
};

async function build(): Promise<RequestListener> {
  const app = express();
  app.disable('x-powered-by');
  if (mode === 'oauth') {
    const store = createSqliteStore(process.env.BENCH_DB!);
    const oauth = createOAuthRouter(store, createJwtSigner({ keys: [{ privateKey: keyPem }] }), {
      issuer: ISSUER,
      scopes: { 'fakture:read': 'Read your invoices', 'clients:read': 'Read your clients' },
      rateLimits: false,
      authenticateUser: () => null,
      ...(process.env.BENCH_STEP_UP === '0' ? { stepUpWindowMs: 0 } : {}),
    });
    app.use(oauth);
    app.post('/data', oauth.requireBearer(), sendOk);
    // The baselines in the same app: the same route with no auth, and a static JSON document.
    app.post('/open', sendOk);
    const document = Buffer.from(process.env.BENCH_STATIC_JSON ?? '{}');
    app.get('/static', (_req, res) => {
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(document);
    });
    return app;
  }
  if (mode === 'verify-only') {
    const publicKey = createPublicKey(keyPem);
    app.post('/data', (req, res) => {
      try {
        jwt.verify((req.headers.authorization ?? '').slice(7), publicKey, {
          algorithms: ['ES256'],
          audience: RESOURCE,
          issuer: ISSUER,
        });
        sendOk(req, res, () => undefined);
      } catch {
        res.status(401).end();
      }
    });
    return app;
  }
  if (mode === 'crypto-only') {
    const privateKey = createPrivateKey(keyPem);
    const db = new Database(join(process.env.BENCH_DIR!, `crypto-only-${process.pid}.db`));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE IF NOT EXISTS ops (hash TEXT PRIMARY KEY, at INTEGER NOT NULL)');
    const insert = db.prepare('INSERT INTO ops (hash, at) VALUES (?, ?)');
    app.post('/op', express.urlencoded({ extended: false }), express.json(), (req, res) => {
      // The signature as the library makes it (jsonwebtoken, ES256), so this stays the floor of a grant.
      const token = jwt.sign(
        { sub: 'bench', aud: RESOURCE, exp: Math.floor(Date.now() / 1000) + 3600 },
        privateKey,
        {
          algorithm: 'ES256',
        },
      );
      insert.run(sha256(randomBytes(32).toString('base64url')), Date.now());
      res.json({ access_token: token, token_type: 'Bearer', expires_in: 3600 });
    });
    return app;
  }
  if (mode === 'app') {
    // Loaded only here, so that the other servers' memory is the library's alone.
    const { createExampleApp } = require('../example-app/app') as typeof AppModule;
    const { readConfig } = require('../example-app/config') as typeof ConfigModule;
    const example = await createExampleApp(
      readConfig({
        BASE_URL: ISSUER,
        DATABASE_PATH: process.env.BENCH_APP_DB!,
        RATE_LIMITS: 'off',
        SIGNING_KEY: keyPem,
      }),
    );
    // As server.ts runs it: the OAuth fast path in front of the Express app.
    return example.listener;
  }
  if (mode === 'sdk-router' || mode === 'sdk-reused') {
    const { openAppDatabase } = require('../example-app/db/open') as typeof OpenModule;
    const { buildInputSchemas, createBusinessMcpServer } =
      require('../example-app/mcp/server') as typeof ServerModule;
    const baselines = require('./sdk-baselines') as typeof BaselinesModule;
    const { db } = await openAppDatabase({ databasePath: process.env.BENCH_APP_DB! });
    // The README's pattern builds each tool's input schema with its server (`inputSchema` written inline in
    // registerTool), so its baseline does too. Reused servers share the app's, built once for the process, and so
    // does the informative row of BENCH_SDK_SHARED_SCHEMAS=1: the README pattern with that one optimisation.
    const sharedSchemas = mode === 'sdk-reused' || process.env.BENCH_SDK_SHARED_SCHEMAS === '1';
    const createServer = () =>
      createBusinessMcpServer(db, 'business-service', sharedSchemas ? undefined : buildInputSchemas());
    if (mode === 'sdk-reused')
      return baselines.sdkReusedApp(createServer, JSON.parse(process.env.BENCH_APP_AUTH!));
    return baselines.sdkRouterApp(
      keyPem,
      {
        codes: Number(process.env.BENCH_SDK_CODES ?? 0),
        refreshTokens: Number(process.env.BENCH_SDK_REFRESH ?? 0),
      },
      createServer,
    );
  }
  if (mode === 'bare-ping') return (require('./sdk-baselines') as typeof BaselinesModule).barePingApp();
  if (mode === 'oidc-provider') {
    const { oidcProviderApp } = require('./oidc-provider-baseline') as typeof OidcProviderModule;
    return oidcProviderApp(keyPem, {
      codes: Number(process.env.BENCH_OIDC_CODES ?? 0),
      refreshTokens: Number(process.env.BENCH_OIDC_REFRESH ?? 0),
    });
  }
  throw new Error(`unknown BENCH_MODE ${mode}`);
}

build().then((listener) => {
  const server = createServer(listener).listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stderr.write(`READY ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  server.keepAliveTimeout = 60_000;
});

// A clean exit on a signal, so that `node --cpu-prof` can write its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
