// Attacks on DPoP (RFC 9449) as wired in lib/dpop, lib/handlers/token*.ts and lib/middleware/bearer.ts: a thief holding
// a bound access token, a bound refresh token, a bound code or one proof; a malicious client; and requests meant to
// make the server fail (500), hang, or spend CPU. Each test asserts the safe behaviour and is named after the attack.
import { createHash, generateKeyPairSync, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { createMemoryStore, createOAuthRouter } from '../../lib';
import { createPostgresStore } from '../../lib/postgres';
import { accessTokenHash } from '../../lib/dpop/proof';
import { createDpopNonces, NONCE_PERIOD_MS } from '../../lib/dpop/nonce';
import { jwkThumbprint } from '../../lib/dpop/thumbprint';
import type { OAuthStore } from '../../lib/store/types';
import { BUSINESS_SCOPES } from '../../example-app/scopes';
import { createFakeClock, MINUTE } from '../helpers/clock';
import { claimsOf, createDpopKey, type DpopKey, type ProofParts } from '../helpers/dpop';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  formOf,
  ISSUER,
  mountTestApp,
  registerClient,
  RESOURCE,
  tokenRequest,
  USER,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import { exchange, listenOnLoopback } from '../helpers/raw-http';
import { describeWith } from '../helpers/services';

const TOKEN_URL = `${ISSUER}/v1/oauth/token`;
const OTHER_RESOURCE = `${ISSUER}/other`;
const SECRET = 'dpop-attacks-secret-of-at-least-32-bytes!';

const key = createDpopKey();
const thief = createDpopKey();

let server: TestServer;
beforeEach(() => {
  server = createTestServer({ secret: SECRET, resources: [RESOURCE, OTHER_RESOURCE] });
  server.app.post('/other', server.oauth.requireBearer({ resource: OTHER_RESOURCE }), (_req, res) =>
    res.json({ ok: true }),
  );
});
afterEach(() => server.close());

const now = () => server.clock.now();
const tokenProof = (parts: ProofParts = {}, by: DpopKey = key) =>
  by.proof(now(), { htu: TOKEN_URL, ...parts });
const resourceProof = (accessToken: string, parts: ProofParts = {}, by: DpopKey = key) =>
  by.proof(now(), { htu: RESOURCE, accessToken, ...parts });
const b64u = (value: string | Buffer) => Buffer.from(value).toString('base64url');

const publicClient = (app = server.app) => registerClient(app, { token_endpoint_auth_method: 'none' });

/** A fresh code for `client`, and how to exchange it (with a proof, or without). */
async function authorize(client: RegisteredClient, overrides: Record<string, string> = {}, app = server.app) {
  const { code, pkce } = await authorizeInBrowser(app, client, overrides);
  return {
    code: code!,
    exchange: (proof?: string, body: Record<string, string> = {}) => {
      const req = tokenRequest(app, client, {
        grant_type: 'authorization_code',
        code: code!,
        redirect_uri: client.redirect_uris[0]!,
        code_verifier: pkce.verifier,
        ...body,
      });
      return proof === undefined ? req : req.set('DPoP', proof);
    },
  };
}

const refresh = (client: RegisteredClient, refreshToken: string, proof?: string, app = server.app) => {
  const req = tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: refreshToken });
  return proof === undefined ? req : req.set('DPoP', proof);
};

const callResource = (authorization: string, proof?: string, path = '/mcp', app = server.app) => {
  const req = request(app).post(path).set('Authorization', authorization);
  return proof === undefined ? req : req.set('DPoP', proof);
};

interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
}

/** A public client holding tokens bound to `key`. */
async function boundTokens(overrides: Record<string, string> = {}) {
  const client = await publicClient();
  const res = await (await authorize(client, overrides)).exchange(tokenProof());
  expect(res.status).toBe(200);
  expect(res.body.token_type).toBe('DPoP');
  return { client, tokens: res.body as Tokens };
}

/** A JWT signed with `privateKey` exactly as given: header and claims untouched (jsonwebtoken adds nothing). */
function signRaw(privateKey: KeyObject, alg: jwt.Algorithm, header: Record<string, unknown>, claims: object) {
  return jwt.sign(claims, privateKey, { algorithm: alg, header: { alg, ...header } as jwt.JwtHeader });
}

/** The claims of a good proof for the resource with `accessToken`. */
const resourceClaims = (accessToken: string) => ({
  jti: randomUUID(),
  htm: 'POST',
  htu: RESOURCE,
  iat: Math.floor(now() / 1000),
  ath: accessTokenHash(accessToken),
});

