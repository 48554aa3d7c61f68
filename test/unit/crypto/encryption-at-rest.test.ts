// Sealed secrets at rest (AES-256-GCM): the library's sealer (signing keys, kept upstream tokens) and the reference
// app's (its secrets table). Security round four: a value whose tag was cut to 4 bytes opened, since Node's decipher
// takes any tag of 4 to 16 bytes unless told the length; a tag of 2^32 guesses is no tag. Only the full 16 opens.
import { randomBytes } from 'node:crypto';
import { createSecretSealer } from '../../../example-app/db/secret-key';
import { createKeySealer } from '../../../lib/crypto/encryption-at-rest';

const KEY = randomBytes(32);
const PEM = '-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n';

/** Each sealer, with how its sealed form splits into IV, tag and ciphertext. */
const sealers = [
  {
    name: 'the library’s (signing keys, upstream tokens)',
    sealer: createKeySealer(KEY),
    prefix: 'v1.',
    separator: '.',
  },
  {
    name: 'the reference app’s (its secrets table)',
    sealer: createSecretSealer(KEY),
    prefix: 'enc:v1:',
    separator: ':',
  },
];

describe.each(sealers)('$name', ({ sealer, prefix, separator }) => {
  const sealed = sealer.seal('kid-1', PEM);
  const parts = () =>
    sealed
      .slice(prefix.length)
      .split(separator)
      .map((part) => Buffer.from(part, 'base64url'));
  const rebuilt = (iv: Buffer, tag: Buffer, data: Buffer) =>
    prefix + [iv, tag, data].map((part) => part.toString('base64url')).join(separator);

  test('the intact value opens, only under its own name', () => {
    expect(sealed.startsWith(prefix)).toBe(true);
    expect(sealer.open('kid-1', sealed)).toBe(PEM);
    expect(() => sealer.open('kid-2', sealed)).toThrow();
  });

  test.each([4, 8, 12, 15])('a tag cut to %i bytes does not open (the attack: 4 bytes opened)', (length) => {
    const [iv, tag, data] = parts() as [Buffer, Buffer, Buffer];
    expect(tag).toHaveLength(16);
    expect(() => sealer.open('kid-1', rebuilt(iv, tag.subarray(0, length), data))).toThrow();
  });

  test('a tag of 17 bytes, an IV of 16, or a flipped bit of the ciphertext does not open', () => {
    const [iv, tag, data] = parts() as [Buffer, Buffer, Buffer];
    expect(() => sealer.open('kid-1', rebuilt(iv, Buffer.concat([tag, Buffer.alloc(1)]), data))).toThrow();
    expect(() => sealer.open('kid-1', rebuilt(Buffer.concat([iv, Buffer.alloc(4)]), tag, data))).toThrow();
    const flipped = Buffer.from(data);
    flipped[0]! ^= 1;
    expect(() => sealer.open('kid-1', rebuilt(iv, tag, flipped))).toThrow();
  });
});

describe('the library’s sealer: what a sealed value is bound to, and what its refusals say', () => {
  const sealer = createKeySealer(KEY, 'upstream tokens', 'the router secret');
  const sealed = sealer.seal('okta alice', PEM);

  test.each([
    ['another purpose', createKeySealer(KEY, 'signing key', 'the router secret')],
    ['another key', createKeySealer(randomBytes(32), 'upstream tokens', 'the router secret')],
  ])('it does not open under %s', (_name, other) => {
    expect(() => other.open('okta alice', sealed)).toThrow(
      / okta alice cannot be opened: the router secret differs from the one that sealed it, or the row was altered\.$/,
    );
  });

  test.each(['plain text', 'v1.only.two', `v1.${sealed.slice(3)}.extra`])(
    '%s is not a sealed value',
    (value) => {
      expect(() => sealer.open('okta alice', value)).toThrow(
        'upstream tokens okta alice: not a sealed value.',
      );
    },
  );

  test('the default purpose is the key set’s, whose rows were sealed before the option existed', () => {
    const old = createKeySealer(KEY, 'signing key').seal('kid-7', PEM);
    expect(createKeySealer(KEY).open('kid-7', old)).toBe(PEM);
    expect(() => createKeySealer(KEY, '').open('kid-7', old)).toThrow(/kid-7 cannot be opened/);
  });

  test('the sealed form: v1., then IV, tag and ciphertext in base64url', () => {
    const parts = sealed.slice('v1.'.length).split('.');
    expect(parts.map((part) => Buffer.from(part, 'base64url').length)).toEqual([12, 16, PEM.length]);
  });
});
