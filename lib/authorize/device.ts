// The device flow's pages (RFC 8628 §3.3): where a person types the code a device shows, signs in, and allows or
// denies that device, which polls the token endpoint meanwhile (grants/device-code.ts). The page at paths.device only
// shows the form; the form is a GET to a path below the authorization endpoint, where the browser's session and CSRF
// cookies are, and the sign-in and consent that follow live there too.
import type { Request, RequestHandler, Response } from 'express';
import { describeClient } from '../cimd/client-document';
import { registeredTools } from '../consent-tools/registry';
import { consentScopes } from '../consent-tools/page';
import { handle, type OAuthContext } from '../context';
import { timeOrderedId } from '../crypto/time-ordered-id';
import { formatUserCode, normaliseUserCode, userCodeHash } from '../device/user-code';
import { OAuthError } from '../errors';
import type { PageMessageKey } from '../i18n/messages';
import type { OAuthUser } from '../options';
import { deviceCodePath, deviceDecisionPath, deviceSignInPath } from '../paths';
import type { ClientRecord, DeviceAuthorizationRecord, GrantRecord } from '../store/types';
import { isClientIdUrl } from '../util/client-id';
import { readParam } from '../util/params';
import { grantedScopes, markAsPage, type ConsentDeps } from './handlers';

type DeviceDeps = ConsentDeps & Pick<OAuthContext, 'emit'>;

/** A device authorization the person may still decide, with its client and the code as typed back to them. */
interface PendingDevice {
  record: DeviceAuthorizationRecord;
  client: ClientRecord;
  /** The user code, normalised: what the sealed form carries. */
  code: string;
  params: Record<string, string>;
}

/** The code page: the form, with what was typed (or came in verification_uri_complete) and an error when wrong. */
function renderCodePage(
  ctx: DeviceDeps,
  res: Response,
  userCode: string,
  error?: { key: PageMessageKey; status: number },
) {
  return ctx.pages.render(
    res,
    'device',
    {
      step: 'code',
      action: ctx.config.issuer + deviceCodePath(ctx.config.paths),
      userCode,
      errorKey: error?.key,
    },
    error?.status,
  );
}

/** What the person typed, bounded, to show back in the form. */
const typedCode = (value: unknown) => (typeof value === 'string' ? value.slice(0, 64) : '');

/** The device authorization a user code names, while the person may still decide it; undefined otherwise. */
async function pendingDevice(ctx: DeviceDeps, typed: unknown): Promise<PendingDevice | undefined> {
  const code = normaliseUserCode(typed);
  if (code === undefined) return undefined;
  const record = await ctx.store.findDeviceAuthorization!(userCodeHash(ctx.config.secret, code), 'user_code');
  if (!record || record.status !== 'pending' || record.expiresAt <= ctx.config.now()) return undefined;
  const client = await ctx.findClient(record.clientId);
  if (!client) return undefined;
  return { record, client, code, params: { device: code } };
}

/** The page at paths.device (the verification_uri): the form alone, filled from verification_uri_complete. */
export function deviceEntryHandler(ctx: DeviceDeps): RequestHandler {
  return handle(async function devicePage(req, res) {
    markAsPage(res);
    await renderCodePage(ctx, res, typedCode(req.query.user_code));
  });
}

/** The sign-in page of the device flow: the built-in form, its action the device flow's own. */
function renderDeviceSignIn(
  ctx: DeviceDeps,
  req: Request,
  res: Response,
  device: PendingDevice,
  extra: { email?: string; errorKey?: PageMessageKey; status?: number } = {},
) {
  return ctx.pages.render(
    res,
    'login',
    {
      ...ctx.session.formFields(req, res, device.params),
      action: ctx.config.issuer + deviceSignInPath(ctx.config.paths),
      passwordForm: true,
      // A provider's sign-in returns to the authorization endpoint's own flow, which a device request is not.
      providers: [],
      clientName: describeClient(device.client).name,
      client: describeClient(device.client),
      email: extra.email ?? '',
      errorKey: extra.errorKey,
    },
    extra.status,
  );
}

