// emailKey: the one form in which addresses are compared, computed in code so that SQLite and PostgreSQL (whose lower()
// folds Unicode by locale) match the same account. Each refusal is an address that would otherwise be compared as
// another one.
import { emailDomain, emailKey } from '../../../lib/util/email';

test.each([
  ['plain', 'bob@example.com', 'bob@example.com'],
  ['any case, whole address (as sign-in always matched)', 'Bob.Smith@Example.COM', 'bob.smith@example.com'],
  [
    'non-ASCII in NFC, lower-cased by Unicode’s default mapping',
    'Ärger@Bücher.example',
    'ärger@bücher.example',
  ],
  [
    'a dotted capital I becomes i and a combining dot, in every locale',
    '\u0130nci@example.com',
    'i\u0307nci@example.com',
  ],
  ['254 characters, the most an address may have', `${'a'.repeat(64)}@${'b'.repeat(185)}.com`, undefined],
])('%s', (_name, email, key) => {
  expect(emailKey(email)).toBe(key ?? email.toLowerCase());
});

test.each([
  ['the Kelvin sign (U+212A), which NFKC and PostgreSQL turn into K', '\u212aelvin@example.com'],
  ['the Angstrom sign (U+212B), another letter’s twin', '\u212bngstrom@example.com'],
  ['a fullwidth letter', '\uff42ob@example.com'],
  ['a long s (U+017F), which folds to s', 'bo\u017f@example.com'],
  ['a ligature', '\ufb01nance@example.com'],
  ['a decomposed é (NFC would compose it: another string for the same name)', 'rene\u0301@example.com'],
  ['a superscript digit', 'bob\u00b2@example.com'],
  ['a NUL', 'bob@example.com\u0000'],
  ['a C1 control', 'bob\u0085@example.com'],
  ['DEL', 'bob\u007f@example.com'],
  ['a space', 'bob smith@example.com'],
  ['a no-break space', 'bob\u00a0@example.com'],
  ['two @', 'bob@evil@example.com'],
  ['no @', 'bob.example.com'],
  ['no dot after @', 'bob@localhost'],
  ['nothing before @', '@example.com'],
  ['255 characters', `${'a'.repeat(64)}@${'b'.repeat(186)}.com`],
  ['not a string', ['bob@example.com']],
  ['undefined', undefined],
  ['a number', 42],
])('no key: %s', (_name, email) => {
  expect(emailKey(email)).toBeUndefined();
  expect(emailDomain(email)).toBeUndefined();
});

test('the domain is what follows the @, in the key’s form', () => {
  expect(emailDomain('Bob@Mail.Example.COM')).toBe('mail.example.com');
});
