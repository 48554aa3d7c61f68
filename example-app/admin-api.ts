// The admin API ({base}/admin/api): what the administrators' console shows and does, as JSON, for automation. Under
// the console's rule: only an administrator's. Its tokens come from the client_credentials grant alone, for the
// resource {base}/admin/api with the scope "admin", which the library keeps out of the consent catalogue
// (operatorResources): no person is asked for it and no registered or document client can get it. The client is one
// the operator made with `npm run client:create -- --grant-types client_credentials --user <administrator> --scope
// admin`, and each request checks that its user is an administrator still, so taking the role away ends its access.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { AuthenticatedRequest, OAuthRouter, OAuthStore } from 'express-mcp-oauth';
import { isStoreUnavailable } from 'express-mcp-oauth';
import type { AppDb } from './db/database';
import { actingUserId, clientKind } from './operator-clients';
import { removeIdleRegistrations } from './purge';
import { emailsOf, isAdmin } from './users';

/** A page's size when none is asked for, and the most one may ask for. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

export interface AdminApiOptions {
  db: AppDb;
  store: OAuthStore;
  oauth: OAuthRouter;
  /** The admin API's resource identifier, `${base}/admin/api`: one of the router's operatorResources. */
  resource: string;
  /** How old an unused public registration must be for purge-idle to delete it. */
  idleClientMs: number;
  /** Told of an unexpected error, answered 500 server_error (the app logs it). */
  onError(error: unknown, req: Request): void;
}

/** An answer the API gives on purpose: its status and an RFC 6749 §5.2-style body. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Control characters (C0, DEL): never in an id, and a NUL is refused by PostgreSQL as a server error. */
const CONTROL = /[\u0000-\u001f\u007f]/;

/** An id from the path: at most 2,000 characters, no control character. */
function readId(value: unknown, what: string): string {
  const id = String(value);
  if (!id || id.length > 2000 || CONTROL.test(id))
    throw new ApiError(400, 'invalid_request', `That is not a ${what} id.`);
  return id;
}

/** `limit`: a whole number from 1 to MAX_LIMIT; a cursor (`after`, `before`): a string of at most 2,000. */
function readPage(req: Request, cursor: 'after' | 'before'): { limit: number; cursor: string | undefined } {
  const { limit: limitText, [cursor]: cursorText, ...rest } = req.query;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined)
    throw new ApiError(
      400,
      'invalid_request',
      `Unknown parameter "${unknown.slice(0, 50)}": use limit and ${cursor}.`,
    );
  if (limitText !== undefined && (typeof limitText !== 'string' || !/^\d{1,3}$/.test(limitText)))
    throw new ApiError(400, 'invalid_request', `limit must be a whole number from 1 to ${MAX_LIMIT}.`);
  const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
  if (limit < 1 || limit > MAX_LIMIT)
    throw new ApiError(400, 'invalid_request', `limit must be a whole number from 1 to ${MAX_LIMIT}.`);
  if (
    cursorText !== undefined &&
    (typeof cursorText !== 'string' || !cursorText || cursorText.length > 2000 || CONTROL.test(cursorText))
  )
    throw new ApiError(400, 'invalid_request', `${cursor} must be the "next" value of the previous page.`);
  return { limit, cursor: cursorText };
}

