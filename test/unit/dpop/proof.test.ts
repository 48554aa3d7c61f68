// DPoP proofs (RFC 9449 §4.3), each check on its own: a valid proof passes, and every way a proof can be wrong,
// forged or replayed is refused, named after the check of §4.3 that stops it. JWK thumbprints against RFC 7638's own
// example.
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { rsaKeyPair } from '../../helpers/rsa-keys';
import jwt from 'jsonwebtoken';
import {
  accessTokenHash,
  checkDpopProof,
  readDpopHeader,
  useDpopProof,
  verifyDpopProof,
  type DpopExpectations,
} from '../../../lib/dpop/proof';
import { jwkThumbprint } from '../../../lib/dpop/thumbprint';

const NOW = 1_800_000_000_000;
const URL_ = 'https://api.example.com/v1/oauth/token';
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const otherEc = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = rsaKeyPair('dpop-proof');
const smallRsa = rsaKeyPair('dpop-proof-small', 1024);
const publicJwk = (key: KeyObject) => key.export({ format: 'jwk' }) as Record<string, unknown>;

interface ProofOptions {
  key?: KeyObject;
  alg?: string;
  typ?: string;
  jwk?: unknown;
  claims?: Record<string, unknown>;
}
function proof({
  key = ec.privateKey,
  alg = 'ES256',
  typ = 'dpop+jwt',
  jwk,
  claims = {},
}: ProofOptions = {}) {
  const header = { typ, alg, jwk: jwk ?? publicJwk(key === rsa.privateKey ? rsa.publicKey : ec.publicKey) };
  const payload = { jti: randomUUID(), htm: 'POST', htu: URL_, iat: NOW / 1000, ...claims };
  for (const [name, value] of Object.entries(payload))
    if (value === undefined) delete (payload as Record<string, unknown>)[name];
  return jwt.sign(payload, key, {
    algorithm: alg as jwt.Algorithm,
    header: header as jwt.JwtHeader,
    // A proof's iat is given above; allowInsecureKeySizes lets the test make the weak proof the server must refuse.
    allowInsecureKeySizes: true,
  });
}

/** The base64url of a made-up odd number of `bits` bits: an RSA modulus Node imports without question. */
function oddModulus(bits: number): string {
  const bytes = Buffer.alloc(bits / 8, 0xab);
  bytes[0] = 0xc1;
  bytes[bytes.length - 1] = 0x01;
  return bytes.toString('base64url');
}

function expectations(overrides: Partial<DpopExpectations> = {}) {
  const seen = new Set<string>();
  return {
    method: 'POST',
    url: URL_,
    now: NOW,
    useJti: (jkt: string, jti: string) => !seen.has(`${jkt} ${jti}`) && Boolean(seen.add(`${jkt} ${jti}`)),
    ...overrides,
  };
}

test('a valid proof passes and gives the thumbprint of its key (§6.1 cnf.jkt)', async () => {
  const result = await verifyDpopProof(proof(), expectations());
  expect(result.jkt).toBe(jwkThumbprint(publicJwk(ec.publicKey)));
  const withRsa = await verifyDpopProof(proof({ key: rsa.privateKey, alg: 'PS256' }), expectations());
  expect(withRsa.jkt).toBe(jwkThumbprint(publicJwk(rsa.publicKey)));
});

