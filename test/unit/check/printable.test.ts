// What `check` prints of a server's text: every character that can drive a terminal or reorder a line is shown as an
// escape, and one value cannot run on past MAX_SHOWN characters.
import { escapeControls, MAX_SHOWN, shown } from '../../../lib/check/printable';

test.each([
  ['an ESC sequence erasing the line (CSI 2K)', '\u001b[2K\rok   fine', '\\x1b[2K\\x0dok   fine'],
  ['an OSC setting the window title', '\u001b]0;pwned\u0007', '\\x1b]0;pwned\\x07'],
  ['an 8-bit CSI (C1)', '\u009b2J', '\\x9b2J'],
  ['a C1 OSC ended by ST', '\u009d0;t\u009c', '\\x9d0;t\\x9c'],
  ['NUL, TAB, LF and DEL', 'a\u0000b\tc\nd\u007f', 'a\\x00b\\x09c\\x0ad\\x7f'],
  ['a right-to-left override', 'https://evil.example/\u202egpj.exe', 'https://evil.example/\\u202egpj.exe'],
  ['a bidi isolate', '\u2066x\u2069', '\\u2066x\\u2069'],
  ['line and paragraph separators', 'a\u2028b\u2029', 'a\\u2028b\\u2029'],
  ['plain text, non-ASCII letters, a backslash', 'https://café.example/a\\b', 'https://café.example/a\\b'],
  ['U+00A0 and U+00FF, printable Latin-1', '\u00a0\u00ff', '\u00a0\u00ff'],
])('%s', (_name, text, printed) => {
  expect(escapeControls(text)).toBe(printed);
  expect(shown(text)).toBe(printed);
});

test('a value longer than MAX_SHOWN is cut there, marked, and escaped after the cut', () => {
  expect(shown('a'.repeat(MAX_SHOWN))).toBe('a'.repeat(MAX_SHOWN));
  expect(shown('a'.repeat(MAX_SHOWN + 1))).toBe(`${'a'.repeat(MAX_SHOWN)}…`);
  expect(shown(`${'a'.repeat(MAX_SHOWN - 1)}\u001b[2J`)).toBe(`${'a'.repeat(MAX_SHOWN - 1)}\\x1b…`);
  expect(shown(undefined)).toBe('undefined');
});
