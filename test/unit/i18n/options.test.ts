// The pages option: languages merged over English, a forced language, brand settings; every mistake fails at start
// with a message that says what to change.
import { ENGLISH_MESSAGES } from '../../../lib/i18n/messages';
import { parsePageOptions, type PageOptions } from '../../../lib/i18n/options';

const fail = (message: string): never => {
  throw new TypeError(message);
};

test('English alone by default; a catalogue fills in over English', () => {
  expect([...parsePageOptions(undefined, fail).languages.keys()]).toEqual(['en']);
  const config = parsePageOptions(
    { languages: { hr: { messages: { 'consent.allow': 'Dopusti' }, scopes: { 'notes:read': 'Čitati' } } } },
    fail,
  );
  const hr = config.languages.get('hr')!;
  expect(hr.messages['consent.allow']).toBe('Dopusti');
  expect(hr.messages['consent.deny']).toBe(ENGLISH_MESSAGES['consent.deny']);
  expect(hr.scopes).toEqual({ 'notes:read': 'Čitati' });
  expect(config.forced).toBeUndefined();
});

test('English itself can be reworded, and a forced language must be served', () => {
  const config = parsePageOptions(
    { languages: { EN: { messages: { 'consent.allow': 'OK' } } }, language: 'en' },
    fail,
  );
  expect([...config.languages.keys()]).toEqual(['en']);
  expect(config.languages.get('en')!.messages['consent.allow']).toBe('OK');
  expect(config.forced).toBe('en');
});

test.each<[string, unknown, RegExp]>([
  ['not an object', 'hr', /pages must be an object/],
  ['languages an array', { languages: [] }, /pages.languages must map language tags/],
  ['languages a string', { languages: 'de' }, /pages.languages must map language tags/],
  ['scopes a string', { languages: { hr: { scopes: 'abc' } } }, /scopes must be an object/],
  ['a logo after a javascript: URL', { logoUrl: 'javascript:alert(1)//https://x.example' }, /logoUrl/],
  ['a data URL with no image in it', { logoUrl: 'data:image/png' }, /logoUrl/],
  ['an accent colour after a rule', { accentColor: 'red; } body { display: none } #fff' }, /accentColor/],
  ['a tag that is not one', { languages: { hr_HR: {} } }, /"hr_HR" is not a language tag/],
  ['a catalogue that is not one', { languages: { hr: 'Dopusti' } }, /pages.languages.hr must be a catalogue/],
  [
    'a misspelt key',
    { languages: { hr: { messages: { 'consent.alow': 'x' } } } },
    /no message "consent.alow"/,
  ],
  [
    'an empty message',
    { languages: { hr: { messages: { 'consent.allow': ' ' } } } },
    /must be a non-empty string/,
  ],
  ['a scope text that is no string', { languages: { hr: { scopes: { a: 1 } } } }, /scopes\["a"\] must be/],
  ['errors an array', { languages: { hr: { errors: [] } } }, /errors must be an object/],
  [
    'a forced language not served',
    { language: 'de', languages: { hr: {} } },
    /"de" is not served; use one of en, hr\./,
  ],
  ['a logo over http', { logoUrl: 'http://cdn.example/logo.png' }, /logoUrl must be an https URL/],
  ['a logo as a javascript: URL', { logoUrl: 'javascript:alert(1)' }, /logoUrl/],
  ['a data URL that is no image', { logoUrl: 'data:text/html,<b>x</b>' }, /logoUrl/],
  ['an accent colour by name', { accentColor: 'red' }, /accentColor must be a colour/],
  ['an accent colour that closes the rule', { accentColor: '#fff; } body { display: none' }, /accentColor/],
])('refused at start: %s', (_name, options, message) => {
  expect(() => parsePageOptions(options as PageOptions, fail)).toThrow(message);
});

test.each([['https://cdn.example/logo.svg'], ['data:image/png;base64,iVBORw0KGgo=']])(
  'a logo: %s',
  (logoUrl) => {
    expect(parsePageOptions({ logoUrl, accentColor: '#0b57d0' }, fail)).toMatchObject({
      logoUrl,
      accentColor: '#0b57d0',
    });
  },
);

test.each([['pt-BR'], ['zh-Hant-TW'], ['de-CH-1996']])('a language tag with subtags: %s', (tag) => {
  const config = parsePageOptions({ languages: { [tag]: {} } }, fail);
  expect(config.languages.get(tag)!.tag).toBe(tag);
  expect(config.languages.get('en')!.tag).toBe('en');
});
