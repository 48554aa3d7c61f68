// The shared steps of every JWT verifier (lib/jwt/verify.ts), each on the inputs an attacker would try. The
// verifiers' own rule tables (client assertions, ID-JAGs, DPoP proofs, access tokens) run them in place too.
import { generateKeyPairSync } from 'node:crypto';
import { rsaKeyPair } from '../../helpers/rsa-keys';
import jwt from 'jsonwebtoken';
import {
  decodeJwt,
  describeRefusal,
  findKeys,
  hasType,
  isAllowedAlgorithm,
  keepUntil,
  keysFor,
  MAX_JTI_LENGTH,
  singleAudience,
  storableJti,
  verifySignature,
  type VerificationKey,
} from '../../../lib/jwt/verify';

const NOW = Date.UTC(2020, 0, 1, 12) + 500;
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const otherEc = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const sign = (claims: object, key = ec.privateKey, header: object = {}) =>
  jwt.sign(claims, key, { algorithm: 'ES256', header: { alg: 'ES256', ...header } });

test.each([
  ['a JWS with an object payload', sign({ a: 1 }), true],
  ['a JWS whose payload is a string', jwt.sign('just text', 'secret'), false],
  ['three dots of nothing', '..', false],
  ['not a JWT', 'hello', false],
])('decodeJwt: %s', (_name, token, decodes) => {
  expect(decodeJwt(token) !== undefined).toBe(decodes);
});

test.each([
  ['at+jwt', 'at+jwt', {}, true],
  ['AT+JWT', 'at+jwt', {}, true],
  ['application/at+jwt', 'at+jwt', {}, true],
  ['Application/AT+JWT', 'at+jwt', {}, true],
  ['jwt', 'at+jwt', {}, false],
  ['xapplication/at+jwt', 'at+jwt', {}, false],
  ['at+jwtapplication/', 'at+jwt', {}, false],
  ['at+jwt ', 'at+jwt', {}, false],
  [undefined, 'at+jwt', {}, false],
  [42, 'at+jwt', {}, false],
  ['dpop+jwt', 'dpop+jwt', { exact: true }, true],
  ['DPOP+JWT', 'dpop+jwt', { exact: true }, false],
  ['application/dpop+jwt', 'dpop+jwt', { exact: true }, false],
])('hasType(%j, %s, %j): %s', (typ, expected, options, result) => {
  expect(hasType(typ, expected, options)).toBe(result);
});

test.each([
  ['ES256', true],
  ['none', false],
  ['HS256', false],
  ['es256', false],
  [undefined, false],
])('isAllowedAlgorithm(%j)', (alg, allowed) => {
  expect(isAllowedAlgorithm(alg, ['ES256', 'RS256'] as const)).toBe(allowed);
});

const key = (fields: Partial<VerificationKey>): VerificationKey => ({
  kid: undefined,
  kty: 'EC',
  crv: 'P-256',
  alg: undefined,
  use: undefined,
  key: ec.publicKey,
  ...fields,
});

test.each([
  ['a P-256 key for ES256', 'ES256', undefined, key({}), true],
  ['another curve', 'ES256', undefined, key({ crv: 'P-384' }), false],
  ['an RSA key for ES256', 'ES256', undefined, key({ kty: 'RSA' }), false],
  ['an EC key for RS256', 'RS256', undefined, key({}), false],
  ['an RSA key for PS256', 'PS256', undefined, key({ kty: 'RSA' }), true],
  ['use enc', 'ES256', undefined, key({ use: 'enc' }), false],
  ['use sig', 'ES256', undefined, key({ use: 'sig' }), true],
  ['another alg', 'ES256', undefined, key({ alg: 'RS256' }), false],
  ['its alg', 'ES256', undefined, key({ alg: 'ES256' }), true],
  ['the named kid', 'ES256', 'a', key({ kid: 'a' }), true],
  ['another kid', 'ES256', 'a', key({ kid: 'b' }), false],
  ['no kid named: any', 'ES256', undefined, key({ kid: 'b' }), true],
])('keysFor: %s', (_name, alg, kid, candidate, fits) => {
  expect(keysFor(alg, kid, [candidate])).toEqual(fits ? [candidate] : []);
});

test('findKeys refetches once, only when nothing fits', async () => {
  const asked: boolean[] = [];
  const fitting = key({ kid: 'new' });
  const load = async (refetch: boolean) => {
    asked.push(refetch);
    return refetch ? [fitting] : [key({ kid: 'old' })];
  };
  expect(await findKeys('ES256', 'new', load)).toEqual([fitting]);
  expect(asked).toEqual([false, true]);
  asked.length = 0;
  expect(await findKeys('ES256', 'old', load)).toHaveLength(1);
  expect(asked).toEqual([false]);
  asked.length = 0;
  expect(await findKeys('ES256', 'gone', load)).toEqual([]);
  expect(asked).toEqual([false, true]);
});

