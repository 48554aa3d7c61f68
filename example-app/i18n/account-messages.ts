// The words of the app's own account pages (sign-in, connected apps, their error page), in the languages the app
// speaks, written as the library's messages are: plain text, {placeholders}, **bold** and `code`, turned into HTML by
// renderMessage (escaped, values last). Each language also brings its catalogue of the library's pages, whose scope
// descriptions and error texts the account pages show too: one translation of a scope, wherever it appears.
import type { PageLanguage } from 'express-mcp-oauth/pages';
import { hr } from './hr';

/** The account pages' messages in English, the words they had before they spoke other languages. */
export const ENGLISH_ACCOUNT_MESSAGES = {
  'signIn.title': 'Sign in',
  'signIn.heading': 'Sign in to {service}',
  'signIn.intro': 'To see and manage the apps connected to your account.',
  'signIn.email': 'Email',
  'signIn.password': 'Password',
  'signIn.submit': 'Sign in',
  'signIn.expired': 'The form expired; try again.',
  // The same words for a wrong password and an unknown email: the page must not tell which emails have accounts.
  'signIn.failed': 'The email or password is incorrect.',
  'apps.title': 'Connected apps',
  'apps.heading': 'Connected apps',
  'apps.signedInAs': 'Signed in as **{user}**. These apps can act on your {service} account.',
  'apps.revoked': 'Access revoked. The app can no longer use your account.',
  'apps.none': 'No app is connected.',
  'apps.documentClient': 'Calls itself **{name}** (not verified); published at `{url}`',
  'apps.selfRegistered': 'Self-registered app (its name is not verified)',
  'apps.granted': 'Granted {granted} · last used {lastUsed}',
  'apps.activity': 'Last sign-in for it {lastSignIn} · last token refresh {lastRefresh}',
  'apps.revoke': 'Revoke access',
  'apps.signOut': 'Sign out',
  /** In place of a time, for what has not happened (an app never used, a token never refreshed). */
  'time.never': 'never',
  'error.title': 'Error',
  'error.heading': 'That did not work',
  'error.back': 'Back to connected apps',
  'error.formExpired': 'The form expired; go back and try again.',
  'error.notConnected': 'That app is not connected to your account.',
  'error.unavailable': 'The service is briefly unavailable. Try again in a moment.',
  /** The administrators' console (/admin). */
  'admin.title': 'Administration',
  'admin.heading': 'Administration',
  'admin.signedInAs': 'Signed in as **{user}**, an administrator of {service}.',
  'admin.clients': 'Clients',
  'admin.grants': 'Active grants',
  'admin.client': 'Client',
  'admin.clientId': 'Client ID',
  'admin.kind': 'How it came',
  'admin.kindRegistration': 'Registration',
  'admin.kindDocument': 'Metadata document',
  'admin.kindOperator': 'Operator',
  'admin.created': 'Created',
  'admin.user': 'User',
  'admin.scopes': 'Scopes',
  'admin.granted': 'Granted',
  'admin.lastUsed': 'Last used',
  'admin.activeGrants': 'active grants: {count}',
  'admin.revoke': 'Revoke',
  'admin.revoked': 'Grant revoked: its tokens no longer work.',
  'admin.none': 'None.',
  'admin.firstOnly': 'The first {count} are shown.',
  'error.notAdmin': 'This page is for administrators.',
  'admin.disable': 'Disable',
  'admin.enable': 'Enable',
  'admin.isDisabled': 'disabled',
  'admin.clientDisabled': 'Client disabled: its grants ended, and it gets no new ones until enabled.',
  'admin.clientEnabled': 'Client enabled.',
  'admin.purgeIntro':
    'Public registrations older than {days} days that no grant names are removed on a schedule; remove them now:',
  'admin.purge': 'Remove idle registrations',
  'admin.purged': 'Idle registrations removed: {count}.',
} as const;

export type AccountMessageKey = keyof typeof ENGLISH_ACCOUNT_MESSAGES;

