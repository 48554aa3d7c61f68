// verifyClientAssertion, rule by rule (RFC 7523 §3, RFC 8725 §3.1, draft-ietf-oauth-rfc7523bis-11 §4): each case is
// an assertion an attacker could present, and the rule that refuses it. The keys are given directly (no JWKS fetch),
// their JWKS fields apart from the key itself, so that each filter of the key selection is tested alone; the clock
// is frozen in 2020, so a check that read the real time instead would fail.
import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { rsaKeyPair } from '../../helpers/rsa-keys';
import jwt from 'jsonwebtoken';
import {
  assertionSubject,
  type AssertionChecks,
  verifyClientAssertion,
} from '../../../lib/clients/assertion';
import type { VerificationKey } from '../../../lib/jwt/verify';
import { OAuthError } from '../../../lib/errors';
import type { ClientRecord } from '../../../lib/store/types';

const CLIENT_ID = 'https://client.example/oauth/metadata.json';
const ISSUER = 'https://as.example';
const TOKEN_ENDPOINT = 'https://as.example/token';
// Half a second past a whole second: nowSeconds is rounded down.
const NOW = Date.UTC(2020, 0, 1, 12) + 500;
const NOW_S = Math.floor(NOW / 1000);

const rsa = rsaKeyPair('assertion-client');
const otherRsa = rsaKeyPair('assertion-other');
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });

const client = { clientId: CLIENT_ID } as ClientRecord;

const rsaKey = (fields: Partial<VerificationKey> = {}): VerificationKey => ({
  kid: 'rsa-1',
  kty: 'RSA',
  crv: undefined,
  alg: undefined,
  use: undefined,
  key: rsa.publicKey,
  ...fields,
});
const ecKey = (fields: Partial<VerificationKey> = {}): VerificationKey => ({
  kid: 'ec-1',
  kty: 'EC',
  crv: 'P-256',
  alg: undefined,
  use: undefined,
  key: ec.publicKey,
  ...fields,
});

interface SignOptions {
  alg?: 'RS256' | 'PS256' | 'ES256';
  key?: KeyObject;
  /** null: no kid in the header. */
  kid?: string | null;
  claims?: Record<string, unknown>;
}

let counter = 0;
function sign({ alg = 'RS256', key, kid = 'rsa-1', claims = {} }: SignOptions = {}): string {
  const payload: Record<string, unknown> = {
    iss: CLIENT_ID,
    sub: CLIENT_ID,
    aud: ISSUER,
    iat: NOW_S,
    exp: NOW_S + 60,
    jti: `jti-${(counter += 1)}`,
    ...claims,
  };
  for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
  const signingKey = key ?? (alg === 'ES256' ? ec.privateKey : rsa.privateKey);
  return jwt.sign(payload, signingKey, { algorithm: alg, ...(kid === null ? {} : { keyid: kid }) });
}

/** An RS256 JWT signed with the client's key without jsonwebtoken's checks of the claims (an exp that is text). */
function signRaw(payload: Record<string, unknown>): string {
  const body = forge({ alg: 'RS256', typ: 'JWT', kid: 'rsa-1' }, payload).slice(0, -1);
  return `${body}.${createSign('RSA-SHA256').update(body).sign(rsa.privateKey, 'base64url')}`;
}

/** A JWT put together by hand: any header, any payload (a string too), any signature. */
function forge(header: Record<string, unknown>, payload: unknown, signature = ''): string {
  const encode = (value: unknown) =>
    Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
  return `${encode(header)}.${encode(payload)}.${signature}`;
}

interface Harness {
  checks: AssertionChecks;
  keyCalls: boolean[];
  used: [string, string, number][];
}

function harness(
  keys: VerificationKey[] | ((refetch: boolean) => VerificationKey[]),
  { fresh = true }: { fresh?: boolean } = {},
): Harness {
  const keyCalls: boolean[] = [];
  const used: [string, string, number][] = [];
  const checks: AssertionChecks = {
    keys: async (refetch) => {
      keyCalls.push(refetch);
      return typeof keys === 'function' ? keys(refetch) : keys;
    },
    audiences: [ISSUER, `${ISSUER}/`, TOKEN_ENDPOINT],
    now: () => NOW,
    useAssertionId: (clientId, jti, expiresAt) => {
      used.push([clientId, jti, expiresAt]);
      return fresh;
    },
  };
  return { checks, keyCalls, used };
}

