// The act claim (RFC 8693 §4.1) as this server reads it: a chain of actors, each a non-empty string sub and nothing
// else, at most MAX_ACT_DEPTH deep. A token whose act cannot be read is refused, never taken for one without an actor.
import { actDepth, isActClaim, MAX_ACT_DEPTH } from '../../../lib/crypto/act';
import { createJwtSigner } from '../../../lib/crypto/signer';
import { OAuthError } from '../../../lib/errors';

const chain = (depth: number): object | undefined =>
  depth === 0 ? undefined : { sub: `actor-${depth}`, ...(depth > 1 ? { act: chain(depth - 1) } : {}) };

test.each([
  ['one actor', { sub: 'a' }, 1, true],
  ['a chain of the most actors', chain(MAX_ACT_DEPTH), MAX_ACT_DEPTH, true],
  ['a chain one too deep', chain(MAX_ACT_DEPTH + 1), MAX_ACT_DEPTH, false],
  ['a chain deeper than asked', chain(2), 1, false],
  ['no depth left at all', { sub: 'a' }, 0, false],
  ['a string', 'a', 5, false],
  ['null', null, 5, false],
  ['a list', [{ sub: 'a' }], 5, false],
  ['no sub', { act: { sub: 'a' } }, 5, false],
  ['an empty sub', { sub: '' }, 5, false],
  ['a sub that is no string', { sub: 7 }, 5, false],
  ['another member (iss)', { sub: 'a', iss: 'https://as.example' }, 5, false],
  ['a nested actor that cannot be read', { sub: 'a', act: { sub: 'b', extra: 1 } }, 5, false],
  ['a nested actor that is no object', { sub: 'a', act: 'b' }, 5, false],
])('%s: %p', (_name, value, depth, expected) => {
  expect(isActClaim(value, depth)).toBe(expected);
});

test('actDepth counts the actors', () => {
  expect(actDepth(undefined)).toBe(0);
  expect(actDepth({ sub: 'a' })).toBe(1);
  expect(actDepth(chain(4) as never)).toBe(4);
});

describe('the signer', () => {
  const signer = createJwtSigner();
  const sign = (act: unknown) =>
    signer.signAccessToken({
      issuer: 'https://as.example',
      subject: 'user',
      audience: 'https://api.example',
      clientId: 'client',
      scope: 'a',
      grantId: 'grant',
      expiresIn: 60,
      act: act as never,
    }).token;
  const verify = (token: string) =>
    signer.verifyAccessToken(token, { issuer: 'https://as.example', audience: 'https://api.example' });

  test('writes act and reads it back', () => {
    expect(verify(sign({ sub: 'gateway', act: { sub: 'tool' } })).act).toEqual({
      sub: 'gateway',
      act: { sub: 'tool' },
    });
    expect(verify(sign(undefined))).not.toHaveProperty('act');
  });

  test.each([
    ['an act of another shape', { actor: 'x' }],
    ['an act chain too deep', chain(MAX_ACT_DEPTH + 1)],
    ['an act that is a string', 'gateway'],
  ])('refuses a token with %s: invalid_token', (_name, act) => {
    let error: unknown;
    try {
      verify(sign(act));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({
      code: 'invalid_token',
      description: 'The access token has an act claim this server cannot read.',
    });
  });
});
