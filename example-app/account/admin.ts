// The administrators' console (/admin, served below /account where the account session's cookie is): every client,
// and every user's active grants, each with a button that ends it at once (its refresh token invalid_grant, its
// access tokens refused at /mcp). Administrators are users made with `npm run user:create -- --admin`; anyone else
// signed in gets a 403 page that lists nothing. The lists come from the library's store (listClients, listGrants).
import express, { type Request, type Response, type Router } from 'express';
import type { OAuthRouter, OAuthStore } from 'express-mcp-oauth';
import { describeClient } from 'express-mcp-oauth/pages';
import type { AppDb } from '../db/database';
import type { AccountLanguage, AccountMessageKey } from '../i18n/account-messages';
import { clientKind, type ClientKind } from '../operator-clients';
import { removeIdleRegistrations } from '../purge';
import { emailsOf, findUser, isAdmin } from '../users';
import type { AccountSession } from './session';

/** How many clients and grants the page lists at most. */
const LIMIT = 200;

export interface AdminOptions {
  db: AppDb;
  store: OAuthStore;
  oauth: OAuthRouter;
  session: AccountSession;
  render(
    req: Request,
    res: Response,
    view: string,
    data: Record<string, unknown>,
    status?: number,
  ): Promise<void>;
  languageOf(req: Request): AccountLanguage & { tag: string };
  formatTime(ms: number | null, language: AccountLanguage): string;
  /** How old an unused public registration must be for "Remove idle registrations" to delete it. */
  idleClientMs: number;
}

/** The console's words for how a client came to be stored. */
const KIND_KEYS = {
  registration: 'admin.kindRegistration',
  document: 'admin.kindDocument',
  operator: 'admin.kindOperator',
} as const satisfies Record<ClientKind, AccountMessageKey>;

export function mountAdminRoutes(router: Router, options: AdminOptions): void {
  const { db, store, oauth, session, render, languageOf, formatTime, idleClientMs } = options;
  const form = express.urlencoded({ extended: false, limit: '8kb' });

  /** The signed-in administrator; otherwise the sign-in form (coming back here), or the 403 page. */
  async function administrator(req: Request, res: Response) {
    const userId = await session.userId(req);
    const user = userId ? await findUser(db, userId) : null;
    if (!user) {
      res.redirect(302, '/account/sign-in?next=admin');
      return undefined;
    }
    if (!(await isAdmin(db, user.id))) {
      await render(req, res, 'account-error', { messageKey: 'error.notAdmin' }, 403);
      return undefined;
    }
    return user;
  }

  router.get('/admin', async (req, res, next) => {
    try {
      const user = await administrator(req, res);
      if (!user) return;
      if (!store.listClients || !store.listGrants)
        throw new Error('The store cannot list clients and grants.');
      const [clients, grants] = await Promise.all([
        store.listClients({ limit: LIMIT + 1 }),
        store.listGrants({ limit: LIMIT + 1 }),
      ]);
      const language = languageOf(req);
      const emails = await emailsOf(
        db,
        grants.map((grant) => grant.userId),
      );
      const describe = (scope: string) =>
        (language.pages.scopes && Object.hasOwn(language.pages.scopes, scope)
          ? language.pages.scopes[scope]
          : undefined) ?? (Object.hasOwn(oauth.info.scopes, scope) ? oauth.info.scopes[scope] : scope);
      const shown = grants.slice(0, LIMIT).map((grant) => ({
        grantId: grant.grantId,
        client: describeClient(grant).headline,
        user: emails.get(grant.userId) ?? grant.userId,
        scopes: grant.scopes.map(describe),
        grantedAt: formatTime(grant.createdAt, language),
        lastUsedAt: formatTime(grant.lastUsedAt, language),
      }));
      // A screen reader lists regions by name: two grants of one client and user are numbered apart.
      const seen = new Map<string, number>();
      const labelled = shown.map((grant) => {
        const base = `${grant.client} · ${grant.user}`;
        const count = (seen.get(base) ?? 0) + 1;
        seen.set(base, count);
        return { ...grant, label: count === 1 ? base : `${base} (${count})` };
      });
      await render(req, res, 'admin', {
        user,
        clients: clients.slice(0, LIMIT).map((client) => ({
          headline: describeClient(client).headline,
          clientId: client.clientId,
          kindKey: KIND_KEYS[clientKind(client)],
          created: formatTime(client.issuedAt, language),
          lastUsed: formatTime(client.lastUsedAt, language),
          activeGrants: client.activeGrants,
          disabled: client.disabled === true,
        })),
        grants: labelled,
        moreClients: clients.length > LIMIT,
        moreGrants: grants.length > LIMIT,
        limit: LIMIT,
        csrf_token: session.csrfToken(req, res),
        revoked: req.query.revoked === '1',
        changed:
          req.query.client === 'disabled'
            ? 'admin.clientDisabled'
            : req.query.client === 'enabled'
              ? 'admin.clientEnabled'
              : undefined,
        purged:
          typeof req.query.purged === 'string' && /^\d{1,6}$/.test(req.query.purged) ? req.query.purged : '',
        idleDays: Math.round(idleClientMs / 86_400_000),
      });
    } catch (error) {
      next(error);
    }
  });

  // Disabling a client ends its grants at once and refuses it from then on (oauth.setClientDisabled).
  for (const action of ['disable', 'enable'] as const)
    router.post(`/admin/clients/${action}`, form, async (req, res, next) => {
      try {
        const user = await administrator(req, res);
        if (!user) return;
        if (!session.csrfValid(req))
          return void (await render(req, res, 'account-error', { messageKey: 'error.formExpired' }, 403));
        const clientId = typeof req.body?.client_id === 'string' ? req.body.client_id : '';
        const disable = action === 'disable';
        if (
          !clientId ||
          !(await oauth.setClientDisabled(clientId, disable, { req, actor: `user:${user.id}` }))
        )
          return void (await render(req, res, 'account-error', { messageKey: 'error.notConnected' }, 404));
        res.redirect(303, `/account/admin?client=${disable ? 'disabled' : 'enabled'}`);
      } catch (error) {
        next(error);
      }
    });

  // The scheduled purge's work, now: public registrations older than IDLE_CLIENT_DAYS that nothing names.
  router.post('/admin/purge-idle', form, async (req, res, next) => {
    try {
      const user = await administrator(req, res);
      if (!user) return;
      if (!session.csrfValid(req))
        return void (await render(req, res, 'account-error', { messageKey: 'error.formExpired' }, 403));
      const removed = await removeIdleRegistrations(store, idleClientMs);
      res.redirect(303, `/account/admin?purged=${removed}`);
    } catch (error) {
      next(error);
    }
  });

  router.post('/admin/revoke', form, async (req, res, next) => {
    try {
      const user = await administrator(req, res);
      if (!user) return;
      if (!session.csrfValid(req))
        return void (await render(req, res, 'account-error', { messageKey: 'error.formExpired' }, 403));
      const grantId = typeof req.body?.grant_id === 'string' ? req.body.grant_id : '';
      const grant = grantId ? await store.findGrant(grantId) : undefined;
      if (!grant)
        return void (await render(req, res, 'account-error', { messageKey: 'error.notConnected' }, 404));
      // The grant.revoked event names the administrator's act (by: 'admin'), with whose grant it was.
      await oauth.revokeGrant(grant.grantId, {
        by: 'admin',
        req,
        userId: grant.userId,
        clientId: grant.clientId,
        actor: `user:${user.id}`,
      });
      res.redirect(303, '/account/admin?revoked=1');
    } catch (error) {
      next(error);
    }
  });
}