async function refusal(assertion: string, h: Harness = harness([rsaKey(), ecKey()])): Promise<OAuthError> {
  const error = await verifyClientAssertion(assertion, client, h.checks).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OAuthError);
  expect((error as OAuthError).code).toBe('invalid_client');
  return error as OAuthError;
}

describe('what is accepted', () => {
  test.each([
    ['RS256 with an RSA key', () => sign({ alg: 'RS256' }), undefined],
    ['PS256 with an RSA key', () => sign({ alg: 'PS256' }), undefined],
    ['ES256 with a P-256 key', () => sign({ alg: 'ES256', kid: 'ec-1' }), undefined],
    ['aud the issuer with its trailing slash', () => sign({ claims: { aud: `${ISSUER}/` } }), undefined],
    ['aud the token endpoint', () => sign({ claims: { aud: TOKEN_ENDPOINT } }), undefined],
    ['aud an array of one value, ours', () => sign({ claims: { aud: [ISSUER] } }), undefined],
    ['exp exactly at the longest lifetime (360 s)', () => sign({ claims: { exp: NOW_S + 360 } }), undefined],
    ['exp 29 s ago (within the clock tolerance)', () => sign({ claims: { exp: NOW_S - 29 } }), undefined],
    ['nbf 29 s ahead (within the clock tolerance)', () => sign({ claims: { nbf: NOW_S + 29 } }), undefined],
    ['a jti of 256 characters', () => sign({ claims: { jti: 'j'.repeat(256) } }), undefined],
    ['no kid, any key of the type', () => sign({ kid: null }), undefined],
    ['a key marked use "sig" and alg RS256', () => sign(), [rsaKey({ use: 'sig', alg: 'RS256' })]],
  ] as [string, () => string, VerificationKey[] | undefined][])('%s', async (_name, make, keys) => {
    const h = harness(keys ?? [ecKey(), rsaKey()]);
    await expect(verifyClientAssertion(make(), client, h.checks)).resolves.toBeUndefined();
  });

  test('the jti is used once, until exp plus the clock tolerance, for this client', async () => {
    const h = harness([rsaKey()]);
    await verifyClientAssertion(sign({ claims: { jti: 'the-jti', exp: NOW_S + 100 } }), client, h.checks);
    expect(h.used).toEqual([[CLIENT_ID, 'the-jti', (NOW_S + 100 + 30) * 1000]]);
  });

  test('an exp with a fraction (RFC 7519 §2) is kept until a whole millisecond: stores keep integers', async () => {
    const h = harness([rsaKey()]);
    await verifyClientAssertion(sign({ claims: { jti: 'j', exp: NOW_S + 100.0004 } }), client, h.checks);
    expect(h.used).toEqual([[CLIENT_ID, 'j', (NOW_S + 130) * 1000 + 1]]);
  });

  test('the keys are read once, from the cache, when one fits', async () => {
    const h = harness([rsaKey()]);
    await verifyClientAssertion(sign(), client, h.checks);
    expect(h.keyCalls).toEqual([false]);
  });

  test('a key rotated by the client (unknown kid) is found by asking its JWKS again', async () => {
    const h = harness((refetch) => (refetch ? [rsaKey({ kid: 'rsa-2' })] : [rsaKey()]));
    await verifyClientAssertion(sign({ kid: 'rsa-2' }), client, h.checks);
    expect(h.keyCalls).toEqual([false, true]);
  });

  test('of two keys without kid, the second one that verifies is tried after the first that does not', async () => {
    const h = harness([rsaKey({ kid: undefined, key: otherRsa.publicKey }), rsaKey({ kid: undefined })]);
    await expect(verifyClientAssertion(sign({ kid: null }), client, h.checks)).resolves.toBeUndefined();
  });
});

