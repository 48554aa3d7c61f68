// A scriptable OpenID provider on loopback for the upstream attack tests: discovery, keys, an ID token signed with its
// own RSA key, user info and revocation, every answer replaceable per test (a token response, a delay, the metadata).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { generateKeyPairSync, sign, randomBytes } from 'node:crypto';

const b64 = (v: Buffer | string) => Buffer.from(v).toString('base64url');

export interface FakeOp {
  issuer: string;
  url: string;
  authRequests: URLSearchParams[];
  tokenRequests: URLSearchParams[];
  revocations: URLSearchParams[];
  /** Override per test. */
  script: {
    idClaims?: (nonce: string | undefined) => Record<string, unknown>;
    userinfo?: () => Record<string, unknown>;
    token?: (req: URLSearchParams, res: ServerResponse, defaults: Record<string, unknown>) => boolean;
    delayMs?: number;
    metadata?: Record<string, unknown>;
  };
  /** A code the token endpoint accepts, carrying the nonce of the last authorization request. */
  mintCode(nonce?: string | null): string;
  idToken(claims: Record<string, unknown>): string;
  close(): Promise<void>;
}

export async function startFakeOp(
  opts: { clientId: string; issuerOverride?: string } = { clientId: 'c' },
): Promise<FakeOp> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...(publicKey.export({ format: 'jwk' }) as object), kid: 'k1', use: 'sig', alg: 'RS256' };
  const codes = new Map<string, string | undefined>();
  let base = '';
  const op: FakeOp = {
    issuer: '',
    url: '',
    authRequests: [],
    tokenRequests: [],
    revocations: [],
    script: {},
    mintCode(nonce) {
      const code = randomBytes(8).toString('hex');
      codes.set(code, nonce ?? undefined);
      return code;
    },
    idToken(claims) {
      const header = b64(JSON.stringify({ alg: 'RS256', kid: 'k1', typ: 'JWT' }));
      const payload = b64(JSON.stringify(claims));
      const sig = sign('sha256', Buffer.from(`${header}.${payload}`), privateKey);
      return `${header}.${payload}.${b64(sig)}`;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const body = (req: IncomingMessage) =>
    new Promise<URLSearchParams>((resolve) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => resolve(new URLSearchParams(data)));
    });
  const json = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(value));
  };
  const server = createServer(async (req, res) => {
    const u = new URL(req.url!, base);
    if (op.script.delayMs) await new Promise((r) => setTimeout(r, op.script.delayMs));
    if (u.pathname === '/.well-known/openid-configuration')
      return json(res, 200, {
        issuer: op.issuer,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        userinfo_endpoint: `${base}/userinfo`,
        jwks_uri: `${base}/jwks`,
        revocation_endpoint: `${base}/revoke`,
        response_types_supported: ['code'],
        id_token_signing_alg_values_supported: ['RS256'],
        subject_types_supported: ['public'],
        ...op.script.metadata,
      });
    if (u.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
    if (u.pathname === '/authorize') {
      op.authRequests.push(u.searchParams);
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      return res.end('authorize page');
    }
    if (u.pathname === '/token') {
      const params = await body(req);
      op.tokenRequests.push(params);
      const nonce = codes.get(params.get('code') ?? '');
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        iss: op.issuer,
        aud: opts.clientId,
        iat: now,
        exp: now + 600,
        sub: 'alice',
        ...(nonce ? { nonce } : {}),
        ...op.script.idClaims?.(nonce),
      };
      const defaults: Record<string, unknown> = {
        access_token: 'at-' + randomBytes(6).toString('hex'),
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: 'rt-' + randomBytes(6).toString('hex'),
        id_token: op.idToken(claims),
      };
      if (op.script.token?.(params, res, defaults)) return;
      return json(res, 200, defaults);
    }
    if (u.pathname === '/userinfo') return json(res, 200, op.script.userinfo?.() ?? { sub: 'alice' });
    if (u.pathname === '/revoke') {
      op.revocations.push(await body(req));
      res.writeHead(200);
      return res.end();
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  base = `http://127.0.0.1:${port}`;
  op.url = base;
  op.issuer = opts.issuerOverride ?? base;
  return op;
}
