// Text from the server under check, made safe to print on a terminal. A hostile server's `issuer` (or any value it
// sends: a header, a JSON field, an error text) held ESC sequences that erased the FAIL line, printed a fake "ok" line
// and set the window title: the check printed it as it came. So every finding is escaped before it leaves the check,
// and each value the server chose is capped in length, so that none can bury the others.

/** How many characters of one value from the server a finding shows. */
export const MAX_SHOWN = 200;

/**
 * C0 controls (ESC starts ECMA-48's CSI and OSC, CR returns to the line start), DEL, C1 controls (U+009B is CSI on
 * its own in 8-bit terminals), the line and paragraph separators, and the bidi embeddings, overrides and isolates
 * (Unicode UAX #9), which reorder what follows them on the line.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * The text with every unsafe character shown as an escape: \x1b for a control, \u202e for the others. A backslash is
 * left as it is, on purpose: a server can then write the four characters `\x1b`, which only look like an escape and
 * drive nothing, and the function stays idempotent, so a finding escaped whole after its values went through shown()
 * reads the same (escaping `\` too would double every backslash of those values).
 */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}

/** A value the server sent, for a finding: at most MAX_SHOWN characters (then "…"), escaped. */
export function shown(value: unknown): string {
  const text = String(value);
  return escapeControls(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text);
}
