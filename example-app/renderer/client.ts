// How the render_document tool reaches the document renderer: a token for the renderer alone, obtained by exchanging
// the user's /mcp token in process (router.downstreamToken: RFC 8693's rules, the tool server as the actor, only
// dokument:read), then an HTTP request to the renderer with it, as to any other service. The user's own token never
// leaves the tool server: a downstream API that leaked it could not use it at /mcp, nor the renderer's at /mcp.
import { isOAuthError, type OAuthRouter } from 'express-mcp-oauth';
import { notFound, ServiceError } from '../services/errors';
import type { RenderedDocument } from './routes';

export type RenderDocument = (auth: { token: string }, documentId: number) => Promise<RenderedDocument>;

export function createRendererClient({
  oauth,
  resource,
  origin,
  timeoutMs = 10_000,
}: {
  oauth: Pick<OAuthRouter, 'downstreamToken'>;
  /** The renderer's resource identifier. */
  resource: string;
  /** Where this instance reaches the renderer (itself, on loopback). */
  origin: string;
  timeoutMs?: number;
}): RenderDocument {
  return async (auth, documentId) => {
    let token;
    try {
      token = await oauth.downstreamToken(auth, { resource, scope: 'dokument:read' });
    } catch (error) {
      // The renderer acts for people: a machine client's own token, say, is refused, and the model is told why.
      if (isOAuthError(error))
        throw new ServiceError(
          'invalid',
          `The document renderer cannot act for this token: ${error.description}`,
        );
      throw error;
    }
    const res = await fetch(`${origin}/renderer/v1/documents/${documentId}`, {
      headers: { authorization: `Bearer ${token.accessToken}`, accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.status === 404) throw notFound('document', documentId);
    if (!res.ok) throw new Error(`The document renderer answered ${res.status}.`);
    return (await res.json()) as RenderedDocument;
  };
}
