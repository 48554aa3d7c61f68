// The access-token signer: RFC 9068 shape, pinned verification, key rotation, JWKS, and startup errors.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { createJwtSigner, type AccessTokenInput, type JwtSigner } from '../../../lib/crypto/signer';
import { generateSigningKey } from '../../../lib/crypto/keys';
import { createFakeClock, HOUR, SECOND } from '../../helpers/clock';

const ISSUER = 'https://auth.example';
const AUDIENCE = 'https://auth.example/mcp';
const expected = { issuer: ISSUER, audience: AUDIENCE };
const input: AccessTokenInput = {
  issuer: ISSUER,
  subject: 'user-1',
  audience: AUDIENCE,
  clientId: 'client-1',
  scope: 'fakture:read clients:read',
  grantId: 'grant-1',
  expiresIn: 3600,
};

describe('createJwtSigner', () => {
  const clock = createFakeClock();
  const signer = createJwtSigner({ now: clock.now });

  test('signs an RFC 9068 access token with typ at+jwt, kid, and every required claim', () => {
    const { token, claims } = signer.signAccessToken(input);
    const decoded = jwt.decode(token, { complete: true })!;
    expect(decoded.header).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: signer.jwks().keys[0]!.kid });
    expect(decoded.payload).toEqual(claims);
    expect(claims).toMatchObject({
      iss: ISSUER,
      sub: 'user-1',
      aud: AUDIENCE,
      client_id: 'client-1',
      scope: 'fakture:read clients:read',
      grant_id: 'grant-1',
      iat: clock.now() / 1000,
      exp: clock.now() / 1000 + 3600,
    });
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(signer.signAccessToken(input).claims.jti).not.toBe(claims.jti);
  });

  test('verifies its own token and returns the claims', () => {
    const { token, claims } = signer.signAccessToken(input);
    expect(signer.verifyAccessToken(token, expected)).toEqual(claims);
  });

  test('tolerates a few seconds of clock skew, and no more', () => {
    const { token } = signer.signAccessToken(input);
    clock.advance(HOUR + 4 * SECOND);
    expect(signer.verifyAccessToken(token, expected).sub).toBe('user-1');
    clock.advance(2 * SECOND);
    expect(() => signer.verifyAccessToken(token, expected)).toThrow('The access token has expired.');
    clock.advance(-HOUR - 6 * SECOND);
  });

  const privateKey = generateSigningKey('ES256');
  const publicPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({
    type: 'spki',
    format: 'pem',
  });
  const forge = (
    header: object,
    payload: object,
    key: jwt.Secret = privateKey,
    algorithm: jwt.Algorithm = 'ES256',
  ) => jwt.sign(payload, key, { algorithm, header: { alg: algorithm, ...header } });
  const kid = signer.jwks().keys[0]!.kid;
  const claims = () => signer.signAccessToken(input).claims;

  // Each row is an attack or a mistake a verifier must refuse.
  const refused: Array<[string, () => string]> = [
    ['a malformed string', () => 'not.a.jwt'],
    ['an empty string', () => ''],
    [
      'an ID token (typ JWT)',
      () => jwt.sign(claims(), 'x', { algorithm: 'HS256', header: { alg: 'HS256', typ: 'JWT' } }),
    ],
    ['a token with no typ', () => jwt.sign(claims(), 'x', { algorithm: 'HS256' })],
    [
      'alg none',
      () =>
        jwt.sign(claims(), null as never, {
          algorithm: 'none',
          header: { alg: 'none', typ: 'at+jwt', kid } as never,
        }),
    ],
    [
      'HS256 keyed with the public key (algorithm confusion)',
      () => forge({ typ: 'at+jwt', kid }, claims(), publicPem, 'HS256'),
    ],
    ['a token signed by a stranger under our kid', () => forge({ typ: 'at+jwt', kid }, claims())],
    ['an unknown kid', () => forge({ typ: 'at+jwt', kid: 'someone-else' }, claims())],
    ['a tampered payload', () => tamper(signer.signAccessToken(input).token)],
    ['another issuer', () => signer.signAccessToken({ ...input, issuer: 'https://evil.example' }).token],
    [
      'another audience (a token for another resource)',
      () => signer.signAccessToken({ ...input, audience: 'https://other/mcp' }).token,
    ],
    ['an expired token', () => signer.signAccessToken({ ...input, expiresIn: -60 }).token],
  ];
  test.each(refused)('refuses %s with invalid_token', (_name, make) => {
    const token = make();
    expect(() => signer.verifyAccessToken(token, expected)).toThrow(
      expect.objectContaining({ code: 'invalid_token', status: 401 }),
    );
  });

  test('refuses a validly signed token that lacks a required claim', () => {
    const own = createJwtSigner({ keys: [{ privateKey, kid: 'k1' }], now: clock.now });
    const { grant_id: _omitted, ...partial } = claims();
    const token = forge({ typ: 'at+jwt', kid: 'k1' }, partial);
    expect(() => own.verifyAccessToken(token, expected)).toThrow('lacks the grant_id claim');
  });

  // RFC 9449 §6.1: a confirmation the bearer check cannot read must not pass for no confirmation (a bearer token).
  test.each([
    ['null', null],
    ['a string', 'jkt'],
    ['an object without jkt', { 'x5t#S256': 'abc' }],
    ['a jkt that is no string', { jkt: 42 }],
  ])('refuses a validly signed token whose cnf is %s', (_name, cnf) => {
    const own = createJwtSigner({ keys: [{ privateKey, kid: 'k1' }], now: clock.now });
    const token = forge({ typ: 'at+jwt', kid: 'k1' }, { ...claims(), cnf });
    expect(() => own.verifyAccessToken(token, expected)).toThrow('cnf claim without a jkt');
  });

  test('a token bound to a DPoP key carries cnf.jkt, and verifies with it', () => {
    const { token } = signer.signAccessToken({ ...input, jkt: 'thumbprint' });
    expect(signer.verifyAccessToken(token, expected).cnf).toEqual({ jkt: 'thumbprint' });
    expect(signer.verifyAccessToken(signer.signAccessToken(input).token, expected).cnf).toBeUndefined();
  });

  test('accepts the long form typ application/at+jwt', () => {
    const own = createJwtSigner({ keys: [{ privateKey, kid: 'k1' }], now: clock.now });
    const token = forge({ typ: 'application/at+jwt', kid: 'k1' }, claims());
    expect(own.verifyAccessToken(token, expected).sub).toBe('user-1');
  });
});

