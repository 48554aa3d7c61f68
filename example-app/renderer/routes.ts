// The document renderer: a downstream API of the business service, served by the app itself so that the
// token-exchange example runs end to end. It believes nothing a caller says about whom it acts for: it takes only a
// token whose audience is the renderer (an exchanged one: the tool server's own /mcp tokens are refused here, as the
// renderer's are at /mcp), with dokument:read, and renders documents of that token's user's company.
import express, { type Router } from 'express';
import type { AuthenticatedRequest, OAuthRouter } from 'express-mcp-oauth';
import type { AppDb } from '../db/database';
import { getDocument } from '../services/documents';
import { ServiceError } from '../services/errors';
import { findUser } from '../users';

/** What the renderer answers: the document as a printable HTML page, and for whom and through whom it rendered. */
export interface RenderedDocument {
  id: number;
  title: string;
  format: 'text/html';
  html: string;
  /** The user the token named, and the chain of actors (RFC 8693 §4.1) it carried. */
  renderedFor: { userId: string; actor: unknown };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

export function createRendererRoutes({
  db,
  oauth,
  resource,
}: {
  db: AppDb;
  oauth: OAuthRouter;
  /** The renderer's resource identifier: the audience of the tokens it takes. */
  resource: string;
}): Router {
  const router = express.Router();
  router.get(
    '/v1/documents/:id',
    oauth.requireBearer({ resource, scopes: ['dokument:read'] }),
    async (req, res, next) => {
      const { auth } = req as AuthenticatedRequest;
      try {
        // A machine's token names no user, so no company's documents: the renderer serves people's.
        const user = auth.actor === 'user' ? await findUser(db, auth.userId) : null;
        if (!user) {
          res.status(403).json({ error: 'access_denied', error_description: 'This token names no user.' });
          return;
        }
        const id = Number(req.params.id);
        if (!Number.isSafeInteger(id) || id < 1) {
          res.status(404).json({ error: 'not_found', error_description: 'No such document.' });
          return;
        }
        const document = (await getDocument(db, user.companyId, id)) as { title: string; content: string };
        const rendered: RenderedDocument = {
          id,
          title: document.title,
          format: 'text/html',
          html:
            `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(document.title)}</title></head>` +
            `<body><article><h1>${escapeHtml(document.title)}</h1>` +
            `<pre>${escapeHtml(document.content)}</pre></article></body></html>`,
          renderedFor: { userId: auth.userId, actor: auth.act ?? null },
        };
        res.setHeader('Cache-Control', 'no-store');
        res.json(rendered);
      } catch (error) {
        if (error instanceof ServiceError) {
          res.status(404).json({ error: 'not_found', error_description: error.message });
          return;
        }
        next(error);
      }
    },
  );
  return router;
}