test.each<[string, () => string, Partial<DpopExpectations>, RegExp]>([
  ['item 2: not a JWT', () => 'not-a-jwt', {}, /not a JWT/],
  ['item 2: an oversized proof', () => `${'a'.repeat(9000)}.b.c`, {}, /not a JWT/],
  [
    'item 4: another typ (a JWT signed by the same key for something else)',
    () => proof({ typ: 'JWT' }),
    {},
    /typ must be dpop\+jwt/,
  ],
  // §4.2 gives the type one spelling: neither RFC 7515's optional "application/" nor another case.
  [
    'item 4: typ with "application/"',
    () => proof({ typ: 'application/dpop+jwt' }),
    {},
    /typ must be dpop\+jwt/,
  ],
  ['item 4: typ in capitals', () => proof({ typ: 'DPOP+JWT' }), {}, /typ must be dpop\+jwt/],
  [
    'item 5: alg none',
    () =>
      jwt.sign({ jti: 'x', htm: 'POST', htu: URL_, iat: NOW / 1000 }, '', {
        algorithm: 'none',
        header: { typ: 'dpop+jwt', alg: 'none', jwk: publicJwk(ec.publicKey) } as never,
      }),
    {},
    /not a JWT|signed with none/,
  ],
  [
    'item 5: HMAC with the public key as secret',
    () =>
      jwt.sign({ jti: 'x', htm: 'POST', htu: URL_, iat: NOW / 1000 }, 'secret', {
        algorithm: 'HS256',
        header: { typ: 'dpop+jwt', alg: 'HS256', jwk: publicJwk(ec.publicKey) } as never,
      }),
    {},
    /signed with HS256/,
  ],
  [
    'item 6: a signature by another key than the jwk',
    () => proof({ jwk: publicJwk(otherEc.publicKey) }),
    {},
    /signature does not verify/,
  ],
  [
    'item 5: a jwk that does not fit the alg',
    () => proof({ key: rsa.privateKey, alg: 'RS256', jwk: publicJwk(ec.publicKey) }),
    {},
    /not a key for RS256/,
  ],
  [
    'item 7: a private key in the jwk',
    () => proof({ jwk: ec.privateKey.export({ format: 'jwk' }) }),
    {},
    /holds a private key/,
  ],
  ['no jwk', () => proof({ jwk: 'none' }), {}, /no jwk header/],
  [
    'a weak RSA key',
    () => proof({ key: smallRsa.privateKey, alg: 'RS256', jwk: publicJwk(smallRsa.publicKey) }),
    {},
    /2048 to 4096 bits/,
  ],
  // A key beyond these costs a hundred times a real one to verify: refused before its signature is checked.
  [
    'an RSA key of more than 4096 bits',
    () => proof({ key: rsa.privateKey, alg: 'RS256', jwk: { kty: 'RSA', e: 'AQAB', n: oddModulus(4104) } }),
    {},
    /2048 to 4096 bits and the exponent 65537/,
  ],
  [
    'an RSA key with an exponent other than 65537',
    () => proof({ key: rsa.privateKey, alg: 'RS256', jwk: { ...publicJwk(rsa.publicKey), e: 'Aw' } }),
    {},
    /the exponent 65537/,
  ],
  ['item 3: no jti', () => proof({ claims: { jti: undefined } }), {}, /needs a jti/],
  // The jti is stored: PostgreSQL refuses a NUL, so the proof is refused first (a 500 otherwise).
  [
    'a jti with a control character',
    () => proof({ claims: { jti: 'a\u0000b' } }),
    {},
    /none a control character/,
  ],
  ['item 8: another method', () => proof({ claims: { htm: 'GET' } }), {}, /htm must be POST/],
  [
    'item 9: another URL',
    () => proof({ claims: { htu: 'https://api.example.com/v1/oauth/revoke' } }),
    {},
    /htu must be/,
  ],
  [
    'item 9: another host',
    () => proof({ claims: { htu: 'https://evil.example/v1/oauth/token' } }),
    {},
    /htu must be/,
  ],
  ['item 9: not a URL', () => proof({ claims: { htu: 'token endpoint' } }), {}, /htu must be/],
  [
    'item 11: made ten minutes ago (a stolen proof, kept)',
    () => proof({ claims: { iat: NOW / 1000 - 600 } }),
    {},
    /iat is not within/,
  ],
  [
    'item 11: made in the future',
    () => proof({ claims: { iat: NOW / 1000 + 600 } }),
    {},
    /iat is not within/,
  ],
  ['item 11: no iat', () => proof({ claims: { iat: undefined } }), {}, /iat is not within/],
  [
    'item 12: ath of another access token',
    () => proof({ claims: { ath: accessTokenHash('other') } }),
    { accessToken: 'the-token' },
    /ath is not the hash/,
  ],
  [
    'item 12: no ath with an access token',
    () => proof(),
    { accessToken: 'the-token' },
    /ath is not the hash/,
  ],
])('refused, %s', async (_name, make, overrides, message) => {
  await expect(verifyDpopProof(make(), expectations(overrides))).rejects.toMatchObject({
    code: 'invalid_dpop_proof',
    description: expect.stringMatching(message),
  });
});