function tamper(token: string): string {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
  claims.scope = 'company:write';
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}

describe('key rotation and JWKS', () => {
  test('signs with the newest key and still verifies tokens of a retired one', () => {
    const oldKey = generateSigningKey('ES256');
    const before = createJwtSigner({ keys: [{ privateKey: oldKey }] });
    const oldToken = before.signAccessToken(input).token;
    const oldPublic = before.jwks().keys[0]!;
    const after: JwtSigner = createJwtSigner({
      keys: [{ privateKey: generateSigningKey('RS256') }, { publicKey: oldKey }],
    });
    expect(after.verifyAccessToken(oldToken, expected).sub).toBe('user-1');
    const newToken = after.signAccessToken(input).token;
    expect(jwt.decode(newToken, { complete: true })!.header).toMatchObject({
      alg: 'RS256',
      kid: after.jwks().keys[0]!.kid,
    });
    expect(after.jwks().keys.map((key) => key.kid)).toEqual([after.jwks().keys[0]!.kid, oldPublic.kid]);
  });

  test('publishes only public members, with kid, alg and use', () => {
    const signer = createJwtSigner({
      keys: [{ privateKey: generateSigningKey('ES256') }, { privateKey: generateSigningKey('RS256') }],
    });
    const [ec, rsa] = signer.jwks().keys;
    expect(ec).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(rsa).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    for (const key of [ec!, rsa!]) {
      expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/); // RFC 7638 thumbprint
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret);
    }
    expect(signer.jwks()).toBe(signer.jwks());
  });

  test('loads PEM keys and keeps a given kid', () => {
    const pem = generateSigningKey('ES256').export({ type: 'pkcs8', format: 'pem' }) as string;
    const signer = createJwtSigner({ keys: [{ privateKey: pem, kid: 'primary' }] });
    const { token } = signer.signAccessToken(input);
    expect(jwt.decode(token, { complete: true })!.header.kid).toBe('primary');
    expect(signer.verifyAccessToken(token, expected).sub).toBe('user-1');
  });

  test('generates an RS256 key when asked', () => {
    expect(createJwtSigner({ algorithm: 'RS256' }).jwks().keys[0]).toMatchObject({
      kty: 'RSA',
      alg: 'RS256',
    });
  });
});

