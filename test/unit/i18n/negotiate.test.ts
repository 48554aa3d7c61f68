// Accept-Language (RFC 9110 §12.5.4) against the languages served: weights, order, primary subtags (RFC 4647 §3.4),
// "*", and headers that are garbage or absurdly long.
import { negotiateLanguage } from '../../../lib/i18n/negotiate';

const SERVED = ['en', 'hr', 'pt-BR'];

test.each<[string | undefined, string]>([
  [undefined, 'en'],
  ['', 'en'],
  ['hr', 'hr'],
  ['HR', 'hr'],
  ['hr-HR,hr;q=0.9,en;q=0.8', 'hr'],
  ['de-DE,de;q=0.9,hr;q=0.5', 'hr'],
  ['de,en;q=0.5,hr;q=0.7', 'hr'],
  // Equal weights keep the browser's order.
  ['fr, en, hr', 'en'],
  ['en;q=0.1, hr;q=0.2', 'hr'],
  // q=0 means "not this one".
  ['hr;q=0, en;q=0.1', 'en'],
  ['hr;q=0', 'en'],
  // A primary subtag finds a served tag with a region, and the other way round.
  ['pt', 'pt-BR'],
  ['pt-PT', 'pt-BR'],
  ['pt-br', 'pt-BR'],
  ['*', 'en'],
  ['de, *;q=0.5, hr;q=0.1', 'en'],
  ['zz', 'en'],
  [';;;,,,q=1', 'en'],
  ['hr;q=abc', 'hr'],
  // A weight is read only when the whole parameter is one (RFC 9110 §12.4.2): anything else leaves the default, 1.
  ['en;xq=0.1, hr;q=0.5', 'en'],
  ['en;qx=0.1, hr;q=0.5', 'en'],
  ['en;q=0.1x, hr;q=0.5', 'en'],
  ['en;q=0.5 , hr;q=0.9', 'hr'],
  ['en;q=0.25, hr;q=0.3', 'hr'],
  ['hr ;q=0.9, en;q=0.5', 'hr'],
  [' hr;q=0.9 , en;q=0.5', 'hr'],
  ['hr, en', 'hr'],
  // A qvalue is at most 1 (RFC 9110 §12.4.2): "1.5" is no weight, so it cannot outrank the browser's first choice.
  ['hr, en;q=1.5', 'hr'],
  ['en;q=1.000, hr', 'en'],
  ['en, hr', 'en'],
  ['hr;q=2', 'hr'],
])('%p → %s', (header, expected) => {
  expect(negotiateLanguage(header, SERVED, 'en')).toBe(expected);
});

test('only the first 20 entries are read', () => {
  const header = [...Array.from({ length: 20 }, (_, i) => `x${i}`), 'hr'].join(',');
  expect(negotiateLanguage(header, SERVED, 'en')).toBe('en');
  expect(negotiateLanguage(`${'de,'.repeat(19)}hr`, SERVED, 'en')).toBe('hr');
});

test('a header of a megabyte is answered at once', () => {
  const started = process.hrtime.bigint();
  expect(negotiateLanguage(`${'a'.repeat(1_000_000)},hr`, SERVED, 'en')).toBe('hr');
  expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(200);
});

test('an exact match wins over a regional form of the same language', () => {
  expect(negotiateLanguage('pt-PT', ['en', 'pt-BR', 'pt-PT'], 'en')).toBe('pt-PT');
});
