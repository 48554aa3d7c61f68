// Croatian (hr), the reference app's second language: every message of the library's pages, every scope of
// scopes.ts and the OAuth errors a browser can meet on the error page. Formal address ("prijavite se", "vaš"), as a
// business service speaks to its customers. The marks (**bold**, `code`) and {placeholders} are the English ones:
// the library fills them in, and a misspelt placeholder would show up on the page as written.
import type { PageLanguage, PageMessageKey } from 'express-mcp-oauth/pages';

/** Every message of the built-in pages: a full record, so that a key the library adds fails to compile here. */
const MESSAGES: Record<PageMessageKey, string> = {
  'signIn.title': 'Prijava',
  // The service's name is not declined: "u uslugu {service}" reads right whatever the name is.
  'signIn.heading': 'Prijavite se u uslugu {service}',
  'signIn.documentClient':
    '**{host}** (aplikacija koja se predstavlja kao {name}) želi se povezati s vašim računom. ' +
    'Prijavite se kako biste nastavili.',
  'signIn.client': '**{name}** želi se povezati s vašim računom. Prijavite se kako biste nastavili.',
  'signIn.email': 'E-pošta',
  'signIn.password': 'Lozinka',
  'signIn.submit': 'Prijavi se',
  'signIn.failed': 'E-pošta ili lozinka nije točna.',
  'signIn.expired': 'Vaša je prijava istekla; prijavite se ponovno.',
  'signIn.continueWith': 'Nastavite putem usluge {provider}',
  'signIn.orEmail': 'Ili se prijavite e-poštom',
  'upstream.refused': '{provider} vas nije prijavio. Pokušajte ponovno ili odaberite drugi način prijave.',
  'upstream.unavailable': '{provider} trenutačno nije dostupan. Pokušajte ponovno za nekoliko trenutaka.',
  'upstream.failed': 'Prijava putem usluge {provider} nije uspjela. Pokušajte ponovno.',
  'upstream.unverified':
    '{provider} nije potvrdio adresu e-pošte tog računa, pa vas njime ne možemo prijaviti. Potvrdite je ondje ili upotrijebite drugi račun.',
  'upstream.noAccount':
    'Ovdje nema računa koji odgovara računu kojim ste se prijavili kod usluge {provider}.',
  'consent.title': 'Dopuštanje pristupa',
  'consent.heading': '{client} želi pristup vašem računu u usluzi {service}',
  'consent.documentClient':
    'Objavljuje je **{host}**, na adresi `{url}`. Predstavlja se kao **{name}**: to je ime koje je sama ' +
    'odabrala i koje nitko nije provjerio.',
  'consent.selfRegistered':
    'Aplikacija koja se sama registrirala: sama je odabrala svoje ime i nitko ga nije provjerio.',
  'consent.signedInAs': 'Prijavljeni ste kao {user}. Nakon što odlučite, vraćate se na `{host}`.',
  'consent.localhostOnly':
    'Ova se aplikacija uvijek vraća samo na **vaše računalo** (localhost). Iza nje mogao bi stajati bilo koji ' +
    'program pokrenut na ovom računalu. Dopustite pristup samo ako ste ovo povezivanje upravo sami pokrenuli, ' +
    'iz aplikacije {name} na ovom računalu.',
  'consent.willBeAbleTo': 'Moći će:',
  'consent.untick': 'Odznačite ono što ne želite dopustiti.',
  'consent.alreadyAllowed': 'Već može:',
  'consent.alsoAsks': 'Sada traži i da može:',
  'consent.keptNote': 'To ste već dopustili i ostaje dopušteno.',
  'consent.tools': 'Alati:',
  'consent.changesData': 'mijenja podatke',
  'consent.device':
    'Ovaj pristup traži uređaj, a ne ovaj preglednik: prikazao vam je kôd `{code}`. Dopustite samo ako ste to ' +
    'pokrenuli na svojem uređaju. Prijavljeni ste kao {user}.',
  'consent.deny': 'Odbij',
  'consent.allow': 'Dopusti',
  'device.title': 'Povezivanje uređaja',
  'device.heading': 'Povežite uređaj s vašim računom u usluzi {service}',
  'device.intro': 'Upišite kôd koji prikazuje vaš uređaj.',
  'device.code': 'Kôd',
  'device.continue': 'Nastavi',
  'device.invalid':
    'Taj kôd nije točan, istekao je ili je već iskorišten. Provjerite kôd na uređaju ili počnite ispočetka ondje.',
  'device.doneTitle': 'Uređaj je povezan',
  'device.done': '**{client}** je povezan. Vaš uređaj sada može nastaviti; ovu stranicu možete zatvoriti.',
  'device.deniedTitle': 'Uređaj nije povezan',
  'device.denied': '**{client}** nije dopušten. Ovu stranicu možete zatvoriti.',
  'error.title': 'Došlo je do pogreške',
  'error.heading': 'Ovaj zahtjev nije moguće nastaviti',
  'error.code': 'Pogreška: `{code}` (HTTP {status}).',
  'error.untrusted':
    'Aplikaciju koja vas je ovamo poslala treba o tome obavijestiti; nastavite samo ako vjerujete adresi `{host}`.',
  'error.returnTo': 'Povratak na {host}',
  'error.goBack': 'Vratite se u aplikaciju iz koje ste došli i ponovno se pokušajte povezati.',
  'error.detail': 'Pojedinosti: {detail}',
};

