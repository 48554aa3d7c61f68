// Email addresses compared in one form, computed here rather than by a database: SQLite's lower() folds ASCII only,
// while PostgreSQL's folds Unicode by the database's locale (U+212A KELVIN SIGN becomes "k"), so the same lookup
// could match one account on one database and another on the other. An address that Unicode normalisation would
// turn into a different one (the Kelvin sign into K, a fullwidth letter into its ASCII twin, a ligature into two
// letters) names no account: such an address may be another person's mailbox at the provider that spells it.

/** RFC 5321 §4.5.3.1.3: a path is at most 256 octets, so an address at most 254 characters. */
const MAX_LENGTH = 254;
/** Something@something.something, with no space, control character or second "@". */
const SHAPE = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;

/**
 * The form in which two email addresses are compared: NFKC, then lower case (the whole address, as sign-in has
 * always matched it). Undefined for anything that names no account: not a string, not shaped like an address, over
 * 254 characters, holding a control character, or changed by NFKC normalisation (it would then be compared as
 * another address than the one given).
 */
export function emailKey(email: unknown): string | undefined {
  if (typeof email !== 'string' || email.length > MAX_LENGTH || !SHAPE.test(email)) return undefined;
  if (email.normalize('NFKC') !== email) return undefined;
  // String.prototype.toLowerCase is Unicode's default case mapping, the same in every locale and every process.
  return email.toLowerCase();
}

/** The domain of an address's key (after its last "@"), or undefined when the address names no account. */
export function emailDomain(email: unknown): string | undefined {
  const key = emailKey(email);
  return key === undefined ? undefined : key.slice(key.lastIndexOf('@') + 1);
}
