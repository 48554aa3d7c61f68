// The device_code grant (RFC 8628 §3.4, §3.5): a device polls with its device code until the user has decided on
// another device; after "Allow" it gets the same tokens as the code grant, once.
import { issueRefreshToken } from '../crypto/refresh-token';
import { hashSecret } from '../crypto/secrets';
import { DEVICE_CODE_GRANT } from '../device/options';
import { OAuthError } from '../errors';
import { requireParam } from '../util/params';
import type { AccessTokenResponse } from './access-token-response';
import { grantTokenResponse, invalidGrant } from './grant-token-response';
import type { GrantDeps, GrantRequest, GrantType } from './grant-type';

/** The longest a device is told to wait between polls, however often it is told to slow down (seconds). */
const MAX_POLL_INTERVAL = 60;

export const deviceCodeGrant: GrantType = {
  type: DEVICE_CODE_GRANT,
  enabled: (config) => config.deviceAuthorization !== undefined,
  issue: redeemDeviceCode,
};

async function redeemDeviceCode(
  ctx: GrantDeps,
  { req, client, proof }: GrantRequest,
): Promise<AccessTokenResponse> {
  const { store, config } = ctx;
  const { jkt } = proof;
  const deviceCodeHash = hashSecret(requireParam(req.body, 'device_code'));
  const found = await store.findDeviceAuthorization!(deviceCodeHash, 'device_code');
  // §3.4: the code is the client's own; another client's is as unknown as a made-up one.
  if (!found || found.clientId !== client.clientId) throw invalidGrant('The device code is invalid.');
  const now = config.now();
  if (found.expiresAt <= now)
    throw new OAuthError('expired_token', 'The device code has expired: start again on the device.');
  if (found.status === 'redeemed') throw invalidGrant('The device code was already used.');
  // §3.5: a device polling faster than its interval is told to slow down. The record of its last poll lives one
  // interval, in the store, so that every instance sees it.
  if (
    !(await store.useAssertionId!(
      `device-poll ${client.clientId}`,
      deviceCodeHash,
      now + found.interval * 1000,
    ))
  ) {
    // §3.5: "the interval MUST be increased by 5 seconds for this and all subsequent requests": the client must, and
    // the store's interval, which the check above reads, makes a client that does not wait that much longer too.
    const raised = Math.min(found.interval + 5, MAX_POLL_INTERVAL);
    await store.slowDownDeviceAuthorization?.(deviceCodeHash, raised);
    throw new OAuthError(
      'slow_down',
      `Poll at most once every ${raised} seconds: 5 seconds more after each slow_down (RFC 8628 §3.5).`,
    );
  }
  if (found.status === 'pending')
    throw new OAuthError(
      'authorization_pending',
      'The user has not decided yet: poll again after the interval.',
    );
  if (found.status === 'denied')
    // §3.5 answers it as a token endpoint error: 400, not the 403 of a page.
    throw new OAuthError('access_denied', 'The user denied the request.', { status: 400 });
  // The request is good but for its proof's jti, recorded before the approval is spent (as the code grant does).
  await proof.useJti();
  // RFC 9449 §5: a public client's refresh tokens are bound to the DPoP key of the proof that redeems.
  const refreshToken = client.grantTypes.includes('refresh_token')
    ? issueRefreshToken(found.grantId!, client.tokenEndpointAuthMethod === 'none' ? jkt : undefined)
    : undefined;
  const outcome = await store.redeemDeviceAuthorization!(
    deviceCodeHash,
    refreshToken === undefined ? undefined : { key: refreshToken.key },
  );
  if (outcome.status !== 'redeemed') throw invalidGrant('The device code was already used.');
  if (!outcome.grant) throw invalidGrant('The authorization was revoked.');
  ctx.emit(req, 'token.issued', {
    grantType: DEVICE_CODE_GRANT,
    clientId: client.clientId,
    userId: outcome.grant.userId,
    grantId: outcome.grant.grantId,
    scopes: outcome.grant.scopes,
    ...(jkt === undefined ? {} : { jkt }),
  });
  // No earlier grant is replaced: a device request may have been started by anyone in a public client's name
  // (authorize/device.ts), and must not sign the real installation out.
  // What the person allowed (they may have unticked some of what the device asked for), and what was allowed before.
  return grantTokenResponse(ctx, outcome.grant, outcome.grant.scopes, refreshToken?.token, jkt);
}
