// The token endpoint (RFC 6749 §3.2): authorization_code with PKCE (§4.1.3, RFC 7636 §4.6) and refresh_token
// with rotation and reuse detection (§6, RFC 9700 §4.14); client_credentials and jwt-bearer in files of their own.
import type { Request, RequestHandler, Response } from 'express';
import { handle, type OAuthContext } from '../context';
import { isValidCodeVerifier, verifyS256 } from '../crypto/pkce';
import { boundKeyOf, issueRefreshToken, refreshTokenKey } from '../crypto/refresh-token';
import { requireBoundKey, tokenRequestProof, type TokenRequestProof } from './token-dpop';
import { rotateRefreshToken } from '../grants/rotation';
import { hashSecret } from '../crypto/secrets';
import { OAuthError, isOAuthError } from '../errors';
import { authenticateClient, type ClientAuthenticationDeps } from './client-authentication';
import { issueClientCredentialsToken } from './client-credentials';
import { issueIdJagToken } from './jwt-bearer';
import { JWT_BEARER_GRANT } from '../grants/id-jag-options';
import type { AuthorizationCodeRecord, ClientRecord, GrantRecord } from '../store/types';
import { writeJson } from '../util/json-response';
import { readParam, readResource, requireParam } from '../util/params';
import { parseScope } from '../util/scopes';

interface TokenResponse {
  access_token: string;
  /** DPoP for a token bound to the proof's key (RFC 9449 §5), Bearer otherwise. */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

/** What the token endpoint uses: client authentication, the store, the signer, events and grant revocation. */
type TokenDeps = ClientAuthenticationDeps &
  Pick<OAuthContext, 'signer' | 'emit' | 'revokeGrant' | 'issuerKeys'>;

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

const SUPPORTED_GRANTS = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  JWT_BEARER_GRANT,
] as const;
const isSupportedGrant = (value: string | undefined): value is (typeof SUPPORTED_GRANTS)[number] =>
  (SUPPORTED_GRANTS as readonly (string | undefined)[]).includes(value);

export function tokenHandler(ctx: TokenDeps): RequestHandler {
  return handle(async function tokenEndpoint(req, res) {
    try {
      await answerTokenRequest(ctx, req, res);
    } catch (error) {
      if (isOAuthError(error)) {
        // Read without throwing: a repeated grant_type must not replace the refusal being reported.
        const grantType = (req.body as Record<string, unknown> | undefined)?.grant_type;
        ctx.emit(req, 'token.refused', {
          reason: error.code,
          ...(typeof grantType === 'string' && isSupportedGrant(grantType) ? { grantType } : {}),
        });
      }
      throw error;
    }
  });
}

async function answerTokenRequest(ctx: TokenDeps, req: Request, res: Response): Promise<void> {
  const client = (await authenticateClient(ctx, req))!;
  const grantType = requireParam(req.body, 'grant_type');
  // jwt-bearer is offered only with enterprise IdPs configured (and a store that keeps assertion ids).
  if (!isSupportedGrant(grantType) || (grantType === JWT_BEARER_GRANT && !ctx.config.enterpriseIdps)) {
    throw new OAuthError(
      'unsupported_grant_type',
      `Use grant_type authorization_code, refresh_token or client_credentials${
        ctx.config.enterpriseIdps ? ` or ${JWT_BEARER_GRANT}` : ''
      }.`,
    );
  }
  // client_credentials and jwt-bearer are in no registration or document (util/client-metadata.ts): only the
  // operator's clients.
  if (!client.grantTypes.includes(grantType)) {
    throw new OAuthError('unauthorized_client', `This client did not register the ${grantType} grant type.`);
  }
  // RFC 9449 §5: the key every token of this answer is bound to, when the request carries a DPoP proof. Checked now,
  // so that a bad proof spends no code or token; its jti is recorded below.
  const proof = tokenRequestProof(ctx, req, client);
  const { jkt } = proof;
  const body =
    grantType === 'authorization_code'
      ? await exchangeCode(ctx, req, client, proof)
      : grantType === 'refresh_token'
        ? await refresh(ctx, req, client, proof)
        : grantType === 'client_credentials'
          ? await issueClientCredentialsToken(ctx, req, client, jkt)
          : await issueIdJagToken(ctx, req, client, jkt);
  // RFC 9449 §11.1: the proof's jti is recorded only once the grant is known good, so a request refused for its code,
  // verifier, refresh token, assertion or scope leaves no row (a stranger with a key of their own could fill the table
  // otherwise), and before the answer is sent, so a proof used before still gets no tokens. The code grant and a bound
  // refresh token record it just before the code is spent or the token rotated (see there); the other grants here, at
  // the latest (a second call does nothing). What such a grant did by now stays done (its event too, then
  // token.refused): an unbound refresh token replayed with its proof within the reuse window gets the same successor,
  // refused here; a fresh secret or ID-JAG with an old proof is its holder's own to spend, wasted, never given out.
  await proof.useJti();
  // §8.2: with nonces on, every answer carries the current one, so a client need not be refused to learn the next.
  const nonces = ctx.config.dpop?.nonces;
  if (nonces) res.setHeader('DPoP-Nonce', nonces.current());
  // RFC 6749 §5.1: responses with tokens must not be cached.
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  writeJson(res, 200, body);
}

