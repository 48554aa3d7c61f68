// Characters a client must not put in the text it asks a server to show about it (client_name, its pages, its
// contacts...): those that change how the text around them is shown without being seen themselves. A bidi control
// reorders a line (U+202E RIGHT-TO-LEFT OVERRIDE makes a name run into, and turn around, the consent page's "not
// verified" sentence beside it: Unicode TR #9 §2, the spoofing of Unicode TR #36 §2.1); a line or paragraph separator
// (U+2028, U+2029) breaks the line; other format characters (Cf: zero-width spaces, U+FEFF, the tag characters
// U+E0000-E007F that can carry a whole invisible text) hide characters. Refused too: C0 and C1 controls (U+0085 is
// a line break) and lone surrogates, which no renderer can show. Letters, marks, spaces and symbols of any script
// stay allowed, and so do the two joiners U+200C and U+200D: Persian and Indic writing need ZWNJ, and emoji sequences
// (a family, a profession with a skin tone) are joined by ZWJ; neither reorders or breaks a line. The cost: the
// three subdivision flags (England, Scotland, Wales) are written with tag characters and are refused.

const HIDDEN_FORMATTING = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** The first character that reorders, breaks or hides the text around it, as "U+202E"; undefined when none. */
export function hiddenFormattingIn(value: string): string | undefined {
  const found = HIDDEN_FORMATTING.exec(value)?.[0];
  return found === undefined
    ? undefined
    : `U+${found.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