describe('startup errors say how to fix them', () => {
  const ecKey = generateSigningKey('ES256');
  const bad: Array<[string, Parameters<typeof createJwtSigner>[0], RegExp]> = [
    ['unknown algorithm', { algorithm: 'HS256' as never }, /must be "ES256" or "RS256"/],
    ['empty key list', { keys: [] }, /non-empty array/],
    ['key entry without a key', { keys: [{}] }, /give \{ privateKey \}/],
    ['unreadable PEM', { keys: [{ privateKey: 'not a pem' }] }, /not a readable PEM private key/],
    [
      'unreadable public PEM',
      { keys: [{ privateKey: ecKey }, { publicKey: 'nope' }] },
      /not a readable PEM public key/,
    ],
    [
      'public key passed as private',
      { keys: [{ privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey }] },
      /pass the private key/,
    ],
    [
      'a P-384 key',
      { keys: [{ privateKey: generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey }] },
      /use an EC P-256 key/,
    ],
    [
      'a 1024-bit RSA key',
      { keys: [{ privateKey: generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey }] },
      /at least 2048 bits/,
    ],
    ['a verify-only key first', { keys: [{ publicKey: ecKey }] }, /first key signs/],
    ['duplicate kids', { keys: [{ privateKey: ecKey }, { publicKey: ecKey }] }, /share a kid/],
    ['empty kid', { keys: [{ privateKey: ecKey, kid: '' }] }, /kid must be a non-empty string/],
    ['negative clock tolerance', { clockToleranceSeconds: -1 }, /from 0 to 300/],
    ['a clock that is not a function', { now: 5 as never }, /now must be a function/],
  ];
  test.each(bad)('%s', (_name, options, message) => {
    expect(() => createJwtSigner(options)).toThrow(message);
  });
});

describe('signatures made with node:crypto directly', () => {
  test.each(['ES256', 'RS256'] as const)(
    '%s: a standard JWS that jsonwebtoken verifies with the published key',
    (alg) => {
      const privateKey = generateSigningKey(alg);
      const signer = createJwtSigner({ keys: [{ privateKey }] });
      const { token, claims } = signer.signAccessToken(input);
      const [header, , signature] = token.split('.');
      expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({
        typ: 'at+jwt',
        kid: signer.jwks().keys[0]!.kid,
        alg,
      });
      // RFC 7518 §3.4: ES256 is R || S, 64 bytes, not DER; RS256 is as long as the modulus.
      expect(Buffer.from(signature!, 'base64url')).toHaveLength(alg === 'ES256' ? 64 : 256);
      const publicKey = createPublicKey(privateKey);
      expect(jwt.verify(token, publicKey, { algorithms: [alg] })).toEqual(claims);
      const tampered = `${token.slice(0, -4)}${token.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      expect(() => jwt.verify(tampered, publicKey, { algorithms: [alg] })).toThrow();
    },
  );
});