describe('verifySignature', () => {
  const iat = Math.floor(NOW / 1000);
  test('the first key that verifies wins; the clock is the given one', () => {
    const token = sign({ iat, exp: iat + 60, iss: 'i', sub: 's', aud: 'a' });
    expect(
      verifySignature(token, [otherEc.publicKey, ec.publicKey], {
        alg: 'ES256',
        now: NOW,
        issuer: 'i',
        subject: 's',
        audience: 'a',
      }),
    ).toMatchObject({ iss: 'i' });
  });
  test.each([
    ['no key verifies', { iat, exp: iat + 60 }, {}, [otherEc.publicKey], /signature/],
    ['expired on the given clock', { iat: iat - 120, exp: iat - 60 }, {}, [ec.publicKey], /expired/],
    [
      'expired, within the tolerance',
      { iat: iat - 120, exp: iat - 10 },
      { clockTolerance: 30 },
      [ec.publicKey],
      null,
    ],
    ['another issuer', { iat, exp: iat + 60, iss: 'x' }, { issuer: 'i' }, [ec.publicKey], /issuer/],
    ['another subject', { iat, exp: iat + 60, sub: 'x' }, { subject: 's' }, [ec.publicKey], /subject/],
    ['another audience', { iat, exp: iat + 60, aud: 'x' }, { audience: 'a' }, [ec.publicKey], /audience/],
    ['no key at all', { iat, exp: iat + 60 }, {}, [], /no key/],
  ])('%s', (_name, claims, checks, keys, refusal) => {
    const call = () => verifySignature(sign(claims), keys, { alg: 'ES256', now: NOW, ...checks });
    if (refusal) expect(call).toThrow(refusal);
    else expect(call()).toMatchObject(claims);
  });
  test('an algorithm other than the one allowed is refused, even with the right key', () => {
    const rsa = rsaKeyPair('jwt-verify');
    const token = jwt.sign({ iat }, rsa.privateKey, { algorithm: 'RS256' });
    expect(() => verifySignature(token, [rsa.publicKey], { alg: 'ES256', now: NOW })).toThrow(/algorithm/);
  });
});

test.each([
  [new jwt.TokenExpiredError('jwt expired', new Date()), 'it has expired'],
  [new jwt.NotBeforeError('jwt not active', new Date()), 'it is not valid yet'],
  [new Error('jwt issuer invalid. expected: a'), 'ISS'],
  [new Error('jwt subject invalid. expected: a'), 'SUB'],
  [new Error('invalid signature'), 'SIG'],
  [new Error('x'.repeat(300)), 'x'.repeat(200)],
  ['a string', 'a string'],
])('describeRefusal(%s)', (error, words) => {
  expect(describeRefusal(error, { signature: 'SIG', issuer: 'ISS', subject: 'SUB' })).toBe(words);
});

test('describeRefusal without words for iss and sub reads the message', () => {
  expect(describeRefusal(new Error('jwt issuer invalid'), { signature: 'SIG' })).toBe('jwt issuer invalid');
  expect(describeRefusal(new Error('jwt subject invalid'), { signature: 'SIG' })).toBe('jwt subject invalid');
});

test.each([
  ['a string', 'a', 'a'],
  ['one value in an array', ['a'], 'a'],
  ['two values', ['a', 'b'], undefined],
  ['an empty array', [], undefined],
  ['a number', 1, undefined],
  ['an array of a number', [1], undefined],
  ['nothing', undefined, undefined],
])('singleAudience: %s', (_name, aud, audience) => {
  expect(singleAudience(aud)).toBe(audience);
});

test.each([
  ['a uuid', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', true],
  ['the longest kept', 'j'.repeat(MAX_JTI_LENGTH), true],
  ['one longer', 'j'.repeat(MAX_JTI_LENGTH + 1), false],
  ['empty', '', false],
  ['a NUL', 'a\u0000b', false],
  ['a DEL', 'a\u007fb', false],
  ['a number', 42, false],
  ['absent', undefined, false],
])('storableJti: %s', (_name, jti, kept) => {
  expect(storableJti(jti)).toBe(kept ? jti : undefined);
});

test('keepUntil: seconds plus the skew, as whole milliseconds rounded up', () => {
  expect(keepUntil(100, 30)).toBe(130_000);
  expect(keepUntil(100.0004, 0)).toBe(100_001);
});
