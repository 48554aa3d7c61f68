// The token endpoint (RFC 6749 §3.2): authenticates the client, checks its DPoP proof, and hands the request to the
// grant type it names (grants/table.ts), which issues the answer or throws.
import type { Request, RequestHandler, Response } from 'express';
import { authenticateClient } from '../clients/authentication';
import { handle } from '../context';
import { tokenRequestProof } from '../dpop/token-binding';
import { OAuthError, isOAuthError } from '../errors';
import type { GrantDeps } from '../grants/grant-type';
import { isKnownGrantType, offeredGrants } from '../grants/table';
import { writeJson } from '../util/json-response';
import { annotateSpan } from '../telemetry/spans';
import { requireParam } from '../util/params';
import type { AccessTokenResponse } from '../grants/access-token-response';
import { isWorkloadRequest, issueWorkloadToken } from '../workload/grant';

export function tokenHandler(ctx: GrantDeps): RequestHandler {
  return handle(async function tokenEndpoint(req, res) {
    try {
      await answerTokenRequest(ctx, req, res);
    } catch (error) {
      if (isOAuthError(error)) {
        // Read without throwing: a repeated grant_type must not replace the refusal being reported.
        const grantType = (req.body as Record<string, unknown> | undefined)?.grant_type;
        ctx.emit(req, 'token.refused', {
          reason: error.code,
          ...(isKnownGrantType(grantType) ? { grantType } : {}),
        });
      }
      throw error;
    }
  });
}

async function answerTokenRequest(ctx: GrantDeps, req: Request, res: Response): Promise<void> {
  // SEP-1933: a workload's jwt-bearer grant names no client at all; every other request authenticates one. A request
  // that names a client, even a public one by client_id alone, goes the client's way and is judged as that client's.
  const client = await authenticateClient(ctx, req, { optional: isWorkloadRequest(ctx.config, req) });
  if (!client) {
    const { body, useJti } = await issueWorkloadToken(ctx, req);
    await useJti();
    return send(ctx, res, body);
  }
  annotateSpan({ clientId: client.clientId });
  const grantType = requireParam(req.body, 'grant_type');
  const offered = offeredGrants(ctx.config);
  const grant = offered.find((candidate) => candidate.type === grantType);
  // The span names only a grant type this server knows: a made-up value adds none.
  if (grant) annotateSpan({ grantType: grant.type });
  if (!grant) {
    const names = offered.map((candidate) => candidate.type);
    throw new OAuthError(
      'unsupported_grant_type',
      `Use grant_type ${names.slice(0, -1).join(', ')} or ${names.at(-1)}.`,
    );
  }
  // client_credentials and jwt-bearer are in no registration or document (clients/metadata.ts): only the
  // operator's clients.
  if (!client.grantTypes.includes(grantType)) {
    throw new OAuthError('unauthorized_client', `This client did not register the ${grantType} grant type.`);
  }
  // RFC 9449 §5: the key every token of this answer is bound to, when the request carries a DPoP proof. Checked now,
  // so that a bad proof spends no code or token; its jti is recorded below.
  const proof = tokenRequestProof(ctx, req, client);
  const body = await grant.issue(ctx, { req, client, proof });
  // RFC 9449 §11.1: the proof's jti is recorded only once the grant is known good, so a request refused for its code,
  // verifier, refresh token, assertion or scope leaves no row (a stranger with a key of their own could fill the table
  // otherwise), and before the answer is sent, so a proof used before still gets no tokens. The code grant and a bound
  // refresh token record it just before the code is spent or the token rotated (see there); the other grants here, at
  // the latest (a second call does nothing). What such a grant did by now stays done (its event too, then
  // token.refused): an unbound refresh token replayed with its proof within the reuse window gets the same successor,
  // refused here; a fresh secret or ID-JAG with an old proof is its holder's own to spend, wasted, never given out.
  await proof.useJti();
  send(ctx, res, body);
}

function send(ctx: GrantDeps, res: Response, body: AccessTokenResponse): void {
  // §8.2: with nonces on, every answer carries the current one, so a client need not be refused to learn the next.
  const nonces = ctx.config.dpop?.nonces;
  if (nonces) res.setHeader('DPoP-Nonce', nonces.current());
  // RFC 6749 §5.1: responses with tokens must not be cached.
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  writeJson(res, 200, body);
}
