// PKCE syntax rules (RFC 7636 §4.1, §4.2) against the inputs an attacker controls: only a string of the exact
// syntax is a verifier or a challenge, whatever a body parser makes of repeated or nested parameters.
import {
  isValidCodeChallenge,
  isValidCodeVerifier,
  verifyS256,
  s256Challenge,
} from '../../../lib/crypto/pkce';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

/** Values that are not strings but read as a valid one once coerced (`String(value)`). */
const coercedTo = (text: string): Array<[string, unknown]> => [
  ['an array of one (a repeated or bracketed parameter)', [text]],
  ['an object with a toString', { toString: () => text }],
];

describe('a code_verifier smuggled in as a non-string is refused', () => {
  test.each(coercedTo(VERIFIER))('%s', (_name, value) => {
    expect(String(value)).toBe(VERIFIER);
    expect(isValidCodeVerifier(value)).toBe(false);
  });
});

describe('a code_challenge smuggled in as a non-string is refused', () => {
  test.each(coercedTo(CHALLENGE))('%s', (_name, value) => {
    expect(String(value)).toBe(CHALLENGE);
    expect(isValidCodeChallenge(value)).toBe(false);
  });
});

describe('a challenge with characters outside base64url anywhere is refused (not only at the end)', () => {
  test.each([
    ['a leading "."', `.${CHALLENGE}`],
    ['a leading space', ` ${CHALLENGE}`],
    ['a leading "+" (base64, not base64url)', `+${CHALLENGE}`],
    ['a "/" in the middle', `${CHALLENGE.slice(0, 20)}/${CHALLENGE.slice(20)}`],
    ['a trailing newline', `${CHALLENGE}\n`],
  ])('%s', (_name, value) => {
    expect(isValidCodeChallenge(value)).toBe(false);
  });
});

describe('a verifier with characters outside the unreserved set anywhere is refused', () => {
  test.each([
    ['a leading "+"', `+${VERIFIER}`],
    ['a leading space', ` ${VERIFIER}`],
    ['a "=" in the middle', `${VERIFIER.slice(0, 20)}=${VERIFIER.slice(20)}`],
    ['a trailing newline', `${VERIFIER}\n`],
  ])('%s', (_name, value) => {
    expect(isValidCodeVerifier(value)).toBe(false);
    expect(verifyS256(value, s256Challenge(value))).toBe(false);
  });
});
