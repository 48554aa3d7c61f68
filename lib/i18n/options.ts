// The pages option of createOAuthRouter, parsed once: the languages the built-in pages speak (English built in, the
// host app's catalogues on top), a language to force, and the brand (logo, accent colour).
import { ENGLISH_MESSAGES, type PageLanguage, type PageMessageKey } from './messages';

/** The look and languages of the built-in pages, without replacing their templates. */
export interface PageOptions {
  /**
   * Catalogues by language tag (`de`, `pt-BR`): each page speaks the one that best fits the browser's
   * Accept-Language, English otherwise. `en` may be given too, to change the built-in words.
   */
  languages?: Readonly<Record<string, PageLanguage>>;
  /** One language for every page, whatever the browser asks for: `en` or a tag of `languages`. */
  language?: string;
  /** A logo shown above each page: an https URL, or a `data:image/...` URL. */
  logoUrl?: string;
  /** The colour of buttons and links: `#rgb` or `#rrggbb`. */
  accentColor?: string;
}

/** A language ready to render: every message (English where the catalogue has none), scopes and errors. */
export interface ResolvedLanguage {
  tag: string;
  messages: Readonly<Record<PageMessageKey, string>>;
  scopes: Readonly<Record<string, string>>;
  errors: Readonly<Record<string, string>>;
  tools: Readonly<Record<string, string>>;
}

/** The parsed pages option. */
export interface PagesConfig {
  /** Every language served, English included, by tag. */
  languages: ReadonlyMap<string, ResolvedLanguage>;
  /** The language of every page, when one is forced. */
  forced: string | undefined;
  logoUrl: string | undefined;
  accentColor: string | undefined;
}

/** A language tag (RFC 5646), in the shape browsers send: "en", "pt-BR", "zh-Hant-TW". */
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/;

export function parsePageOptions(
  given: PageOptions | undefined,
  fail: (message: string) => never,
): PagesConfig {
  const options = given ?? {};
  if (typeof options !== 'object' || Array.isArray(options))
    fail('pages must be an object: { languages, language, logoUrl, accentColor }.');
  const catalogues = options.languages ?? {};
  if (typeof catalogues !== 'object' || Array.isArray(catalogues))
    fail(
      "pages.languages must map language tags to catalogues, e.g. { de: { messages: { 'consent.allow': 'Erlauben' } } }.",
    );
  const languages = new Map<string, ResolvedLanguage>();
  languages.set('en', resolve('en', {}, fail));
  for (const [tag, catalogue] of Object.entries(catalogues)) {
    if (!LANGUAGE_TAG.test(tag))
      fail(`pages.languages: "${tag}" is not a language tag such as "de" or "pt-BR".`);
    const known = [...languages.keys()].find((served) => served.toLowerCase() === tag.toLowerCase());
    languages.set(known ?? tag, resolve(known ?? tag, catalogue, fail));
  }
  const forced = options.language;
  if (forced !== undefined && !languages.has(forced))
    fail(`pages.language "${String(forced)}" is not served; use one of ${[...languages.keys()].join(', ')}.`);
  const { logoUrl, accentColor } = options;
  if (
    logoUrl !== undefined &&
    // Stryker disable next-line ConditionalExpression: equivalent, the test below refuses what is not a string too
    (typeof logoUrl !== 'string' ||
      !/^(?:https:\/\/|data:image\/[a-z+.-]+[;,])/i.test(logoUrl) ||
      !URL.canParse(logoUrl))
  )
    fail('pages.logoUrl must be an https URL or a data:image/... URL.');
  if (
    accentColor !== undefined &&
    // Stryker disable next-line ConditionalExpression: equivalent, the test refuses what is not a string too
    (typeof accentColor !== 'string' || !/^#(?:[0-9a-f]{3}){1,2}$/i.test(accentColor))
  )
    fail('pages.accentColor must be a colour such as "#0b57d0" or "#06c".');
  return { languages, forced, logoUrl, accentColor };
}

function resolve(tag: string, catalogue: PageLanguage, fail: (message: string) => never): ResolvedLanguage {
  if (!catalogue || typeof catalogue !== 'object')
    fail(`pages.languages.${tag} must be a catalogue: { messages, scopes, errors, tools }.`);
  const texts = (name: 'messages' | 'scopes' | 'errors' | 'tools'): Record<string, string> => {
    const given = catalogue[name] ?? {};
    if (typeof given !== 'object' || Array.isArray(given))
      fail(`pages.languages.${tag}.${name} must be an object.`);
    for (const [key, text] of Object.entries(given)) {
      if (typeof text !== 'string' || !text.trim())
        fail(`pages.languages.${tag}.${name}["${key}"] must be a non-empty string.`);
    }
    return { ...given } as Record<string, string>;
  };
  const messages = texts('messages');
  // A misspelt key would silently leave the English text in place.
  const unknown = Object.keys(messages).find((key) => !Object.hasOwn(ENGLISH_MESSAGES, key));
  if (unknown !== undefined)
    fail(
      `pages.languages.${tag}.messages has no message "${unknown}"; the keys are those of ENGLISH_MESSAGES.`,
    );
  return {
    tag,
    messages: Object.freeze({ ...ENGLISH_MESSAGES, ...messages }),
    scopes: Object.freeze(texts('scopes')),
    errors: Object.freeze(texts('errors')),
    tools: Object.freeze(texts('tools')),
  };
}