async function exchangeCode(
  ctx: TokenDeps,
  req: Request,
  client: ClientRecord,
  proof: TokenRequestProof,
): Promise<TokenResponse> {
  const { store } = ctx;
  const { jkt } = proof;
  const code = requireParam(req.body, 'code');
  const redirectUri = requireParam(req.body, 'redirect_uri');
  const verifier = requireParam(req.body, 'code_verifier');
  if (!isValidCodeVerifier(verifier)) {
    throw new OAuthError(
      'invalid_request',
      'code_verifier must be 43 to 128 characters of [A-Z a-z 0-9 - . _ ~].',
    );
  }
  const codeHash = hashSecret(code);
  // Everything is checked before the code is consumed, so a request from the wrong client cannot burn it.
  const record = await store.findAuthorizationCode(codeHash);
  if (!record) throw invalidGrant('The authorization code is invalid or has expired.');
  if (record.clientId !== client.clientId)
    throw invalidGrant('The authorization code was issued to another client.');
  if (record.redirectUri !== redirectUri)
    throw invalidGrant('redirect_uri differs from the one in the authorization request.');
  const resource =
    readParam(req.body, 'resource') === undefined
      ? record.resource
      : readResource(req.body, ctx.config.resources);
  if (resource !== record.resource)
    throw new OAuthError('invalid_target', 'The resource differs from the one authorized.');
  // RFC 9449 §10: a code issued for a dpop_jkt carries it (authorize/handlers.ts).
  requireBoundKey(codeBoundKey(code), jkt, 'authorization code');

  if (!verifyS256(verifier, record.codeChallenge)) {
    // The code is burned by a wrong verifier: whoever holds a stolen code gets exactly one guess.
    await store.consumeAuthorizationCode(codeHash);
    await ctx.revokeGrant(record.grantId);
    ctx.emit(req, 'code.replayed', { ...codeIds(record), reason: 'pkce_mismatch' });
    throw invalidGrant('code_verifier does not match the code_challenge.');
  }
  // The request is good but for its proof's jti, which is recorded before the code is spent: a whole captured request
  // replayed is then refused as a replayed proof, and its code (already spent) is not taken for a replayed code, which
  // would revoke the grant (RFC 9449 §11.1).
  await proof.useJti();
  // One transaction marks the code used and saves the first refresh token under its (still active) grant.
  // RFC 9449 §5: a public client's refresh tokens are bound to its DPoP key (a confidential client's are bound to
  // its credentials already).
  const refreshToken = client.grantTypes.includes('refresh_token')
    ? issueRefreshToken(record.grantId, client.tokenEndpointAuthMethod === 'none' ? jkt : undefined)
    : undefined;
  const outcome = await store.consumeAuthorizationCode(
    codeHash,
    refreshToken === undefined ? undefined : { key: refreshToken.key },
  );
  if (outcome.status === 'replayed') {
    // RFC 6749 §4.1.2: a code used twice revokes everything issued from it.
    await ctx.revokeGrant(record.grantId);
    ctx.emit(req, 'code.replayed', { ...codeIds(record), reason: 'replay' });
    throw invalidGrant('The authorization code was already used; the tokens issued from it are revoked.');
  }
  if (outcome.status === 'not_found') throw invalidGrant('The authorization code is invalid or has expired.');
  if (!outcome.grant) throw invalidGrant('The authorization was revoked.');
  ctx.emit(req, 'code.redeemed', {
    ...codeIds(record),
    scopes: record.scopes,
    ...(jkt === undefined ? {} : { jkt }),
  });
  return accessTokenResponse(ctx, outcome.grant, record.scopes, refreshToken?.token, jkt);
}

/** The DPoP key an authorization code was issued for ("<jkt>.<secret>", authorize/handlers.ts), if any. */
function codeBoundKey(code: string): string | undefined {
  const dot = code.indexOf('.');
  return dot > 0 ? code.slice(0, dot) : undefined;
}