async function renderDeviceConsent(
  ctx: DeviceDeps,
  req: Request,
  res: Response,
  device: PendingDevice,
  user: OAuthUser,
) {
  // Every scope is asked anew, none shown as allowed before (see deviceDecisionHandler).
  const { scopes, allowedScopes } = consentScopes(
    device.record.scopes,
    [],
    ctx.config.scopes,
    await registeredTools(),
  );
  return ctx.pages.render(res, 'consent', {
    ...ctx.session.formFields(req, res, device.params),
    action: ctx.config.issuer + deviceDecisionPath(ctx.config.paths),
    clientName: describeClient(device.client).name,
    client: describeClient(device.client),
    redirectHost: '',
    localhostOnly: false,
    deviceCode: formatUserCode(device.code),
    scopes,
    allowedScopes,
    user,
  });
}

/**
 * The code typed (a GET, rate limited per address and per code): the sign-in page, or the consent page when the
 * person is signed in already. A code that names no live request shows the form again with a 400, which the
 * per-address limit counts.
 */
export function deviceCodeHandler(ctx: DeviceDeps): RequestHandler {
  return handle(async function deviceCode(req, res) {
    markAsPage(res);
    const device = await pendingDevice(ctx, req.query.user_code);
    if (!device)
      return renderCodePage(ctx, res, typedCode(req.query.user_code), { key: 'device.invalid', status: 400 });
    const user = await ctx.session.currentUser(req, device.params);
    if (user) return renderDeviceConsent(ctx, req, res, device, user);
    return askToSignIn(ctx, req, res, device);
  });
}

/**
 * Nobody is signed in (yet, or any more): the built-in form when the router has one, else the host app's sign-in
 * (signInUrl), back to this very code. A provider's sign-in returns to the authorization endpoint's flow, which a
 * device request is not, so with neither the person is told to connect from a browser.
 */
function askToSignIn(
  ctx: DeviceDeps,
  req: Request,
  res: Response,
  device: PendingDevice,
  expired = false,
): void | Promise<void> {
  if (ctx.config.authenticateUser)
    return renderDeviceSignIn(ctx, req, res, device, expired ? { errorKey: 'signIn.expired' } : {});
  if (ctx.config.signInUrl) {
    const returnTo = `${ctx.config.issuer}${deviceCodePath(ctx.config.paths)}?${new URLSearchParams({
      user_code: formatUserCode(device.code),
    })}`;
    // After a form's POST, 303: the browser follows with a GET.
    return res.redirect(req.method === 'GET' ? 302 : 303, ctx.config.signInUrl(returnTo, req));
  }
  throw new OAuthError(
    'access_denied',
    'This server signs people in through a provider, which the device page does not offer: connect the device ' +
      'from a browser instead.',
  );
}

/** A device flow form post: the CSRF token bound to this browser, and the request it carries still pending. */
async function openDeviceForm(ctx: DeviceDeps, req: Request, res: Response): Promise<PendingDevice> {
  markAsPage(res);
  const { csrfValid, params } = ctx.session.openForm(req);
  if (!csrfValid)
    throw new OAuthError(
      'access_denied',
      'This form was not sent from this site, or it has expired. Type the code from your device again.',
    );
  const device = await pendingDevice(ctx, params?.device);
  if (!device)
    throw new OAuthError(
      'invalid_request',
      'This device request has expired or was already decided. Start again on the device.',
    );
  return device;
}