test('item 9: htu is compared as a URL: scheme and host case, the default port, a query or fragment', async () => {
  for (const htu of [
    'HTTPS://API.EXAMPLE.COM/v1/oauth/token',
    'https://api.example.com:443/v1/oauth/token',
    `${URL_}?x=1`,
    `${URL_}#f`,
  ]) {
    await expect(verifyDpopProof(proof({ claims: { htu } }), expectations())).resolves.toBeDefined();
  }
  // The path is not case-insensitive.
  await expect(
    verifyDpopProof(
      proof({
        claims: { htu: URL_.toUpperCase().replace('HTTPS://API.EXAMPLE.COM', 'https://api.example.com') },
      }),
      expectations(),
    ),
  ).rejects.toThrow(/htu/);
});

test('§11.1 replay: the same proof twice is refused the second time', async () => {
  const checks = expectations();
  const once = proof();
  await verifyDpopProof(once, checks);
  await expect(verifyDpopProof(once, checks)).rejects.toThrow(/used before/);
});

test('§11.1 replay, recorded later (the token endpoint): checking records nothing; the second use is refused', async () => {
  const { useJti } = expectations();
  const once = proof();
  const checked = checkDpopProof(once, expectations());
  expect(checkDpopProof(once, expectations())).toEqual(checked);
  expect(checked.jkt).toBe(jwkThumbprint(publicJwk(ec.publicKey)));
  await useDpopProof(checked, useJti);
  await expect(useDpopProof(checked, useJti)).rejects.toMatchObject({
    code: 'invalid_dpop_proof',
    message: expect.stringMatching(/used before/),
  });
});

test('the jti is kept as long as the proof could be accepted', async () => {
  const kept: number[] = [];
  await verifyDpopProof(
    proof(),
    expectations({ useJti: (_jkt, _jti, expiresAt) => (kept.push(expiresAt), true) }),
  );
  expect(kept[0]).toBeGreaterThanOrEqual(NOW + 300_000);
});

test('item 12: a proof for this access token passes at a protected resource', async () => {
  await expect(
    verifyDpopProof(
      proof({ claims: { ath: accessTokenHash('the-token') } }),
      expectations({ accessToken: 'the-token' }),
    ),
  ).resolves.toBeDefined();
});

/** Nonces that accept only 'n-1' and give out 'n-1'. */
const oneNonce = { current: () => 'n-1', accepts: (nonce: unknown) => nonce === 'n-1' };

test('§8 nonce: without the server’s nonce, use_dpop_nonce with the nonce to use; with it, it passes', async () => {
  await expect(verifyDpopProof(proof(), expectations({ nonces: oneNonce }))).rejects.toMatchObject({
    code: 'use_dpop_nonce',
    headers: { 'DPoP-Nonce': 'n-1' },
  });
  await expect(
    verifyDpopProof(proof({ claims: { nonce: 'n-0' } }), expectations({ nonces: oneNonce })),
  ).rejects.toMatchObject({ code: 'use_dpop_nonce' });
  await expect(
    verifyDpopProof(proof({ claims: { nonce: 'n-1' } }), expectations({ nonces: oneNonce })),
  ).resolves.toBeDefined();
});

