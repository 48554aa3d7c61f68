// The characters a client's display fields must not hold (one of each class that reorders, breaks or hides text),
// and ordinary non-ASCII text that must still pass: shared by the registration and the metadata-document tests.

/** [what it is, its code point as the refusal names it, the character]. */
export const HIDDEN_FORMATTING: Array<[string, string, string]> = [
  ['RIGHT-TO-LEFT OVERRIDE (bidi override)', 'U+202E', '\u202e'],
  ['LEFT-TO-RIGHT EMBEDDING (bidi embedding)', 'U+202A', '\u202a'],
  ['POP DIRECTIONAL FORMATTING', 'U+202C', '\u202c'],
  ['LEFT-TO-RIGHT MARK', 'U+200E', '\u200e'],
  ['RIGHT-TO-LEFT MARK', 'U+200F', '\u200f'],
  ['ARABIC LETTER MARK', 'U+061C', '\u061c'],
  ['LEFT-TO-RIGHT ISOLATE', 'U+2066', '\u2066'],
  ['RIGHT-TO-LEFT ISOLATE', 'U+2067', '\u2067'],
  ['FIRST STRONG ISOLATE', 'U+2068', '\u2068'],
  ['POP DIRECTIONAL ISOLATE', 'U+2069', '\u2069'],
  ['LINE SEPARATOR (Zl)', 'U+2028', '\u2028'],
  ['PARAGRAPH SEPARATOR (Zp)', 'U+2029', '\u2029'],
  ['ZERO WIDTH SPACE (Cf)', 'U+200B', '\u200b'],
  ['ZERO WIDTH NO-BREAK SPACE, the BOM (Cf)', 'U+FEFF', '\ufeff'],
  ['SOFT HYPHEN (Cf)', 'U+00AD', '\u00ad'],
  ['a tag character, invisible text (Cf)', 'U+E0041', '\u{e0041}'],
  ['NEXT LINE, a C1 control', 'U+0085', '\u0085'],
  ['a lone surrogate', 'U+D800', '\ud800'],
];

/** Names in other scripts, with accents, emoji and the joiners some scripts and emoji need. */
export const ORDINARY_NAMES: Array<[string, string]> = [
  ['accents', 'Café Zürich Ærø'],
  ['CJK', '東京の請求書アプリ'],
  ['Hebrew (a right-to-left script)', 'חשבוניות'],
  ['Persian with ZERO WIDTH NON-JOINER', 'می\u200cخواهم'],
  ['emoji joined by ZERO WIDTH JOINER, with a skin tone', 'Team 👩🏽‍💻 👨‍👩‍👧'],
  ['emoji with a variation selector, and a flag', 'Notes ❤️ 🇫🇷'],
];
