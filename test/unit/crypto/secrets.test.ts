// Random values, hashing, constant-time comparison and PKCE.
import { createHash } from 'node:crypto';
import {
  constantTimeEqual,
  hashSecret,
  randomSecret,
  secretMatchesHash,
  sha256,
} from '../../../lib/crypto/secrets';
import {
  isValidCodeChallenge,
  isValidCodeVerifier,
  s256Challenge,
  verifyS256,
} from '../../../lib/crypto/pkce';

describe('secrets', () => {
  test('random secrets carry at least 256 bits and never repeat', () => {
    const values = new Set(Array.from({ length: 1000 }, () => randomSecret()));
    expect(values.size).toBe(1000);
    for (const value of values) expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(randomSecret(48)).toHaveLength(64);
    expect(() => randomSecret(16)).toThrow(/at least 32 bytes/);
  });

  test('sha256 is the standard digest, base64url-encoded', () => {
    expect(sha256('abc')).toBe(createHash('sha256').update('abc').digest('base64url'));
    expect(hashSecret('abc')).toBe(sha256('abc'));
  });

  test.each([
    ['equal', 'abc', 'abc', true],
    ['different', 'abc', 'abd', false],
    ['different lengths', 'abc', 'abcd', false],
    ['empty', '', '', true],
  ])('constantTimeEqual: %s', (_name, a, b, equal) => {
    expect(constantTimeEqual(a, b)).toBe(equal);
  });

  test('a secret matches only its own hash', () => {
    const secret = randomSecret();
    expect(secretMatchesHash(secret, hashSecret(secret))).toBe(true);
    expect(secretMatchesHash(randomSecret(), hashSecret(secret))).toBe(false);
  });
});

describe('PKCE (RFC 7636)', () => {
  // Appendix B of RFC 7636.
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

  test('the S256 transform matches the RFC 7636 appendix B example', () => {
    expect(s256Challenge(verifier)).toBe(challenge);
    expect(verifyS256(verifier, challenge)).toBe(true);
    expect(verifyS256(verifier.replace('d', 'e'), challenge)).toBe(false);
  });

  test.each([
    ['42 characters (too short)', 'a'.repeat(42), false],
    ['43 characters', 'a'.repeat(43), true],
    ['128 characters', 'a'.repeat(128), true],
    ['129 characters (too long)', 'a'.repeat(129), false],
    ['unreserved punctuation', `${'a'.repeat(40)}-._~`, true],
    ['a forbidden character', `${'a'.repeat(42)}+`, false],
    ['not a string', 42, false],
  ])('code_verifier with %s', (_name, value, valid) => {
    expect(isValidCodeVerifier(value)).toBe(valid);
  });

  test('a verifier of the wrong syntax never verifies, even against its own hash', () => {
    const short = 'a'.repeat(42);
    expect(verifyS256(short, s256Challenge(short))).toBe(false);
  });

  test.each([
    ['a real S256 challenge', challenge, true],
    ['42 characters', 'a'.repeat(42), false],
    ['padding', `${challenge}=`, false],
    ['a "." (not base64url)', `${challenge.slice(0, 42)}.`, false],
    ['null', null, false],
  ])('code_challenge: %s', (_name, value, valid) => {
    expect(isValidCodeChallenge(value)).toBe(valid);
  });
});