/** The device flow's sign-in form: checks the credentials, remembers the user, then back to the code's page. */
export function deviceSignInHandler(ctx: DeviceDeps): RequestHandler {
  return handle(async function deviceSignIn(req, res) {
    const device = await openDeviceForm(ctx, req, res);
    // No password form here: a post to it is sent where people sign in.
    if (!ctx.config.authenticateUser) return askToSignIn(ctx, req, res, device);
    const email = readParam(req.body, 'email')?.trim() ?? '';
    const password = readParam(req.body, 'password') ?? '';
    const user = email && password ? await ctx.config.authenticateUser(email, password, req) : undefined;
    const clientId = device.client.clientId;
    // One message for an unknown email and a wrong password, as on the authorization endpoint's form.
    if (!user) {
      ctx.emit(req, 'sign_in.failed', { clientId, reason: 'bad_credentials' });
      return renderDeviceSignIn(ctx, req, res, device, { email, errorKey: 'signIn.failed', status: 401 });
    }
    if (typeof user.id !== 'string' || !user.id)
      throw new Error('authenticateUser returned a user without a string id.');
    ctx.emit(req, 'sign_in.succeeded', { clientId, userId: user.id });
    ctx.session.signIn(res, user);
    const back = new URLSearchParams({ user_code: formatUserCode(device.code) });
    res.redirect(303, `${ctx.config.issuer}${deviceCodePath(ctx.config.paths)}?${back}`);
  });
}

/**
 * The device flow's consent form: Allow makes a grant of what the person left ticked and approves the request, which
 * the device redeems once when it next polls; Deny denies it. Either way the page says so, and sends the browser
 * nowhere: the device is elsewhere.
 *
 * Unlike the authorization endpoint, nothing allowed before is carried over, and no earlier grant is replaced: a
 * public client's id is no secret, and without a redirect URI to tie the request to the real app, anyone could start
 * a device request in its name; a person who allowed it would otherwise hand that device everything allowed before,
 * and sign the real installation out (RFC 8628 §5.4).
 */
export function deviceDecisionHandler(ctx: DeviceDeps): RequestHandler {
  return handle(async function deviceDecision(req, res) {
    const device = await openDeviceForm(ctx, req, res);
    const user = await ctx.session.currentUser(req, device.params);
    if (!user) return askToSignIn(ctx, req, res, device, true);
    const { store, config } = ctx;
    const { record, client } = device;
    const clientId = client.clientId;
    const decision = readParam(req.body, 'decision');
    const allowed = decision === 'allow' ? grantedScopes(req.body, record.scopes) : [];
    const shown = { client: describeClient(client) };
    if (decision !== 'allow' || allowed.length === 0) {
      if (
        !(await store.decideDeviceAuthorization!(record.deviceCodeHash, {
          approved: false,
          userId: user.id,
          grantId: null,
        }))
      )
        throw new OAuthError(
          'invalid_request',
          'This device request was already decided. Start again on the device.',
        );
      ctx.emit(req, 'consent.denied', { clientId, userId: user.id });
      return ctx.pages.render(res, 'device', { step: 'denied', ...shown });
    }
    // As on the authorization endpoint: a user whose id is the client's would make a machine's token of theirs.
    if (user.id === clientId)
      throw new OAuthError('access_denied', 'This account cannot authorize this app.');
    const scopes = allowed;
    const now = config.now();
    const grant: GrantRecord = {
      grantId: timeOrderedId(now),
      clientId,
      userId: user.id,
      scopes,
      resource: record.resource,
      createdAt: now,
      expiresAt: now + config.lifetimes.refreshToken * 1000,
      lastUsedAt: null,
      revokedAt: null,
    };
    if (isClientIdUrl(clientId)) await store.createGrantWithClient!(grant, client);
    else await store.createGrant(grant);
    const approval = { approved: true, userId: user.id, grantId: grant.grantId };
    if (!(await store.decideDeviceAuthorization!(record.deviceCodeHash, approval))) {
      // Decided in another tab, or expired, since the page was read: the grant made for it is never used.
      await store.revokeGrant(grant.grantId);
      throw new OAuthError(
        'invalid_request',
        'This device request was already decided. Start again on the device.',
      );
    }
    ctx.emit(req, 'consent.granted', { clientId, userId: user.id, grantId: grant.grantId, scopes });
    return ctx.pages.render(res, 'device', { step: 'done', ...shown });
  });
}
