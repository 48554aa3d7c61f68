// The words of the built-in pages (sign-in, consent, error), English built in. A message is plain text with
// {placeholders} for what a page fills in and two marks of emphasis: **bold** and `code`. Nothing else of HTML is
// read: a catalogue's text is escaped, so a translation cannot change the page's markup.

/** Every message of the built-in pages, by key, in English. */
export const ENGLISH_MESSAGES = {
  'signIn.title': 'Sign in',
  'signIn.heading': 'Sign in to {service}',
  'signIn.documentClient':
    '**{host}** (an app calling itself {name}) wants to connect to your account. Sign in to continue.',
  'signIn.client': '**{name}** wants to connect to your account. Sign in to continue.',
  'signIn.email': 'Email',
  'signIn.password': 'Password',
  'signIn.submit': 'Sign in',
  'signIn.failed': 'The email or password is incorrect.',
  'signIn.expired': 'Your sign-in has expired; sign in again.',
  /** A link per upstream provider. */
  'signIn.continueWith': 'Continue with {provider}',
  /** Between the providers' links and the email form. */
  'signIn.orEmail': 'Or sign in with your email',
  'upstream.refused': '{provider} did not sign you in. Try again, or choose another way to sign in.',
  'upstream.unavailable': '{provider} cannot be reached right now. Try again in a moment.',
  'upstream.failed': 'Signing in with {provider} did not work. Try again.',
  'upstream.unverified':
    '{provider} has not verified the email address of that account, so it cannot sign you in here. Verify it there, or use another account.',
  'upstream.noAccount': 'No account here matches the account you used at {provider}.',
  'consent.title': 'Allow access',
  'consent.heading': '{client} wants access to your {service} account',
  'consent.documentClient':
    'Published by **{host}**, at `{url}`. It calls itself **{name}**: a name it chose, which nobody has verified.',
  'consent.selfRegistered': 'Self-registered app: it named itself, and nobody has verified that name.',
  'consent.signedInAs': 'Signed in as {user}. After you decide, you return to `{host}`.',
  'consent.localhostOnly':
    'This app only ever returns to **your own computer** (localhost). Any program running on this computer could ' +
    'be behind it. Allow only if you just started this connection yourself, from {name} on this computer.',
  'consent.willBeAbleTo': 'It will be able to:',
  'consent.untick': 'Untick what you do not want to allow.',
  /** Step-up: above the scopes allowed before, which the page does not ask about again. */
  'consent.alreadyAllowed': 'It can already:',
  /** Step-up: above the new scopes, when some were allowed before. */
  'consent.alsoAsks': 'It now also asks to:',
  /** Under the already allowed scopes. */
  'consent.keptNote': 'You allowed this before, and it stays allowed.',
  /** Before the tools a scope unlocks. */
  'consent.tools': 'Tools:',
  /** After a tool that changes data (one whose server does not say it only reads). */
  'consent.changesData': 'changes data',
  /** The device flow (RFC 8628): instead of `consent.signedInAs`, above the scopes. */
  'consent.device':
    'A device, not this browser, asks for this access: it showed you the code `{code}`. Allow only if you started ' +
    'this on a device of your own. Signed in as {user}.',
  'consent.deny': 'Deny',
  'consent.allow': 'Allow',
  /** The device page (RFC 8628 §3.3), where a person types the code a device shows. */
  'device.title': 'Connect a device',
  'device.heading': 'Connect a device to your {service} account',
  'device.intro': 'Type the code your device shows.',
  'device.code': 'Code',
  'device.continue': 'Continue',
  'device.invalid':
    'That code is not right, or it has expired or been used. Check the code on your device, or start again there.',
  /** After "Allow": the device gets its tokens when it next asks. */
  'device.doneTitle': 'Device connected',
  'device.done': '**{client}** is connected. Your device may continue now; you can close this page.',
  /** After "Deny". */
  'device.deniedTitle': 'Device not connected',
  'device.denied': '**{client}** was not allowed. You can close this page.',
  'error.title': 'Something went wrong',
  'error.heading': 'This request cannot continue',
  'error.code': 'Error: `{code}` (HTTP {status}).',
  'error.untrusted': 'The app that sent you here should be told; continue only if you trust `{host}`.',
  'error.returnTo': 'Return to {host}',
  'error.goBack': 'Go back to the app you came from and try connecting again.',
  /** Shown under a translated error, with the server's own (English) description. */
  'error.detail': 'Details: {detail}',
} as const;

/** The key of a message of the built-in pages. */
export type PageMessageKey = keyof typeof ENGLISH_MESSAGES;

/** A language of the pages: its messages (any left out are English), scope descriptions and error texts. */
export interface PageLanguage {
  /** Messages by key (see ENGLISH_MESSAGES); any left out are shown in English. */
  messages?: Partial<Record<PageMessageKey, string>>;
  /** What each scope lets an app do, in this language (the `scopes` option's words otherwise). */
  scopes?: Readonly<Record<string, string>>;
  /**
   * What an error means, by OAuth error code (`access_denied`, `invalid_request`...), shown on the error page in
   * place of the server's English description, which follows as a detail. Without one, the description alone.
   */
  errors?: Readonly<Record<string, string>>;
  /**
   * Each MCP tool's title in this language, by tool name, for the consent page's list of what each scope unlocks
   * (the server's own title, or the tool's name, otherwise).
   */
  tools?: Readonly<Record<string, string>>;
}