/** The same in Croatian: a full record, so that a key added above fails to compile until it is translated. */
const CROATIAN_ACCOUNT_MESSAGES: Readonly<Record<AccountMessageKey, string>> = {
  'signIn.title': 'Prijava',
  'signIn.heading': 'Prijavite se u uslugu {service}',
  'signIn.intro': 'Da biste vidjeli aplikacije povezane s vašim računom i upravljali njima.',
  'signIn.email': 'E-pošta',
  'signIn.password': 'Lozinka',
  'signIn.submit': 'Prijavi se',
  'signIn.expired': 'Obrazac je istekao; pokušajte ponovno.',
  'signIn.failed': 'E-pošta ili lozinka nije točna.',
  'apps.title': 'Povezane aplikacije',
  'apps.heading': 'Povezane aplikacije',
  'apps.signedInAs':
    'Prijavljeni ste kao **{user}**. Ove aplikacije mogu raditi s vašim računom u usluzi {service}.',
  'apps.revoked': 'Pristup je opozvan. Aplikacija više ne može koristiti vaš račun.',
  'apps.none': 'Nijedna aplikacija nije povezana.',
  'apps.documentClient': 'Predstavlja se kao **{name}** (nije provjereno); objavljena na adresi `{url}`',
  'apps.selfRegistered': 'Aplikacija koja se sama registrirala (njezino ime nije provjereno)',
  'apps.granted': 'Pristup odobren {granted} · zadnje korištenje: {lastUsed}',
  'apps.activity': 'Zadnja prijava za nju: {lastSignIn} · zadnje osvježavanje tokena: {lastRefresh}',
  'apps.revoke': 'Opozovi pristup',
  'apps.signOut': 'Odjavi se',
  'time.never': 'nikad',
  'error.title': 'Pogreška',
  'error.heading': 'To nije uspjelo',
  'error.back': 'Natrag na povezane aplikacije',
  'error.formExpired': 'Obrazac je istekao; vratite se i pokušajte ponovno.',
  'error.notConnected': 'Ta aplikacija nije povezana s vašim računom.',
  'error.unavailable': 'Usluga je nakratko nedostupna. Pokušajte ponovno za trenutak.',
  'admin.title': 'Administracija',
  'admin.heading': 'Administracija',
  'admin.signedInAs': 'Prijavljeni ste kao **{user}**, administrator usluge {service}.',
  'admin.clients': 'Klijentske aplikacije',
  'admin.grants': 'Aktivna odobrenja',
  'admin.client': 'Aplikacija',
  'admin.clientId': 'ID aplikacije',
  'admin.kind': 'Kako je došla',
  'admin.kindRegistration': 'Registracija',
  'admin.kindDocument': 'Dokument s metapodacima',
  'admin.kindOperator': 'Operater',
  'admin.created': 'Stvorena',
  'admin.user': 'Korisnik',
  'admin.scopes': 'Opsezi',
  'admin.granted': 'Odobreno',
  'admin.lastUsed': 'Zadnje korištenje',
  'admin.activeGrants': 'aktivnih odobrenja: {count}',
  'admin.revoke': 'Opozovi',
  'admin.revoked': 'Odobrenje je opozvano: njegovi tokeni više ne vrijede.',
  'admin.none': 'Nema ih.',
  'admin.firstOnly': 'Prikazano je prvih {count}.',
  'error.notAdmin': 'Ova je stranica za administratore.',
  'admin.disable': 'Onemogući',
  'admin.enable': 'Omogući',
  'admin.isDisabled': 'onemogućena',
  'admin.clientDisabled':
    'Aplikacija je onemogućena: njezina su odobrenja završila i ne dobiva nova dok je ne omogućite.',
  'admin.clientEnabled': 'Aplikacija je omogućena.',
  'admin.purgeIntro':
    'Javne registracije starije od {days} dana koje nijedno odobrenje ne spominje uklanjaju se redovito; uklonite ih sada:',
  'admin.purge': 'Ukloni neaktivne registracije',
  'admin.purged': 'Uklonjeno neaktivnih registracija: {count}.',
};

export interface AccountLanguage {
  messages: Readonly<Record<AccountMessageKey, string>>;
  /** The library pages' catalogue of the same language: scope descriptions and error texts (none for English). */
  pages: PageLanguage;
}

/** The languages of the account pages; English first, the one a browser asking for none of them gets. */
export const ACCOUNT_LANGUAGE_TAGS = ['en', 'hr'] as const;

export type AccountLanguageTag = (typeof ACCOUNT_LANGUAGE_TAGS)[number];

export const ACCOUNT_LANGUAGES: Readonly<Record<AccountLanguageTag, AccountLanguage>> = {
  en: { messages: ENGLISH_ACCOUNT_MESSAGES, pages: {} },
  hr: { messages: CROATIAN_ACCOUNT_MESSAGES, pages: hr },
};