describe('a stolen bound access token at the resource (§7)', () => {
  test('sent as Bearer once the cache knows it (the fast path), in any spelling of the scheme: refused', async () => {
    const { tokens } = await boundTokens();
    const token = tokens.access_token;
    expect((await callResource(`DPoP ${token}`, resourceProof(token))).status).toBe(200);
    for (const authorization of [
      `Bearer ${token}`,
      `bearer ${token}`,
      `BEARER ${token}`,
      `Bearer  ${token}`,
    ]) {
      const res = await callResource(authorization, resourceProof(token));
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
    }
  });

  test('with a proof made by the thief’s own key (right ath, htu, htm): refused', async () => {
    const { tokens } = await boundTokens();
    const res = await callResource(
      `DPoP ${tokens.access_token}`,
      resourceProof(tokens.access_token, {}, thief),
    );
    expect(res.status).toBe(401);
    // The victim's public key in the header, signed by the thief: the signature does not verify.
    const forged = resourceProof(tokens.access_token, { header: { jwk: key.publicJwk } }, thief);
    const res2 = await callResource(`DPoP ${tokens.access_token}`, forged);
    expect(res2.status).toBe(401);
    expect(res2.body.error).toBe('invalid_dpop_proof');
  });

  test('with extra members in the thief’s jwk (kid, alg, use, x5t): the thumbprint is still the thief’s', async () => {
    const { tokens } = await boundTokens();
    const jwk = { ...thief.publicJwk, kid: key.jkt, alg: 'ES256', use: 'sig', x5t: key.jkt, jkt: key.jkt };
    const res = await callResource(
      `DPoP ${tokens.access_token}`,
      resourceProof(tokens.access_token, { header: { jwk } }, thief),
    );
    expect(res.status).toBe(401);
    expect(jwkThumbprint(jwk)).toBe(thief.jkt);
  });

  test('a proof captured from one request, replayed: on the same router, another instance, another method', async () => {
    const { tokens } = await boundTokens();
    const token = tokens.access_token;
    const proof = resourceProof(token);
    expect((await callResource(`DPoP ${token}`, proof)).status).toBe(200);
    expect((await callResource(`DPoP ${token}`, proof)).status).toBe(401);
    // Another instance on the same store and signer.
    const other = express();
    const oauth = createOAuthRouter(server.store, server.signer, {
      issuer: ISSUER,
      scopes: BUSINESS_SCOPES,
      now: server.clock.now,
      rateLimits: false,
      authenticateUser: () => null,
      secret: SECRET,
    });
    other.use(oauth);
    other.post('/mcp', oauth.requireBearer(), (_req, res) => res.json({ ok: true }));
    expect((await callResource(`DPoP ${token}`, proof, '/mcp', other)).status).toBe(401);
    // A fresh proof made for POST /mcp, used on GET /mcp/invoices.
    const fresh = resourceProof(token);
    const res = await request(server.app)
      .get('/mcp/invoices')
      .set('Authorization', `DPoP ${token}`)
      .set('DPoP', fresh);
    expect(res.status).toBe(401);
    // And a proof for the token endpoint (the same jti store key "dpop <jkt>") at the resource.
    expect((await callResource(`DPoP ${token}`, tokenProof({ accessToken: token }))).status).toBe(401);
  });

  test.each<[string, ProofParts, string?]>([
    ['htm in lower case', { htm: 'post' }],
    ['htu with https (another origin)', { htu: RESOURCE.replace('http:', 'https:') }],
    ['htu with another port', { htu: RESOURCE.replace(':4000', ':4001') }],
    ['htu with a trailing slash', { htu: `${RESOURCE}/` }],
    ['htu of a path prefix', { htu: ISSUER }],
    ['htu with a longer path', { htu: `${RESOURCE}/invoices` }],
    ['htu in upper case path', { htu: `${ISSUER}/MCP` }],
    ['htu that is relative', { htu: '/mcp' }],
    ['a proof for /mcp used at /mcp/ (Express routes both)', {}, '/mcp/'],
    ['a proof for /mcp used at /MCP (Express routes both)', {}, '/MCP'],
  ])('htu/htm trick refused: %s', async (_name, parts, path = '/mcp') => {
    const { tokens } = await boundTokens();
    const res = await callResource(
      `DPoP ${tokens.access_token}`,
      resourceProof(tokens.access_token, parts),
      path,
    );
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_dpop_proof');
  });

  test('a Host header lie or an absolute-form request target does not move the origin htu must name', async () => {
    const { tokens } = await boundTokens();
    const token = tokens.access_token;
    const live = await listenOnLoopback(server.app);
    try {
      const send = (target: string, host: string, proof: string) =>
        exchange(
          live.port,
          `POST ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: DPoP ${token}\r\nDPoP: ${proof}\r\n` +
            'Content-Length: 0\r\nConnection: close\r\n\r\n',
        );
      const evil = 'http://evil.example/mcp';
      expect((await send('/mcp', 'evil.example', resourceProof(token, { htu: evil }))).status).toBe(401);
      expect((await send(evil, 'evil.example', resourceProof(token, { htu: evil }))).status).toBe(401);
      // An absolute-form target whose path is /mcp is still this resource's /mcp (htu names the published origin).
      expect((await send(evil, 'evil.example', resourceProof(token))).status).toBe(200);
    } finally {
      live.close();
    }
  });

  test('a proof for /mcp at a path a URL parser would rewrite to /mcp (dot segments, %2e) is refused', async () => {
    // A host app route that takes any path: Express routes "/files/%2e%2e/mcp" as sent, WHATWG URL reads "/mcp".
    server.app.post('/files/*rest', server.oauth.requireBearer(), (_req, res) => res.json({ ok: true }));
    const { tokens } = await boundTokens();
    const token = tokens.access_token;
    const live = await listenOnLoopback(server.app);
    try {
      for (const target of ['/files/%2e%2e/mcp', '/files/%2E%2E/mcp', '/files/../mcp']) {
        const answer = await exchange(
          live.port,
          `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nAuthorization: DPoP ${token}\r\n` +
            `DPoP: ${resourceProof(token)}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
        );
        expect([target, answer.status]).toEqual([target, 401]);
      }
      // An absolute-form target with no path is the root, as a URL parser reads it.
      server.app.post('/', server.oauth.requireBearer(), (_req, res) => res.json({ ok: true }));
      const root = await exchange(
        live.port,
        `POST http://127.0.0.1:4000 HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nAuthorization: DPoP ${token}\r\n` +
          `DPoP: ${resourceProof(token, { htu: `${ISSUER}/` })}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expect(root.status).toBe(200);
      // The same route with a proof for its own path passes: the rule refuses only a rewritten path.
      const own = `${ISSUER}/files/report`;
      const answer = await exchange(
        live.port,
        `POST /files/report HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nAuthorization: DPoP ${token}\r\n` +
          `DPoP: ${resourceProof(token, { htu: own })}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expect(answer.status).toBe(200);
    } finally {
      live.close();
    }
  });

  test.each<[string, (token: string) => string]>([
    ['ath with base64 padding', (t) => `${accessTokenHash(t)}=`],
    ['ath in hex', (t) => createHash('sha256').update(t).digest('hex')],
    ['ath in upper case', (t) => accessTokenHash(t).toUpperCase()],
    ['ath of "DPoP <token>"', (t) => accessTokenHash(`DPoP ${t}`)],
    ['ath of the token with a trailing =', (t) => accessTokenHash(`${t}=`)],
    ['ath of the token’s payload only', (t) => accessTokenHash(t.split('.')[1]!)],
  ])('ath trick refused: %s', async (_name, athOf) => {
    const { tokens } = await boundTokens();
    const t = tokens.access_token;
    const res = await callResource(`DPoP ${t}`, resourceProof(t, { claims: { ath: athOf(t) } }));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_dpop_proof');
  });

  test('a bound token for one resource, with a good proof for another resource of the same server: refused', async () => {
    const { tokens } = await boundTokens();
    const t = tokens.access_token;
    const res = await callResource(`DPoP ${t}`, resourceProof(t, { htu: OTHER_RESOURCE }), '/other');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });

  test('Authorization header tricks: a second token68, a second scheme, two Authorization headers', async () => {
    const { tokens } = await boundTokens();
    const t = tokens.access_token;
    for (const authorization of [
      `DPoP ${t} ${t}`,
      `DPoP ${t}, Bearer ${t}`,
      `DPoP ${t},DPoP ${t}`,
      `DPoP\t${t}`,
    ]) {
      const res = await callResource(authorization, resourceProof(t));
      expect(res.status).not.toBe(200);
      expect(res.status).toBeLessThan(500);
    }
    const live = await listenOnLoopback(server.app);
    try {
      const send = (headers: string) =>
        exchange(
          live.port,
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Content-Length: 0\r\nConnection: close\r\n\r\n`,
        );
      // Node keeps the first Authorization header: Bearer, which a bound token never passes.
      const bearerFirst = await send(
        `Authorization: Bearer ${t}\r\nAuthorization: DPoP ${t}\r\nDPoP: ${resourceProof(t)}\r\n`,
      );
      expect(bearerFirst.status).toBe(401);
      const dpopFirstNoProof = await send(`Authorization: DPoP ${t}\r\nAuthorization: Bearer ${t}\r\n`);
      expect(dpopFirstNoProof.status).toBe(401);
      const twoProofs = await send(
        `Authorization: DPoP ${t}\r\nDPoP: ${resourceProof(t)}\r\nDPoP: ${resourceProof(t)}\r\n`,
      );
      expect(twoProofs.status).toBe(401);
    } finally {
      live.close();
    }
  });

  test('a DPoP header (junk, or two) beside an unbound Bearer token is ignored', async () => {
    const client = await publicClient();
    const plain = (await (await authorize(client)).exchange()).body as Tokens;
    expect(plain.token_type).toBe('Bearer');
    expect((await callResource(`Bearer ${plain.access_token}`, 'not-a-jwt')).status).toBe(200);
    const two = await request(server.app)
      .post('/mcp')
      .set('Authorization', `Bearer ${plain.access_token}`)
      .set('DPoP', [resourceProof(plain.access_token), 'x.y.z'] as unknown as string);
    expect(two.status).toBe(200);
  });

  /** An unsigned-looking proof: the header and claims as given, and a signature of junk. */
  const unsigned = (header: Record<string, unknown>, claims: object) =>
    `${b64u(JSON.stringify({ typ: 'dpop+jwt', ...header }))}.${b64u(JSON.stringify(claims))}.AAAA`;
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  test.each<[string, (claims: object) => string]>([
    [
      'ES256 named with a P-384 key (signed ES384)',
      (claims) => {
        const jwk = p384.publicKey.export({ format: 'jwk' });
        const [, body, signature] = signRaw(p384.privateKey, 'ES384', { typ: 'dpop+jwt', jwk }, claims).split(
          '.',
        );
        return `${b64u(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk }))}.${body}.${signature}`;
      },
    ],
    ['RS256 named with an EC jwk', (claims) => unsigned({ alg: 'RS256', jwk: key.publicJwk }, claims)],
    [
      'HS256 keyed with the public jwk’s x',
      (claims) =>
        jwt.sign(claims, Buffer.from(String(key.publicJwk.x), 'base64url'), {
          algorithm: 'HS256',
          header: { alg: 'HS256', typ: 'dpop+jwt', jwk: key.publicJwk } as jwt.JwtHeader,
        }),
    ],
    ['alg none', (claims) => unsigned({ alg: 'none', jwk: key.publicJwk }, claims)],
    [
      'a jwk of kty "constructor"',
      (claims) => unsigned({ alg: 'ES256', jwk: { kty: 'constructor' } }, claims),
    ],
    ['a jwk that is an array', (claims) => unsigned({ alg: 'ES256', jwk: [key.publicJwk] }, claims)],
    [
      'a jwk with __proto__',
      (claims) =>
        unsigned({ alg: 'ES256', jwk: JSON.parse(`{"__proto__":${JSON.stringify(key.publicJwk)}}`) }, claims),
    ],
    [
      'an OKP (Ed25519) jwk named ES256',
      (claims) => unsigned({ alg: 'ES256', jwk: { kty: 'OKP', crv: 'Ed25519', x: key.publicJwk.x } }, claims),
    ],
    [
      'a proof longer than 8192 characters',
      (claims) => key.proof(now(), { htu: RESOURCE, claims: { ...claims, pad: 'p'.repeat(6200) } }),
    ],
  ])('proof key/alg confusion refused: %s', async (_name, make) => {
    const { tokens } = await boundTokens();
    const t = tokens.access_token;
    const res = await callResource(`DPoP ${t}`, make(resourceClaims(t)));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_dpop_proof');
  });

  test('an RSA proof labelled RS256 but signed PS256 (and the reverse) is refused', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = publicKey.export({ format: 'jwk' });
    const client = await publicClient();
    const res = await (
      await authorize(client)
    ).exchange(
      signRaw(
        privateKey,
        'RS256',
        { typ: 'dpop+jwt', jwk },
        { jti: randomUUID(), htm: 'POST', htu: TOKEN_URL, iat: Math.floor(now() / 1000) },
      ),
    );
    expect(res.status).toBe(200);
    const t = res.body.access_token as string;
    const ps = signRaw(privateKey, 'PS256', { typ: 'dpop+jwt', jwk }, resourceClaims(t));
    const [, body, signature] = ps.split('.');
    const relabelled = `${b64u(JSON.stringify({ alg: 'RS256', typ: 'dpop+jwt', jwk }))}.${body}.${signature}`;
    expect((await callResource(`DPoP ${t}`, relabelled)).status).toBe(401);
    const rs = signRaw(privateKey, 'RS256', { typ: 'dpop+jwt', jwk }, resourceClaims(t));
    const [, body2, signature2] = rs.split('.');
    const relabelled2 = `${b64u(JSON.stringify({ alg: 'PS256', typ: 'dpop+jwt', jwk }))}.${body2}.${signature2}`;
    expect((await callResource(`DPoP ${t}`, relabelled2)).status).toBe(401);
    // The genuine one passes: the refusals above are about the label.
    expect(
      (
        await callResource(
          `DPoP ${t}`,
          signRaw(privateKey, 'PS256', { typ: 'dpop+jwt', jwk }, resourceClaims(t)),
        )
      ).status,
    ).toBe(200);
  });

  test('jti: 257 characters refused; exactly 256 accepted', async () => {
    const { tokens } = await boundTokens();
    const t = tokens.access_token;
    const long = await callResource(`DPoP ${t}`, resourceProof(t, { claims: { jti: 'j'.repeat(257) } }));
    expect(long.status).toBe(401);
    const max = await callResource(`DPoP ${t}`, resourceProof(t, { claims: { jti: 'j'.repeat(256) } }));
    expect(max.status).toBe(200);
  });

  test('a proof with an exp in the past, an nbf in the future, or an iat two minutes ahead is refused', async () => {
    const { tokens } = await boundTokens();
    const t = tokens.access_token;
    const s = Math.floor(now() / 1000);
    for (const claims of [{ exp: s - 1 }, { nbf: s + 30 }, { iat: s + 120 }]) {
      const res = await callResource(`DPoP ${t}`, resourceProof(t, { claims }));
      expect(res.status).toBe(401);
    }
  });

  test('an error description with quotes, CR LF and non-ASCII cannot split or break WWW-Authenticate', async () => {
    const { tokens } = await boundTokens();
    const t = tokens.access_token;
    const claims = b64u(JSON.stringify(resourceClaims(t)));
    for (const alg of ['a"\r\nSet-Cookie: x=1', 'ES256\u2028\u00e9\\', 'x", error="none']) {
      const proof = `${b64u(JSON.stringify({ typ: 'dpop+jwt', alg, jwk: key.publicJwk }))}.${claims}.AAAA`;
      const res = await callResource(`DPoP ${t}`, proof).timeout(5000);
      expect(res.status).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
      const challenge = ([] as string[]).concat(res.headers['www-authenticate'] ?? []).join(', ');
      expect(challenge).toMatch(
        /^DPoP resource_metadata="[^"]*", error="invalid_dpop_proof", error_description="[^"]*", algs=/,
      );
      expect(challenge).not.toMatch(/[\r\n]/);
    }
  });

  test('a proof whose iat is not a whole second (a NumericDate may be one) does not make the resource fail', async () => {
    const { tokens } = await boundTokens();
    const t = tokens.access_token;
    const iat = Math.floor(now() / 1000) + 0.1234;
    expect(Number.isInteger((iat + 360) * 1000)).toBe(false);
    const res = await callResource(`DPoP ${t}`, resourceProof(t, { claims: { iat } }));
    // RFC 7519 §2: a NumericDate may be fractional. Accepted, or refused as a bad proof: never a failure.
    expect(res.status).toBeLessThan(500);
    expect([200, 401]).toContain(res.status);
  });
});

describe('the token endpoint (§5) with a stolen code, refresh token or proof', () => {
  test('a proof whose iat is not a whole second does not make the token endpoint fail; the code stays usable', async () => {
    const client = await publicClient();
    const { exchange: exchangeCode } = await authorize(client);
    const iat = Math.floor(now() / 1000) + 0.1234;
    const res = await exchangeCode(tokenProof({ claims: { iat } }));
    // RFC 7519 §2: a NumericDate may be fractional. Accepted, or refused as a bad proof: never a failure.
    expect(res.status).toBeLessThan(500);
    if (res.status !== 200) {
      expect(res.body.error).toBe('invalid_dpop_proof');
      expect((await exchangeCode(tokenProof())).status).toBe(200);
    }
  });

  test('a stolen dpop_jkt code with a wrong verifier, without a proof or with the thief’s key, is not burned', async () => {
    const client = await publicClient();
    const { exchange: exchangeCode } = await authorize(client, { dpop_jkt: key.jkt });
    const wrongVerifier = { code_verifier: 'x'.repeat(43) };
    const without = await exchangeCode(undefined, wrongVerifier);
    expect(without.body.error).toBe('invalid_dpop_proof');
    const thiefs = await exchangeCode(tokenProof({}, thief), wrongVerifier);
    expect(thiefs.body.error).toBe('invalid_dpop_proof');
    const res = await exchangeCode(tokenProof());
    expect(res.status).toBe(200);
    expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
  });

  test('the thief’s jkt put in a stolen refresh token (or the jkt stripped) is unknown and revokes nothing', async () => {
    const { client, tokens } = await boundTokens();
    const [grantId, , secret] = tokens.refresh_token.split('.');
    const swapped = await refresh(client, `${grantId}.${thief.jkt}.${secret}`, tokenProof({}, thief));
    expect(swapped.body.error).toBe('invalid_grant');
    const stripped = await refresh(client, `${grantId}.${secret}`, tokenProof({}, thief));
    expect(stripped.body.error).toBe('invalid_grant');
    const extra = await refresh(
      client,
      `${grantId}.${key.jkt}.${thief.jkt}.${secret}`,
      tokenProof({}, thief),
    );
    expect(extra.body.error).toBe('invalid_grant');
    const res = await refresh(client, tokens.refresh_token, tokenProof());
    expect(res.status).toBe(200);
  });

  test('a bound refresh token presented at once with the key, without a proof and with the thief’s key: one chain, no revocation', async () => {
    const { client, tokens } = await boundTokens();
    const [legit, naked, thiefs] = await Promise.all([
      refresh(client, tokens.refresh_token, tokenProof()),
      refresh(client, tokens.refresh_token),
      refresh(client, tokens.refresh_token, tokenProof({}, thief)),
    ]);
    expect(legit.status).toBe(200);
    expect(naked.body.error).toBe('invalid_dpop_proof');
    expect(thiefs.body.error).toBe('invalid_dpop_proof');
    // Long after, the thief presents the old token again, with and without a proof: the grant must survive.
    server.clock.advance(30 * MINUTE);
    expect((await refresh(client, tokens.refresh_token)).body.error).toBe('invalid_dpop_proof');
    expect((await refresh(client, tokens.refresh_token, tokenProof({}, thief))).body.error).toBe(
      'invalid_dpop_proof',
    );
    const next = await refresh(client, legit.body.refresh_token, tokenProof());
    expect(next.status).toBe(200);
    expect(next.body.refresh_token.split('.')[1]).toBe(key.jkt);
    const t = next.body.access_token as string;
    expect((await callResource(`DPoP ${t}`, resourceProof(t))).status).toBe(200);
  });

  test('a bound refresh token presented by another client with the right key is unknown (invalid_grant)', async () => {
    const { tokens } = await boundTokens();
    const stranger = await publicClient();
    expect((await refresh(stranger, tokens.refresh_token, tokenProof())).body.error).toBe('invalid_grant');
  });

  test('dpop_jkt cannot be changed between the authorization request and the consent decision', async () => {
    const client = await publicClient();
    /** Signs in and allows, adding `extra` to every form post (as a tampering browser extension or proxy could). */
    const consent = async (overrides: Record<string, string>, extra: Record<string, string>) => {
      const browser = request.agent(server.app);
      const { query, pkce } = authorizeQuery(client, overrides);
      const login = await browser.get(`/v1/oauth/authorize?${query}`);
      const signIn = formOf(login.text);
      const signedIn = await browser
        .post(`${signIn.action}?${new URLSearchParams(extra)}`)
        .type('form')
        .send({ ...signIn.fields, email: USER.email, password: USER.password, ...extra });
      const next = new URL(signedIn.headers.location!);
      const page = await browser.get(next.pathname + next.search);
      const form = formOf(page.text);
      const decided = await browser
        .post(`${form.action}?${new URLSearchParams(extra)}`)
        .type('form')
        .send({ ...form.fields, decision: 'allow', ...extra });
      const code = new URL(decided.headers.location!).searchParams.get('code')!;
      return { code, verifier: pkce.verifier };
    };
    const exchangeWith = (code: string, verifier: string, proof: string) =>
      tokenRequest(server.app, client, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: client.redirect_uris[0]!,
        code_verifier: verifier,
      }).set('DPoP', proof);

    const added = await consent({}, { dpop_jkt: thief.jkt });
    expect(added.code.startsWith(`${thief.jkt}.`)).toBe(false);
    const changed = await consent({ dpop_jkt: key.jkt }, { dpop_jkt: thief.jkt });
    expect(changed.code.startsWith(`${key.jkt}.`)).toBe(true);
    expect((await exchangeWith(changed.code, changed.verifier, tokenProof({}, thief))).body.error).toBe(
      'invalid_dpop_proof',
    );
    expect((await exchangeWith(changed.code, changed.verifier, tokenProof())).status).toBe(200);
  });

  test('a confidential client’s unbound refresh token refreshed with the thief’s key still needs the secret', async () => {
    const client = await registerClient(server.app);
    const res = await (await authorize(client)).exchange(tokenProof());
    const noSecret = await request(server.app)
      .post('/v1/oauth/token')
      .type('form')
      .set('DPoP', tokenProof({}, thief))
      .send({
        grant_type: 'refresh_token',
        refresh_token: res.body.refresh_token,
        client_id: client.client_id,
      });
    expect(noSecret.status).toBe(401);
  });
});

describe('server nonces (§8) on every grant', () => {
  beforeEach(() => {
    server.close();
    server = createTestServer({ secret: SECRET, dpop: { requireNonce: true } });
  });

  test('client_credentials: a proof without the nonce, with a made-up one, or one from the next period is refused', async () => {
    const machine = await server.oauth.registerOperatorClient({
      name: 'Nightly export',
      grantTypes: ['client_credentials'],
      scope: ['fakture:read'],
    });
    const ask = (proof: string) =>
      request(server.app)
        .post('/v1/oauth/token')
        .type('form')
        .auth(machine.clientId, machine.clientSecret!)
        .set('DPoP', proof)
        .send({ grant_type: 'client_credentials' });
    expect((await ask(tokenProof())).body.error).toBe('use_dpop_nonce');
    expect((await ask(tokenProof({ claims: { nonce: 'x' } }))).body.error).toBe('use_dpop_nonce');
    const future = createDpopNonces(Buffer.from(SECRET), () => now() + NONCE_PERIOD_MS).current();
    expect((await ask(tokenProof({ claims: { nonce: future } }))).body.error).toBe('use_dpop_nonce');
    const nonce = (await ask(tokenProof())).headers['dpop-nonce'] as string;
    const res = await ask(tokenProof({ claims: { nonce } }));
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
  });
});

describe('DPoP off: dpop false, or a store that keeps no assertion ids', () => {
  test('a bound token from an instance with DPoP, at one without it (same store and signer): refused either way', async () => {
    const { tokens } = await boundTokens();
    const t = tokens.access_token;
    const oauth = createOAuthRouter(server.store, server.signer, {
      issuer: ISSUER,
      scopes: BUSINESS_SCOPES,
      now: server.clock.now,
      rateLimits: false,
      authenticateUser: () => null,
      secret: SECRET,
      dpop: false,
    });
    const off = express();
    off.use(oauth);
    off.post('/mcp', oauth.requireBearer(), (_req, res) => res.json({ ok: true }));
    expect((await callResource(`Bearer ${t}`, undefined, '/mcp', off)).status).toBe(401);
    expect((await callResource(`DPoP ${t}`, resourceProof(t), '/mcp', off)).status).toBe(401);
  });

  test('a store without useAssertionId: proofs are ignored, the DPoP scheme is no credential, nothing fails', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const clock = createFakeClock(now());
      const { app } = mountTestApp(createMemoryStore({ assertionIds: false, now: clock.now }), clock);
      const client = await publicClient(app);
      const res = await (
        await authorize(client, { dpop_jkt: key.jkt }, app)
      ).exchange(key.proof(clock.now(), { htu: TOKEN_URL }));
      expect(res.status).toBe(200);
      expect(res.body.token_type).toBe('Bearer');
      const t = res.body.access_token as string;
      const dpop = await callResource(
        `DPoP ${t}`,
        key.proof(clock.now(), { htu: RESOURCE, accessToken: t }),
        '/mcp',
        app,
      );
      expect(dpop.status).toBe(401);
      expect((await callResource(`Bearer ${t}`, 'junk', '/mcp', app)).status).toBe(200);
    } finally {
      warn.mockRestore();
    }
  });
});

describe('CPU cost of a proof’s key (a malicious client, before any token is needed)', () => {
  /** A proof for the token endpoint with a made-up RSA key (random odd modulus) and a random signature. */
  function rsaProof(modulusBits: number, exponent: Buffer) {
    const n = randomBytes(modulusBits / 8);
    n[0]! |= 0x80;
    n[n.length - 1]! |= 1;
    const header = { typ: 'dpop+jwt', alg: 'RS256', jwk: { kty: 'RSA', n: b64u(n), e: b64u(exponent) } };
    const claims = { jti: randomUUID(), htm: 'POST', htu: TOKEN_URL, iat: Math.floor(now() / 1000) };
    const signature = randomBytes(modulusBits / 8);
    signature[0] = 0x01;
    return `${b64u(JSON.stringify(header))}.${b64u(JSON.stringify(claims))}.${b64u(signature)}`;
  }
  const oddExponent = (bytes: number) => {
    const e = randomBytes(bytes);
    e[0] = 0x7f;
    e[bytes - 1]! |= 1;
    return e;
  };

  test.each<[string, number, Buffer]>([
    // ~7 ms of modular exponentiation per request instead of ~0.05 ms with e = 65537.
    ['a 3072-bit public exponent', 3072, oddExponent(384)],
    // ~4.5 ms per request; OpenSSL verifies moduli up to 16384 bits.
    ['a 16384-bit modulus with a 64-bit exponent', 16384, oddExponent(8)],
  ])('an RSA jwk with %s is refused as a key, before its signature is computed', async (_name, bits, e) => {
    const client = await publicClient();
    const proof = rsaProof(bits, e);
    expect(proof.length).toBeLessThanOrEqual(8192);
    const res = await tokenRequest(server.app, client, {
      grant_type: 'authorization_code',
      code: 'x',
      redirect_uri: client.redirect_uris[0]!,
      code_verifier: 'v'.repeat(43),
    }).set('DPoP', proof);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_dpop_proof');
    // Refused for what the key is, not after the costly signature check.
    expect(res.body.error_description).not.toMatch(/signature/);
  });
});

let database: TestDatabase | undefined;
afterAll(() => database?.drop());

// PostgreSQL stores no NUL in TEXT and no fraction in BIGINT (oauth_client_assertions.jti, .expires_at); the jti and
// iat of a proof reach useAssertionId unfiltered.
describeWith('DPoP on PostgreSQL: proof claims the store cannot hold', { postgres: true }, () => {
  let pg: ReturnType<typeof createPostgresStore>;
  let app: express.Express;
  let clock: ReturnType<typeof createFakeClock>;
  let schemas = 0;
  beforeEach(async () => {
    database ??= await createTestDatabase();
    clock = createFakeClock(Date.now());
    pg = createPostgresStore(database.url, { schema: `dpop_attacks_${(schemas += 1)}`, now: clock.now });
    await pg.ready;
    ({ app } = mountTestApp(pg as OAuthStore, clock, { secret: SECRET }));
  });
  afterEach(() => pg.close());

  const cases: Array<[string, () => Record<string, unknown>]> = [
    ['a jti with a NUL', () => ({ jti: `a\u0000${randomUUID()}` })],
    ['an iat that is not a whole second', () => ({ iat: Math.floor(clock.now() / 1000) + 0.1234 })],
  ];

  test.each(cases)('token endpoint: %s is accepted or refused (400), never a 500', async (_name, claims) => {
    const client = await publicClient(app);
    const { exchange: exchangeCode } = await authorize(client, {}, app);
    const res = await exchangeCode(key.proof(clock.now(), { htu: TOKEN_URL, claims: claims() }));
    expect(res.status).toBeLessThan(500);
    if (res.status !== 200) {
      expect(res.body.error).toBe('invalid_dpop_proof');
      expect((await exchangeCode(key.proof(clock.now(), { htu: TOKEN_URL }))).status).toBe(200);
    }
  });

  test.each(cases)('resource: %s is accepted or refused (401), never a 500', async (_name, claims) => {
    const client = await publicClient(app);
    const res = await (await authorize(client, {}, app)).exchange(key.proof(clock.now(), { htu: TOKEN_URL }));
    const t = res.body.access_token as string;
    const proof = key.proof(clock.now(), { htu: RESOURCE, accessToken: t, claims: claims() });
    const called = await callResource(`DPoP ${t}`, proof, '/mcp', app);
    expect(called.status).toBeLessThan(500);
    expect([200, 401]).toContain(called.status);
  });
});
