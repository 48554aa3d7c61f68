// The device authorization endpoint (RFC 8628 §3.1, §3.2): a client with no browser at hand asks for a device code to
// poll with and a user code for the person to type at the verification page. The client authenticates as at the
// token endpoint, and must have registered the device_code grant.
import type { RequestHandler } from 'express';
import { authenticateClient } from '../clients/authentication';
import { handle } from '../context';
import { hashSecret, randomSecret } from '../crypto/secrets';
import { DEVICE_CODE_GRANT } from '../device/options';
import { newUserCode, normaliseUserCode, userCodeHash } from '../device/user-code';
import { OAuthError } from '../errors';
import type { GrantDeps } from '../grants/grant-type';
import { isStoreUnavailable } from '../store/unavailable';
import type { DeviceAuthorizationRecord } from '../store/types';
import { writeJson } from '../util/json-response';
import { readParam, readResource } from '../util/params';
import { parseScope } from '../util/scopes';

/** Tries at making codes no stored authorization holds: a user code's 34 bits may, rarely, meet a live one's. */
const ATTEMPTS = 3;

export function deviceAuthorizationHandler(ctx: GrantDeps): RequestHandler {
  return handle(async function deviceAuthorizationEndpoint(req, res) {
    const { store, config } = ctx;
    const settings = config.deviceAuthorization!;
    const client = (await authenticateClient(ctx, req))!;
    if (!client.grantTypes.includes(DEVICE_CODE_GRANT))
      throw new OAuthError(
        'unauthorized_client',
        `This client did not register the ${DEVICE_CODE_GRANT} grant type; register it to use the device flow.`,
      );
    // RFC 8628 §3.1: scope as at the authorization endpoint; RFC 8707: one resource of this server.
    const allowed = new Set(client.scope.split(' ').filter((scope) => config.scopeNames.has(scope)));
    const scopeParam = readParam(req.body, 'scope');
    const scopes = scopeParam === undefined ? [...allowed] : parseScope(scopeParam, allowed);
    if (scopes.length === 0) throw new OAuthError('invalid_scope', 'No scope was requested.');
    const resource = readResource(req.body, config.resources);
    const now = config.now();
    for (let attempt = 1; ; attempt += 1) {
      const deviceCode = randomSecret();
      const userCode = newUserCode();
      const record: DeviceAuthorizationRecord = {
        deviceCodeHash: hashSecret(deviceCode),
        userCodeHash: userCodeHash(config.secret, normaliseUserCode(userCode)!),
        clientId: client.clientId,
        scopes,
        resource,
        expiresAt: now + settings.expiresIn * 1000,
        interval: settings.interval,
        status: 'pending',
        userId: null,
        grantId: null,
      };
      try {
        await store.saveDeviceAuthorization!(record);
      } catch (error) {
        if (isStoreUnavailable(error) || attempt === ATTEMPTS) throw error;
        continue;
      }
      const verificationUri = config.endpoints.device!;
      res.setHeader('Cache-Control', 'no-store');
      writeJson(res, 200, {
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verificationUri,
        // §3.3.1: the page with the code already in it, for a QR code or a link; the person still confirms it.
        verification_uri_complete: `${verificationUri}?${new URLSearchParams({ user_code: userCode })}`,
        expires_in: settings.expiresIn,
        interval: settings.interval,
      });
      return;
    }
  });
}
