// "Connected apps": the signed-in user sees each client holding access to their account, its scopes, when it was
// granted and last used, and revokes it (the same effect as the revocation endpoint).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AppDb } from '../db/database';
import ejs from 'ejs';
import express, { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import helmet from 'helmet';
import {
  describeClient,
  isOAuthError,
  isStoreUnavailable,
  PAGE_STYLESHEET,
  type OAuthRouter,
  type OAuthStore,
} from 'express-mcp-oauth';
import { authenticateUser, findUser } from '../users';
import type { AccountSession } from './session';
import type { AuditLog } from '../audit';

const VIEWS = findViews();

export interface AccountOptions {
  db: AppDb;
  store: OAuthStore;
  oauth: OAuthRouter;
  session: AccountSession;
  serviceName: string;
  audit: AuditLog;
}

export function createAccountRoutes({
  db,
  store,
  oauth,
  session,
  serviceName,
  audit,
}: AccountOptions): Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '8kb' });
  const render = async (res: Response, view: string, data: Record<string, unknown>, status = 200) => {
    const html = await ejs.renderFile(
      join(VIEWS, `${view}.ejs`),
      { serviceName, error: undefined, ...data },
      { cache: true },
    );
    res.status(status).type('html').send(html);
  };
  const formatTime = (ms: number | null) =>
    ms === null ? 'never' : new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

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

  router.get('/sign-in', (req, res, next) => {
    render(res, 'account-sign-in', { csrf_token: session.csrfToken(req, res), email: '' }).catch(next);
  });

  // The OAuth sign-in's own limits, the same counters: guesses here and there add up.
  router.post('/sign-in', form, ...oauth.signInLimits, async (req: Request, res, next) => {
    try {
      const email = typeof req.body?.email === 'string' ? req.body.email.trim() : '';
      const password = typeof req.body?.password === 'string' ? req.body.password : '';
      const again = (error: string, status: number) =>
        render(res, 'account-sign-in', { csrf_token: session.csrfToken(req, res), email, error }, status);
      if (!session.csrfValid(req)) return await again('The form expired; try again.', 403);
      const user = email && password ? await authenticateUser(db, email, password) : null;
      if (!user) return await again('The email or password is incorrect.', 401);
      await session.signIn(res, user.id);
      res.redirect(303, '/account/connected-apps');
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
      const apps = grants.map((grant) => ({
        grantId: grant.grantId,
        client: describeClient(grant),
        scopes: grant.scopes.map((scope) => oauth.info.scopes[scope] ?? scope),
        grantedAt: formatTime(grant.createdAt),
        lastUsedAt: formatTime(grant.lastUsedAt),
        // From the audit trail (kept AUDIT_RETENTION_DAYS): what the user may want to know before revoking.
        lastSignInAt: formatTime(activity.lastSignIn.get(grant.clientId) ?? null),
        lastRefreshAt: formatTime(activity.lastRefresh.get(grant.grantId) ?? null),
      }));
      await render(res, 'connected-apps', {
        user,
        apps,
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
        return void (await render(
          res,
          'account-error',
          { message: 'The form expired; go back and try again.' },
          403,
        ));
      const grantId = typeof req.body?.grant_id === 'string' ? req.body.grant_id : '';
      const grant = grantId ? await store.findGrant(grantId) : undefined;
      // Only the user's own grants: a forged id of someone else's grant is answered as if it did not exist.
      if (!grant || grant.userId !== userId)
        return void (await render(
          res,
          'account-error',
          { message: 'That app is not connected to your account.' },
          404,
        ));
      await oauth.revokeGrant(grant.grantId, { by: 'user', req, userId, clientId: grant.clientId });
      res.redirect(303, '/account/connected-apps?revoked=1');
    } catch (error) {
      next(error);
    }
  });

  // A refusal by the limits (429) is a page, like every other answer here.
  router.use(((error, _req, res, next) => {
    if (isStoreUnavailable(error)) {
      res.setHeader('Retry-After', '5');
      const message = 'The service is briefly unavailable. Try again in a moment.';
      return void render(res, 'account-error', { message }, 503).catch(next);
    }
    if (!isOAuthError(error)) return next(error);
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    render(res, 'account-error', { message: error.description }, error.status).catch(next);
  }) as ErrorRequestHandler);

  return router;
}

/** example-app/views, found upwards from here whether this runs from the sources (tests) or from dist/. */
function findViews(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, 'example-app', 'views');
    if (existsSync(join(candidate, 'connected-apps.ejs'))) return candidate;
  }
  throw new Error('example-app/views is missing.');
}