export function createAdminApi(options: AdminApiOptions): Router {
  const { db, store, oauth, resource, idleClientMs, onError } = options;
  /** Who acts, for the audit events: the automation client, by its id. */
  const actorOf = (req: Request) => `client:${(req as AuthenticatedRequest).auth.clientId}`;
  const router = express.Router();
  const run =
    (handler: (req: Request, res: Response) => Promise<unknown>) =>
    (req: Request, res: Response, next: NextFunction) =>
      void handler(req, res).then((body) => {
        if (!res.headersSent) res.json(body);
      }, next);

  router.use((_req, res, next) => {
    // Lists of who is connected to what: never kept by a cache on the way.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  router.use(oauth.requireBearer({ resource, scopes: ['admin'] }));
  // The console's rule: the client's user must be an administrator now, not only when the client was made.
  router.use((req, _res, next) => {
    const auth = (req as AuthenticatedRequest).auth;
    (async () => {
      const client = auth.actor === 'client' ? await store.findClient(auth.clientId) : undefined;
      const userId = actingUserId(client);
      if (!userId || !(await isAdmin(db, userId)))
        throw new ApiError(
          403,
          'access_denied',
          'This client does not act for an administrator: make one with npm run user:create -- --admin.',
        );
    })().then(() => next(), next);
  });

  router.get(
    '/clients',
    run(async (req) => {
      const { limit, cursor } = readPage(req, 'after');
      const page = await store.listClients!({
        limit: limit + 1,
        ...(cursor === undefined ? {} : { after: cursor }),
      });
      const shown = page.slice(0, limit);
      return {
        clients: shown.map((client) => ({
          client_id: client.clientId,
          client_name: client.clientName,
          kind: clientKind(client),
          grant_types: client.grantTypes,
          created_at: iso(client.issuedAt),
          last_used_at: iso(client.lastUsedAt),
          active_grants: client.activeGrants,
          disabled: client.disabled === true,
        })),
        next: page.length > limit ? shown.at(-1)!.clientId : null,
      };
    }),
  );

  router.get(
    '/grants',
    run(async (req) => {
      const { limit, cursor } = readPage(req, 'before');
      const page = await store.listGrants!({
        limit: limit + 1,
        ...(cursor === undefined ? {} : { before: cursor }),
      });
      const shown = page.slice(0, limit);
      const emails = await emailsOf(
        db,
        shown.map((grant) => grant.userId),
      );
      return {
        grants: shown.map((grant) => ({
          grant_id: grant.grantId,
          client_id: grant.clientId,
          client_name: grant.clientName,
          // A machine client's own token names the client as its subject, and no user.
          user_id: grant.userId === grant.clientId ? null : grant.userId,
          user_email: emails.get(grant.userId) ?? null,
          scopes: grant.scopes,
          resource: grant.resource ?? oauth.info.resources[0],
          granted_at: iso(grant.createdAt),
          last_used_at: iso(grant.lastUsedAt),
          expires_at: iso(grant.expiresAt),
        })),
        next: page.length > limit ? shown.at(-1)!.grantId : null,
      };
    }),
  );

  const json = express.json({ limit: '1kb', strict: true });
  router.post(
    '/grants/:grantId/revoke',
    json,
    run(async (req) => {
      const grant = await store.findGrant(readId(req.params.grantId, 'grant'));
      if (!grant || !(await store.isGrantActive(grant.grantId)))
        throw new ApiError(404, 'not_found', 'No active grant has this id.');
      // The grant.revoked event names the administrator's act, with whose grant it was.
      await oauth.revokeGrant(grant.grantId, {
        by: 'admin',
        req,
        userId: grant.userId,
        clientId: grant.clientId,
        actor: actorOf(req),
      });
      return { grant_id: grant.grantId, revoked: true };
    }),
  );

  for (const action of ['disable', 'enable'] as const)
    router.post(
      `/clients/:clientId/${action}`,
      json,
      run(async (req) => {
        const clientId = readId(req.params.clientId, 'client');
        const client = await store.findClient(clientId);
        if (!client) throw new ApiError(404, 'not_found', 'No stored client has this id.');
        if (clientKind(client) === 'document')
          throw new ApiError(
            400,
            'invalid_request',
            'A metadata-document client is fetched from its URL: it cannot be disabled here.',
          );
        await oauth.setClientDisabled(clientId, action === 'disable', { req, actor: actorOf(req) });
        return { client_id: clientId, disabled: action === 'disable' };
      }),
    );

  router.post(
    '/purge-idle',
    json,
    run(async () => ({ removed: await removeIdleRegistrations(store, idleClientMs) })),
  );

  router.use((_req, _res, next) => next(new ApiError(404, 'not_found', 'No such admin API route.')));
  // One place maps what went wrong to an answer: the API's own refusals, a body that is not JSON, a store outage.
  router.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    const answer = (status: number, code: string, description: string) =>
      void res.status(status).json({ error: code, error_description: description });
    if (error instanceof ApiError) return answer(error.status, error.error, error.description);
    // What Express and its body parser throw for what the client sent: a body too large, not JSON, a bad % escape.
    const status = (error as { status?: unknown } | null)?.status;
    if (status === 413)
      return answer(413, 'invalid_request', 'The body is too large: these routes take none.');
    if (typeof status === 'number' && status >= 400 && status < 500)
      return answer(400, 'invalid_request', 'Send a JSON body (or none) and a well-formed URL.');
    if (isStoreUnavailable(error)) {
      res.setHeader('Retry-After', '5');
      return answer(503, 'temporarily_unavailable', 'Try again in a moment.');
    }
    onError(error, req);
    answer(500, 'server_error', 'Something went wrong on the server; it has been logged.');
  });
  return router;
}