test('item 1: exactly one DPoP header', () => {
  expect(readDpopHeader(undefined)).toBeUndefined();
  expect(readDpopHeader('a.b.c')).toBe('a.b.c');
  expect(() => readDpopHeader('a.b.c, d.e.f')).toThrow(/exactly one DPoP header/);
  expect(() => readDpopHeader(['a.b.c', 'd.e.f'])).toThrow(/exactly one DPoP header/);
});

describe('JWK thumbprints (RFC 7638)', () => {
  test('§3.1’s example key gives §3.1’s thumbprint, whatever other members it has', () => {
    const jwk = {
      kty: 'RSA',
      n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
      e: 'AQAB',
      alg: 'RS256',
      kid: '2011-04-29',
    };
    expect(jwkThumbprint(jwk)).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });
  test.each([
    ['an unknown key type', { kty: 'oct', k: 'x' }, /kty EC, RSA or OKP/],
    ['a missing member', { kty: 'EC', crv: 'P-256', x: 'x' }, /lacks its "y"/],
  ])('%s is refused', (_name, jwk, message) => {
    expect(() => jwkThumbprint(jwk)).toThrow(message);
  });
  test('an EC key’s thumbprint depends on every required member', () => {
    const jwk = publicJwk(ec.publicKey);
    expect(jwkThumbprint({ ...jwk, x: publicJwk(otherEc.publicKey).x })).not.toBe(jwkThumbprint(jwk));
  });
});

