// The answer to a tool call outside the token's scopes, the same for both SDK majors: 403 insufficient_scope (RFC 6750
// §3.1), so that the client can ask the user for more (the MCP spec's step-up). The challenge's scope is the token's
// scopes together with those the tool needs: a client that asks for exactly the challenge's scope (the MCP SDK 1.x
// client does) then keeps what it had instead of trading it for the one tool; a client that computes the union
// itself (SEP-2350) gets the same set. The description names only what the tool needs.
import type { ServerResponse } from 'node:http';
import { OAuthError } from '../errors';
import type { BearerAuth } from '../middleware/bearer';
import { beforeRefusingScope, refuseBearer } from '../middleware/bearer-refusal';
import { protectedResourceMetadataUrl } from '../paths';

export async function refuseTool(
  res: ServerResponse,
  auth: BearerAuth,
  refused: { tool: string; needed: readonly string[] },
): Promise<void> {
  // The router's step-up window marks the grant first, so that the refresh the client may send at once is answered.
  await beforeRefusingScope(auth, res);
  const needed = refused.needed.join(' ');
  const scope = [...new Set([...auth.scopes, ...refused.needed])].join(' ');
  const metadataUrl = protectedResourceMetadataUrl(auth.resource.href.replace(/\/+$/, ''));
  const error = new OAuthError('insufficient_scope', `The tool ${refused.tool} needs the scopes ${needed}.`);
  // RFC 9449 §7.1: a request made with a DPoP-bound token is answered in the DPoP scheme.
  const dpop = auth.jkt === undefined ? undefined : { used: true };
  refuseBearer(res, metadataUrl, error, scope, dpop);
}