async function refresh(
  ctx: TokenDeps,
  req: Request,
  client: ClientRecord,
  proof: TokenRequestProof,
): Promise<TokenResponse> {
  const { store, config } = ctx;
  const { jkt } = proof;
  const presentedToken = requireParam(req.body, 'refresh_token');
  const presentedKey = refreshTokenKey(presentedToken);
  // RFC 9449 §5: a bound token goes no further without a proof of its key; nothing is used up. Only a token this
  // client holds is said to be bound: any other is unknown, as it would be without DPoP.
  const bound = boundKeyOf(presentedToken);
  if (bound !== undefined && bound !== jkt) {
    const known = await store.findRefreshToken(presentedKey);
    if (!known || known.token.clientId !== client.clientId)
      throw invalidGrant('The refresh token is invalid or has expired.');
    requireBoundKey(bound, jkt, 'refresh token');
  }
  const scopeParam = readParam(req.body, 'scope');
  const resourceParam = readParam(req.body, 'resource');
  let scopes: string[] | undefined;
  if (scopeParam !== undefined || resourceParam !== undefined) {
    // Checked before rotating, so a bad request does not use the token up. RFC 6749 §6: narrower, never wider.
    const known = await store.findRefreshToken(presentedKey);
    if (!known || known.token.clientId !== client.clientId)
      throw invalidGrant('The refresh token is invalid or has expired.');
    const { grant } = known;
    if (grant.revokedAt !== null) throw invalidGrant('The authorization was revoked.');
    scopes = scopeParam === undefined ? grant.scopes : parseScope(scopeParam, new Set(grant.scopes));
    if (scopes.length === 0) throw new OAuthError('invalid_scope', 'The scope must not be empty.');
    if (resourceParam !== undefined && readResource(req.body, config.resources) !== grant.resource) {
      throw new OAuthError('invalid_target', 'The resource differs from the one authorized.');
    }
  }

  // A bound token's proof is recorded before the rotation, once the token is known to be this client's (a made-up token
  // bound to a key of one's own leaves no row): a whole captured request replayed after the bound token's reuse window
  // (a minute) but within its proof's life (five) is then refused as a replayed proof, not taken for reuse of the
  // token, which would revoke the grant (RFC 9449 §11.1).
  if (bound !== undefined) {
    const known = await store.findRefreshToken(presentedKey);
    if (!known || known.token.clientId !== client.clientId)
      throw invalidGrant('The refresh token is invalid or has expired.');
    await proof.useJti();
  }
  const outcome = await rotateRefreshToken(store, {
    presentedToken,
    clientId: client.clientId,
    policy: config.refreshTokenReuse,
    now: config.now(),
  });
  if (outcome.status === 'reused') {
    // The rule revoked the grant in the store; this also forgets it in this process's bearer cache at once.
    await ctx.revokeGrant(outcome.grantId);
    ctx.emit(req, 'refresh_token.reused', {
      clientId: client.clientId,
      grantId: outcome.grantId,
      reason: outcome.reason,
      ...(outcome.firstUsedAt === null ? {} : { firstUsedAt: outcome.firstUsedAt }),
    });
    throw invalidGrant('The refresh token was already used; the authorization is revoked.');
  }
  if (outcome.status === 'invalid') throw invalidGrant('The refresh token is invalid or has expired.');
  const { grant } = outcome;
  ctx.emit(req, 'token.refreshed', {
    clientId: client.clientId,
    userId: grant.userId,
    grantId: grant.grantId,
    scopes: scopes ?? grant.scopes,
    // A token presented again (shared by several processes, a race, a lost response): it got the same successor.
    ...(outcome.firstUsedAt === null ? {} : { firstUsedAt: outcome.firstUsedAt }),
    ...(jkt === undefined ? {} : { jkt }),
  });
  // Without a scope parameter the token carries the grant's whole scope (the rotation already checked the rest).
  return accessTokenResponse(
    ctx,
    outcome.grant,
    scopes ?? outcome.grant.scopes,
    outcome.successor.token,
    jkt,
  );
}

/** The ids an event about a code carries. */
const codeIds = (code: AuthorizationCodeRecord) => ({
  clientId: code.clientId,
  userId: code.userId,
  grantId: code.grantId,
});

function accessTokenResponse(
  ctx: Pick<OAuthContext, 'config' | 'signer'>,
  grant: GrantRecord,
  scopes: string[],
  refreshToken: string | undefined,
  jkt: string | undefined,
): TokenResponse {
  const { config, signer } = ctx;
  // Nothing outlives the grant: the last access token expires with it.
  const expiresIn = Math.min(
    config.lifetimes.accessToken,
    Math.floor((grant.expiresAt - config.now()) / 1000),
  );
  if (expiresIn <= 0) throw invalidGrant('The authorization has expired.');
  const scope = scopes.join(' ');
  const { token } = signer.signAccessToken({
    issuer: config.issuer,
    subject: grant.userId,
    audience: grant.resource ?? config.resources[0]!,
    clientId: grant.clientId,
    scope,
    grantId: grant.grantId,
    expiresIn,
    jkt,
  });
  return {
    access_token: token,
    token_type: jkt === undefined ? 'Bearer' : 'DPoP',
    expires_in: expiresIn,
    ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
    scope,
  };
}
