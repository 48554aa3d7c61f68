// express-mcp-oauth/pages: the built-in pages' words, language and look, for a catalogue in another language and for
// a host app's own pages (an account page, say) to match them. Named re-exports only.

/** The English words of the built-in pages, by key: what a catalogue of another language translates. */
export { ENGLISH_MESSAGES } from '../i18n/messages';
/** A language tag of the pages, and every message key. */
export type { PageLanguage, PageMessageKey } from '../i18n/messages';
/**
 * The language of a request from its Accept-Language (RFC 9110 §12.5.4): one of the tags served, or the fallback;
 * for a host app's own pages to speak the language the built-in pages chose.
 */
export { negotiateLanguage } from '../i18n/negotiate';
/** A message as HTML: its text escaped, **bold** and `code` marked, each {placeholder} replaced by its escaped value. */
export { renderMessage } from '../i18n/translate';
/** The built-in pages' stylesheet (CSS text). */
export { PAGE_STYLESHEET } from './render';
/** How a page should name a client: its name, the host that published its metadata document, or "unverified". */
export { describeClient } from '../cimd/client-document';
export type { ClientIdentity } from '../cimd/client-document';
