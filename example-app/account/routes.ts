// "Connected apps": the signed-in user sees each client holding access to their account, its scopes, when it was
// granted and last used, and revokes it (the same effect as the revocation endpoint). The pages speak the browser's
// language when the app does (i18n/account-messages.ts), as the library's pages do.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AppDb } from '../db/database';
import ejs from 'ejs';
import express, { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import helmet from 'helmet';
import { isOAuthError, isStoreUnavailable, type OAuthRouter, type OAuthStore } from 'express-mcp-oauth';
import { describeClient, negotiateLanguage, PAGE_STYLESHEET, renderMessage } from 'express-mcp-oauth/pages';
import { authenticateUser, findUser } from '../users';
import type { AccountSession } from './session';
import type { AuditLog } from '../audit';
import { mountAdminRoutes } from './admin';
import {
  ACCOUNT_LANGUAGE_TAGS,
  ACCOUNT_LANGUAGES,
  type AccountLanguage,
  type AccountLanguageTag,
  type AccountMessageKey,
} from '../i18n/account-messages';

const VIEWS = findViews();

export interface AccountOptions {
  db: AppDb;
  store: OAuthStore;
  oauth: OAuthRouter;
  session: AccountSession;
  serviceName: string;
  audit: AuditLog;
  /** IDLE_CLIENT_DAYS: how old an unused public registration must be for the console's purge to remove it. */
  idleClientMs: number;
}

export function createAccountRoutes({
  db,
  store,
  oauth,
  session,
  serviceName,
  audit,
  idleClientMs,
}: AccountOptions): Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '8kb' });
  /** The page's language: the browser's Accept-Language when the app speaks it, English otherwise. */
  const languageOf = (req: Request) => {
    const tag = negotiateLanguage(req.headers['accept-language'], ACCOUNT_LANGUAGE_TAGS, 'en');
    return { tag, ...ACCOUNT_LANGUAGES[tag as AccountLanguageTag] };
  };
  /**
   * Renders a view in the request's language. A message the routes choose comes as a key (`errorKey`,
   * `messageKey`), its text looked up here; the view gets `lang` and `t(key, values)`, which returns HTML.
   */
  const render = async (
    req: Request,
    res: Response,
    view: string,
    data: Record<string, unknown>,
    status = 200,
  ) => {
    const language = languageOf(req);
    const text = (key: unknown) =>
      typeof key === 'string' ? language.messages[key as AccountMessageKey] : undefined;
    const html = await ejs.renderFile(
      join(VIEWS, `${view}.ejs`),
      {
        serviceName,
        error: text(data.errorKey),
        ...(data.messageKey ? { message: text(data.messageKey) } : {}),
        ...data,
        lang: language.tag,
        t: (key: AccountMessageKey, values?: Record<string, unknown>) =>
          renderMessage(language.messages[key], values),
      },
      { cache: true },
    );
    res.setHeader('Content-Language', language.tag);
    // One URL, several languages: a cache must key on the header that chose (RFC 9110 §12.5.5).
    res.vary('Accept-Language');
    res.status(status).type('html').send(html);
  };
  const formatTime = (ms: number | null, language: AccountLanguage) =>
    ms === null
      ? language.messages['time.never']
      : new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

  router.use(
    helmet({
      contentSecurityPolicy: { directives: { 'frame-ancestors': ["'none'"], 'form-action': ["'self'"] } },
      frameguard: { action: 'deny' },
    }),
    function noStore(_req, res, next) {
      res.setHeader('Cache-Control', 'no-store'); // the stylesheet's route sets its own
      next();
    },
  );

  router.get('/', (_req, res) => res.redirect(302, '/account/connected-apps'));
  // The consent page's stylesheet, so that these pages look like it (a file: the CSP allows styles from 'self').
  router.get('/styles.css', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.type('css').send(PAGE_STYLESHEET);
  });

  // Where a sign-in leads: the administrators' console when that is where the person came from, else their apps.
  const nextOf = (value: unknown) => (value === 'admin' ? 'admin' : '');
  router.get('/sign-in', (req, res, next) => {
    render(req, res, 'account-sign-in', {
      csrf_token: session.csrfToken(req, res),
      email: '',
      next: nextOf(req.query.next),
    }).catch(next);
  });

  // The OAuth sign-in's own limits, the same counters: guesses here and there add up.
  router.post('/sign-in', form, ...oauth.signInLimits, async (req: Request, res, next) => {
    try {
      const email = typeof req.body?.email === 'string' ? req.body.email.trim() : '';
      const password = typeof req.body?.password === 'string' ? req.body.password : '';
      const again = (errorKey: AccountMessageKey, status: number) =>
        render(
          req,
          res,
          'account-sign-in',
          { csrf_token: session.csrfToken(req, res), email, errorKey, next: nextOf(req.body?.next) },
          status,
        );
      if (!session.csrfValid(req)) return await again('signIn.expired', 403);
      const user = email && password ? await authenticateUser(db, email, password) : null;
      if (!user) return await again('signIn.failed', 401);
      await session.signIn(res, user.id);
      res.redirect(303, nextOf(req.body?.next) === 'admin' ? '/account/admin' : '/account/connected-apps');
    } catch (error) {
      next(error);
    }
  });

  router.post('/sign-out', form, async (req, res, next) => {
    try {
      if (session.csrfValid(req)) await session.signOut(req, res);
      res.redirect(303, '/account/sign-in');
    } catch (error) {
      next(error);
    }
  });

  router.get('/connected-apps', async (req, res, next) => {
    try {
      const userId = await session.userId(req);
      const user = userId ? await findUser(db, userId) : null;
      if (!user) return res.redirect(302, '/account/sign-in');
      const [grants, activity] = await Promise.all([
        store.listActiveGrants(user.id),
        audit.activity(user.id),
      ]);
      const language = languageOf(req);
      // The scope in the page's words, then the catalogue's (English), then its name.
      const own = (texts: Readonly<Record<string, string>> | undefined, scope: string) =>
        texts && Object.hasOwn(texts, scope) ? texts[scope] : undefined;
      const describe = (scope: string) =>
        own(language.pages.scopes, scope) ?? own(oauth.info.scopes, scope) ?? scope;
      const apps = grants.map((grant) => ({
        grantId: grant.grantId,
        client: describeClient(grant),
        scopes: grant.scopes.map(describe),
        grantedAt: formatTime(grant.createdAt, language),
        lastUsedAt: formatTime(grant.lastUsedAt, language),
        // From the audit trail (kept AUDIT_RETENTION_DAYS): what the user may want to know before revoking.
        lastSignInAt: formatTime(activity.lastSignIn.get(grant.clientId) ?? null, language),
        lastRefreshAt: formatTime(activity.lastRefresh.get(grant.grantId) ?? null, language),
      }));
      const labels = regionLabels(apps.map((app) => app.client.headline));
      await render(req, res, 'connected-apps', {
        user,
        apps: apps.map((app, index) => ({ ...app, label: labels[index] })),
        csrf_token: session.csrfToken(req, res),
        revoked: req.query.revoked === '1',
      });
    } catch (error) {
      next(error);
    }
  });

  router.post('/connected-apps/revoke', form, async (req, res, next) => {
    try {
      const userId = await session.userId(req);
      if (!userId) return res.redirect(303, '/account/sign-in');
      if (!session.csrfValid(req))
        return void (await render(req, res, 'account-error', { messageKey: 'error.formExpired' }, 403));
      const grantId = typeof req.body?.grant_id === 'string' ? req.body.grant_id : '';
      const grant = grantId ? await store.findGrant(grantId) : undefined;
      // Only the user's own grants: a forged id of someone else's grant is answered as if it did not exist.
      if (!grant || grant.userId !== userId)
        return void (await render(req, res, 'account-error', { messageKey: 'error.notConnected' }, 404));
      await oauth.revokeGrant(grant.grantId, { by: 'user', req, userId, clientId: grant.clientId });
      res.redirect(303, '/account/connected-apps?revoked=1');
    } catch (error) {
      next(error);
    }
  });

  mountAdminRoutes(router, { db, store, oauth, session, render, languageOf, formatTime, idleClientMs });

  // A refusal by the limits (429) is a page, like every other answer here.
  router.use(((error, req, res, next) => {
    if (isStoreUnavailable(error)) {
      res.setHeader('Retry-After', '5');
      return void render(req, res, 'account-error', { messageKey: 'error.unavailable' }, 503).catch(next);
    }
    if (!isOAuthError(error)) return next(error);
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    // The library's descriptions are English: the language's text for the error's code when it has one.
    const message = languageOf(req).pages.errors?.[error.code] ?? error.description;
    render(req, res, 'account-error', { message }, error.status).catch(next);
  }) as ErrorRequestHandler);

  return router;
}

/**
 * The accessible names of the apps' regions on the page: each app's headline, numbered where several apps share one
 * (a client registered twice), since a screen reader lists regions by name and two of one name cannot be told apart.
 */
function regionLabels(headlines: readonly string[]): string[] {
  return headlines.map((headline, index) => {
    const same = (other: string) => other === headline;
    if (headlines.filter(same).length === 1) return headline;
    return `${headline} (${headlines.slice(0, index + 1).filter(same).length})`;
  });
}

/** example-app/views, found upwards from here whether this runs from the sources (tests) or from dist/. */
function findViews(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, 'example-app', 'views');
    if (existsSync(join(candidate, 'connected-apps.ejs'))) return candidate;
  }
  throw new Error('example-app/views is missing.');
}