describe('algorithm confusion (RFC 8725 §3.1)', () => {
  const claims = { iss: CLIENT_ID, sub: CLIENT_ID, aud: ISSUER, exp: NOW_S + 60, jti: 'forged' };
  test.each([
    ['alg none, unsigned', { alg: 'none', kid: 'rsa-1' }, 'none'],
    ['HS256, the public key as a shared secret', { alg: 'HS256', kid: 'rsa-1' }, 'HS256'],
    ['RS512, not offered', { alg: 'RS512', kid: 'rsa-1' }, 'RS512'],
    ['no alg at all', { kid: 'rsa-1' }, 'undefined'],
    ['a huge alg, echoed cut to 20 characters', { alg: 'A'.repeat(500) }, 'A'.repeat(20)],
  ])('%s is refused before any key is read', async (_name, header, echoed) => {
    const h = harness([rsaKey()]);
    const error = await refusal(forge(header, claims, 'c2ln'), h);
    expect(error.description).toBe(`The client assertion is signed with ${echoed}; use RS256, PS256, ES256.`);
    expect(h.keyCalls).toEqual([]);
  });

  test.each([
    ['not a JWT at all', 'garbage'],
    ['a JWS whose payload is not JSON', forge({ alg: 'RS256', kid: 'rsa-1' }, 'just text', 'c2ln')],
  ])('%s is refused as not a JWT', async (_name, assertion) => {
    expect((await refusal(assertion)).description).toBe('The client assertion is not a JWT.');
  });
});

describe('key selection: a key the client marked for another use, algorithm or type never verifies', () => {
  test.each([
    [
      'a key marked use "enc"',
      () => sign(),
      [rsaKey({ use: 'enc' })],
      'The client has no RS256 key with kid "rsa-1".',
    ],
    [
      'a key marked alg PS256, for RS256',
      () => sign(),
      [rsaKey({ alg: 'PS256' })],
      'The client has no RS256 key with kid "rsa-1".',
    ],
    [
      'a key with another kid',
      () => sign(),
      [rsaKey({ kid: 'rsa-2' })],
      'The client has no RS256 key with kid "rsa-1".',
    ],
    [
      'an RSA key listed as kty EC, for RS256',
      () => sign(),
      [rsaKey({ kty: 'EC' })],
      'The client has no RS256 key with kid "rsa-1".',
    ],
    [
      'a P-256 key listed as crv P-384, for ES256',
      () => sign({ alg: 'ES256', kid: 'ec-1' }),
      [ecKey({ crv: 'P-384' })],
      'The client has no ES256 key with kid "ec-1".',
    ],
    [
      'a P-256 key listed as kty OKP, for ES256',
      () => sign({ alg: 'ES256', kid: 'ec-1' }),
      [ecKey({ kty: 'OKP' })],
      'The client has no ES256 key with kid "ec-1".',
    ],
    [
      'an EC key listed as kty RSA, for ES256',
      () => sign({ alg: 'ES256', kid: 'ec-1' }),
      [ecKey({ kty: 'RSA' })],
      'The client has no ES256 key with kid "ec-1".',
    ],
    [
      'no kid and no key of the type',
      () => sign({ kid: null }),
      [ecKey()],
      "None of the client's keys can verify an RS256 signature.",
    ],
    [
      'a huge kid, echoed cut to 100 characters',
      () => sign({ kid: 'k'.repeat(300) }),
      [rsaKey()],
      `The client has no RS256 key with kid "${'k'.repeat(100)}".`,
    ],
  ] as [string, () => string, VerificationKey[], string][])('%s', async (_name, make, keys, description) => {
    const h = harness(keys);
    const error = await refusal(make(), h);
    expect(error.description).toBe(description);
    // Refused only after asking the client's JWKS again, once.
    expect(h.keyCalls).toEqual([false, true]);
  });
});