describe('what mutation testing showed no test pinned', () => {
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const ecJwk = publicJwk(ec.publicKey);
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });

  test.each<[string, () => string, RegExp]>([
    [
      'item 5: an ES256 proof whose jwk is a P-384 key',
      () => `${b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk(p384.publicKey) })}.${b64({})}.c2ln`,
      /not a key for ES256/,
    ],
    [
      'item 5: a jwk without kty',
      () => `${b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: { ...ecJwk, kty: undefined } })}.${b64({})}.c2ln`,
      /not a key for ES256/,
    ],
    [
      'a jwk that is no key at all',
      () =>
        `${b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' } })}.${b64({})}.c2ln`,
      /not a valid public key/,
    ],
    [
      'item 2: a payload that is not a JSON object',
      () => `${b64({ typ: 'dpop+jwt', alg: 'ES256' })}.${b64('text')}.c2ln`,
      /not a JWT/,
    ],
    [
      'item 2: a valid proof grown past 8 KiB',
      () => proof({ claims: { pad: 'x'.repeat(9000) } }),
      /not a JWT/,
    ],
    ['item 2: a valid proof with a line break after it', () => `${proof()}\n`, /not a JWT/],
    ['item 2: a valid proof with a space before it', () => ` ${proof()}`, /not a JWT/],
    ['item 3: an empty jti', () => proof({ claims: { jti: '' } }), /needs a jti/],
    ['item 3: a jti of 257 characters', () => proof({ claims: { jti: 'j'.repeat(257) } }), /needs a jti/],
    ['item 9: an htu that is not a string', () => proof({ claims: { htu: 7 } }), /htu must be/],
    [
      'item 11: made 301 seconds ago',
      () => proof({ claims: { iat: NOW / 1000 - 301 } }),
      /iat is not within/,
    ],
    [
      'item 11: made 61 seconds ahead',
      () => proof({ claims: { iat: NOW / 1000 + 61 } }),
      /iat is not within/,
    ],
    [
      'item 11: an iat that is a string',
      // A string payload: jsonwebtoken signs it as given, where it would refuse an object with a string iat.
      () =>
        jwt.sign(
          JSON.stringify({ jti: 'j', htm: 'POST', htu: URL_, iat: String(NOW / 1000) }),
          ec.privateKey,
          {
            algorithm: 'ES256',
            header: { typ: 'dpop+jwt', alg: 'ES256', jwk: ecJwk } as jwt.JwtHeader,
          },
        ),
      /iat is not within/,
    ],
  ])('refused, %s', async (_name, make, message) => {
    await expect(verifyDpopProof(make(), expectations())).rejects.toMatchObject({
      code: 'invalid_dpop_proof',
      description: expect.stringMatching(message),
    });
  });

  test.each([['d'], ['p'], ['q'], ['dp'], ['dq'], ['qi'], ['oth'], ['k']])(
    'item 7: a jwk with the private member %s is refused',
    async (member) => {
      await expect(
        verifyDpopProof(proof({ jwk: { ...ecJwk, [member]: 'x' } }), expectations()),
      ).rejects.toThrow(/holds a private key/);
    },
  );

  test.each([
    ['a jti of 256 characters', { jti: 'j'.repeat(256) }],
    // RFC 7519 §2: a NumericDate may have a fraction; the store keeps whole milliseconds.
    ['an iat with a fraction', { iat: NOW / 1000 - 0.25 }],
    ['made 300 seconds ago', { iat: NOW / 1000 - 300 }],
    ['made 60 seconds ahead', { iat: NOW / 1000 + 60 }],
    ['a nonce the server did not ask for', { nonce: 'unasked' }],
  ])('accepted: %s', async (_name, claims) => {
    await expect(verifyDpopProof(proof({ claims }), expectations())).resolves.toBeDefined();
  });

  test('the nonce refusal says where the nonce is', async () => {
    await expect(verifyDpopProof(proof(), expectations({ nonces: oneNonce }))).rejects.toMatchObject({
      description: expect.stringMatching(/DPoP-Nonce header/),
    });
  });

  test('an unsupported alg is named, with the ones to use', async () => {
    const forged = `${b64({ typ: 'dpop+jwt', alg: 'ES512', jwk: ecJwk })}.${b64({})}.c2ln`;
    await expect(verifyDpopProof(forged, expectations())).rejects.toMatchObject({
      description: 'The DPoP proof is signed with ES512; use ES256, RS256, PS256.',
    });
  });

  test('an alg name is cut short in the refusal', async () => {
    const forged = `${b64({ typ: 'dpop+jwt', alg: 'A'.repeat(100), jwk: ecJwk })}.${b64({})}.c2ln`;
    await expect(verifyDpopProof(forged, expectations())).rejects.toMatchObject({
      description: `The DPoP proof is signed with ${'A'.repeat(20)}; use ES256, RS256, PS256.`,
    });
  });

  test('RFC 8037 §A.3: an Ed25519 key’s thumbprint', () => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' };
    expect(jwkThumbprint(jwk)).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
  });

  test.each([
    ['a kty naming a member of every object', { kty: 'toString' }, /kty EC, RSA or OKP/],
    ['a kty that is not a string', { kty: 7 }, /kty EC, RSA or OKP/],
    ['an empty member', { ...ecJwk, y: '' }, /lacks its "y"/],
  ])('thumbprint: %s is refused', (_name, jwk, message) => {
    expect(() => jwkThumbprint(jwk)).toThrow(message);
  });
});

test('an RSA key of exactly 4096 bits is not refused for its size (its made-up signature is what fails)', async () => {
  const jwk = { kty: 'RSA', e: 'AQAB', n: oddModulus(4096) };
  await expect(
    verifyDpopProof(proof({ key: rsa.privateKey, alg: 'RS256', jwk }), expectations()),
  ).rejects.toThrow(/signature does not verify/);
});

test('the jti is kept until a whole millisecond, also for an iat with a fraction (stores keep integers)', async () => {
  const kept: number[] = [];
  const useJti = (_jkt: string, _jti: string, expiresAt: number) => Boolean(kept.push(expiresAt));
  await verifyDpopProof(proof({ claims: { iat: NOW / 1000 - 0.25 } }), expectations({ useJti }));
  expect(kept).toEqual([NOW - 250 + 360_000]);
  expect(Number.isInteger(kept[0])).toBe(true);
});
