// The language of a page, from the browser's Accept-Language (RFC 9110 §12.5.4; a weight is a qvalue of §12.4.2,
// anything else counts as none given): the languages it names, most
// preferred first (q), each matched exactly or by its primary subtag (RFC 4647 §3.4 lookup: "de-AT" finds "de"), the
// first one served wins (or, for "pt", a served "pt-BR"); "*" and anything unknown fall back.

/** At most this many entries of the header are read: a browser sends a handful. */
const MAX_ENTRIES = 20;

/**
 * The served language that best fits `header`, or `fallback`. `served` are language tags as the host app spelt them
 * ("en", "pt-BR"); the answer is one of them, spelt so.
 */
export function negotiateLanguage(
  header: string | undefined,
  served: readonly string[],
  fallback: string,
): string {
  if (!header) return fallback;
  const byLower = new Map(served.map((tag) => [tag.toLowerCase(), tag]));
  const wanted = header
    .split(',')
    .slice(0, MAX_ENTRIES)
    .map((entry) => {
      // split always gives a first part: the range.
      const [range, ...parameters] = entry.split(';') as [string, ...string[]];
      const q = parameters
        .map((p) => /^\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/i.exec(p))
        .find(Boolean);
      return { range: range.trim().toLowerCase(), q: q ? Number(q[1]) : 1 };
    })
    .filter((entry) => entry.q > 0)
    // Most preferred first; equal weights keep the order the browser gave (sort is stable, ES2019).
    .sort((a, b) => b.q - a.q);
  for (const { range } of wanted) {
    if (range === '*') return fallback;
    const exact = byLower.get(range);
    if (exact) return exact;
    const language = range.split('-')[0]!;
    const primary =
      byLower.get(language) ?? served.find((tag) => tag.toLowerCase().startsWith(`${language}-`));
    if (primary) return primary;
  }
  return fallback;
}