describe('forged or misdirected claims', () => {
  test.each([
    [
      'signed by a key the client does not have',
      () => sign({ key: otherRsa.privateKey }),
      'its signature does not match any of the client keys',
    ],
    [
      'iss another client (a client impersonating another)',
      () => sign({ claims: { iss: 'https://evil.example/c' } }),
      'its iss must be the client_id',
    ],
    [
      'sub another client',
      () => sign({ claims: { sub: 'https://evil.example/c' } }),
      'its sub must be the client_id',
    ],
    [
      'expired 30 s ago (past the clock tolerance)',
      () => sign({ claims: { exp: NOW_S - 30 } }),
      'it has expired',
    ],
    [
      'nbf 31 s ahead (past the clock tolerance)',
      () => sign({ claims: { nbf: NOW_S + 31 } }),
      'it is not valid yet',
    ],
    [
      'exp not a number',
      () => signRaw({ iss: CLIENT_ID, sub: CLIENT_ID, aud: ISSUER, exp: 'later', jti: 'x' }),
      'invalid exp value',
    ],
  ])('an assertion %s is refused', async (_name, make, reason) => {
    const error = await refusal(make());
    expect(error.description).toBe(`The client assertion was refused: ${reason}.`);
    expect(error.cause).toBeInstanceOf(Error);
  });

  const AUD_REFUSED = `The client assertion was refused: its aud must be the issuer, "${ISSUER}", as its only value.`;
  test.each([
    ['another server (audience injection)', 'https://other.example/token'],
    ['two values, both ours (any listed server would accept it)', [ISSUER, TOKEN_ENDPOINT]],
    ['the same value twice', [ISSUER, ISSUER]],
    ['an empty array', []],
    ['absent', undefined],
    ['a number', 42],
    ['an array of one foreign value', ['https://other.example']],
  ])('aud %s is refused', async (_name, aud) => {
    const error = await refusal(sign({ claims: { aud } }));
    expect(error.description).toBe(AUD_REFUSED);
    expect(error.cause).toBeUndefined();
  });

  test.each([
    [
      'without exp (a credential that never expires)',
      { exp: undefined },
      'The client assertion has no exp claim.',
    ],
    [
      'living 361 s (longer than one request needs)',
      { exp: NOW_S + 361 },
      'The client assertion lives too long: its exp must be within 360 seconds.',
    ],
  ])('an assertion %s is refused', async (_name, claims, description) => {
    expect((await refusal(sign({ claims }))).description).toBe(description);
  });

  test.each([
    ['absent', undefined],
    ['empty', ''],
    ['a number', 7],
    ['257 characters long', 'j'.repeat(257)],
    // Kept in the store, which may refuse it (PostgreSQL refuses NUL): a 500 otherwise.
    ['with a NUL', 'a\u0000b'],
    ['with a line break', 'a\nb'],
  ])('a jti %s is refused (replay could not be told apart)', async (_name, jti) => {
    const h = harness([rsaKey()]);
    const error = await refusal(sign({ claims: { jti } }), h);
    expect(error.description).toBe('The client assertion needs a jti claim: a unique id for each assertion.');
    expect(h.used).toEqual([]);
  });

  test('a replayed assertion (its jti already used) is refused', async () => {
    const h = harness([rsaKey()], { fresh: false });
    const error = await refusal(sign(), h);
    expect(error.description).toBe(
      'The client assertion was already used; make a new one, with a new jti, for every request.',
    );
  });
});

describe('assertionSubject', () => {
  test.each([
    ['a JWT with a sub', sign(), CLIENT_ID],
    ['not a JWT', 'garbage', undefined],
    ['a sub that is not a string', forge({ alg: 'RS256' }, { sub: 42 }), undefined],
    ['no sub', forge({ alg: 'RS256' }, { iss: CLIENT_ID }), undefined],
    // A payload that is not JSON, or JSON that is not an object: no subject (invalid_client), never a throw (a 500).
    ['a payload that is not JSON', forge({ alg: 'RS256' }, '{"sub":'), undefined],
    ['a payload that is a JSON string', forge({ alg: 'RS256' }, JSON.stringify('sub')), undefined],
    ['a payload that is null', forge({ alg: 'RS256' }, 'null'), undefined],
  ])('%s', (_name, assertion, subject) => {
    expect(assertionSubject(assertion)).toBe(subject);
  });
});
