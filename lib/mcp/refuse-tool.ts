// The answer to a tool call outside the token's scopes, the same for both SDK majors: 403 insufficient_scope naming
// the scopes the tool needs (RFC 6750 §3.1), so that the client can ask the user for more (the MCP spec's step-up).
import type { ServerResponse } from 'node:http';
import { OAuthError } from '../errors';
import type { BearerAuth } from '../middleware/bearer';
import { refuseBearer } from '../middleware/bearer-refusal';
import { protectedResourceMetadataUrl } from '../paths';

export function refuseTool(
  res: ServerResponse,
  auth: BearerAuth,
  refused: { tool: string; needed: readonly string[] },
): void {
  const scope = refused.needed.join(' ');
  const metadataUrl = protectedResourceMetadataUrl(auth.resource.href.replace(/\/+$/, ''));
  const error = new OAuthError('insufficient_scope', `The tool ${refused.tool} needs the scopes ${scope}.`);
  // RFC 9449 §7.1: a request made with a DPoP-bound token is answered in the DPoP scheme.
  const dpop = auth.jkt === undefined ? undefined : { used: true };
  refuseBearer(res, metadataUrl, error, scope, dpop);
}