/**
 * What each scope of scopes.ts lets an app do (test/example-app/languages.test.ts checks that none is missing). They
 * follow "Moći će:" ("It will be able to:") on the consent page, hence the infinitives.
 */
const SCOPES: Record<string, string> = {
  'fakture:read': 'Čitati vaše račune i ponude',
  'fakture:write': 'Izrađivati, mijenjati i brisati račune',
  'clients:read': 'Čitati podatke o vašim klijentima',
  'clients:write': 'Dodavati i mijenjati klijente',
  'products:read': 'Čitati vaš katalog proizvoda',
  'products:write': 'Dodavati i mijenjati proizvode',
  'company:read': 'Čitati podatke o vašoj tvrtki',
  'company:write': 'Mijenjati podatke o vašoj tvrtki',
  'bridge:read': 'Pregledavati vaše bankovne račune i transakcije',
  'user:read': 'Čitati vaš korisnički profil',
  'user:write': 'Mijenjati vaš korisnički profil',
  'prospektor:read': 'Čitati vaše potencijalne klijente i statistiku',
  'prospektor:write': 'Dodavati i mijenjati potencijalne klijente',
  'dokument:read': 'Čitati vaše predloške i dokumente',
  'dokument:write': 'Izrađivati dokumente',
};

/**
 * What an error means, by OAuth error code: the codes the authorization endpoint's pages can show (RFC 6749 §4.1.2.1,
 * RFC 8707 §2, RFC 6585 for 429, the library's own), and a few more a browser may be sent to. The library's English
 * description follows as a detail.
 */
const ERRORS: Record<string, string> = {
  invalid_request: 'Zahtjev aplikacije nije ispravan ili mu nedostaje neki podatak.',
  invalid_client: 'Ova usluga ne prepoznaje aplikaciju ili se aplikacija nije uspjela predstaviti.',
  invalid_grant: 'Dopuštenje koje je aplikacija poslala nije valjano ili je isteklo.',
  unauthorized_client: 'Ova aplikacija ne smije tražiti pristup na ovaj način.',
  unsupported_response_type: 'Aplikacija je zatražila vrstu odgovora koju ova usluga ne podržava.',
  unsupported_grant_type: 'Aplikacija je zatražila vrstu dopuštenja koju ova usluga ne podržava.',
  invalid_scope: 'Aplikacija je zatražila ovlasti koje ova usluga ne poznaje ili ih ne može dati.',
  access_denied: 'Pristup je odbijen.',
  invalid_target: 'Aplikacija je zatražila pristup resursu za koji ova usluga ne izdaje dopuštenja.',
  invalid_redirect_uri: 'Adresa na koju se aplikacija želi vratiti nije dopuštena.',
  invalid_client_metadata: 'Podaci kojima se aplikacija predstavila nisu ispravni.',
  server_error: 'Na poslužitelju je došlo do neočekivane pogreške. Pokušajte ponovno kasnije.',
  temporarily_unavailable: 'Usluga je nakratko nedostupna. Pokušajte ponovno za trenutak.',
  too_many_requests: 'Previše pokušaja u kratkom vremenu. Pričekajte malo pa pokušajte ponovno.',
  method_not_allowed: 'Ova adresa ne prihvaća takav zahtjev.',
  login_required: 'Za nastavak se morate prijaviti.',
  consent_required: 'Za nastavak je potrebno vaše dopuštenje.',
  interaction_required: 'Za nastavak je potrebna vaša potvrda.',
};

/** Each MCP tool's title, for the consent page's list of what a scope unlocks (a test checks every tool has one). */
const TOOLS: Readonly<Record<string, string>> = {
  get_company: 'Dohvati podatke o tvrtki',
  update_company: 'Ažuriraj podatke o tvrtki',
  get_profile: 'Dohvati moj profil',
  update_profile: 'Ažuriraj moj profil',
  list_bank_accounts: 'Popis bankovnih računa',
  get_bank_account: 'Dohvati bankovni račun',
  list_bank_transactions: 'Popis bankovnih transakcija',
  get_bank_transaction: 'Dohvati bankovnu transakciju',
  list_document_templates: 'Popis predložaka dokumenata',
  list_documents: 'Popis izrađenih dokumenata',
  get_document: 'Dohvati izrađeni dokument',
  render_document: 'Prikaži dokument',
  generate_document: 'Izradi dokument',
  list_invoices: 'Popis računa i ponuda',
  get_invoice: 'Dohvati račun ili ponudu',
  create_invoice: 'Izradi račun ili ponudu',
  update_invoice: 'Ažuriraj račun ili ponudu',
  delete_invoice: 'Izbriši nacrt računa ili ponudu',
  list_clients: 'Popis klijenata',
  get_client: 'Dohvati klijenta',
  create_client: 'Dodaj klijenta',
  update_client: 'Ažuriraj klijenta',
  list_products: 'Popis proizvoda',
  get_product: 'Dohvati proizvod',
  create_product: 'Dodaj proizvod',
  update_product: 'Ažuriraj proizvod',
  list_prospects: 'Popis potencijalnih klijenata',
  get_prospect: 'Dohvati potencijalnog klijenta',
  get_prospect_statistics: 'Statistika potencijalnih klijenata',
  create_prospect: 'Dodaj potencijalnog klijenta',
  update_prospect: 'Ažuriraj potencijalnog klijenta',
};

/** Croatian, for `pages: { languages: { hr } }` and the account pages. */
export const hr: PageLanguage = { messages: MESSAGES, scopes: SCOPES, errors: ERRORS, tools: TOOLS };
