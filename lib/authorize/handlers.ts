// The authorization endpoint (RFC 6749 §4.1): the sign-in page, the consent page, and the two forms behind them.
import type { Request, RequestHandler, Response } from 'express';
import { describeClient } from '../cimd/client-document';
import { isClientIdUrl } from '../util/client-id';
import { handle, type OAuthContext } from '../context';
import { timeOrderedId } from '../crypto/time-ordered-id';
import { hashSecret, randomSecret } from '../crypto/secrets';
import { decisionPath, signInPath, upstreamStartPath } from '../paths';
import { OAuthError } from '../errors';
import type { PageMessageKey } from '../i18n/messages';
import { clientRedirect, type RedirectTarget } from '../util/redirect-uri';
import type { OAuthUser } from '../options';
import type { GrantRecord } from '../store/types';
import { readParam } from '../util/params';
import { formActionSource, isLoopbackRedirect } from '../util/redirect-uri';
import { validateAuthorizationRequest, type AuthorizationRequest } from './request';
import { registeredTools } from '../consent-tools/registry';
import { consentScopes } from '../consent-tools/page';

export function markAsPage(res: Response, request?: AuthorizationRequest): void {
  res.locals.oauthPage = true;
  if (request) res.locals.formActionSource = formActionSource(request.redirectUri);
}

/** What the pages of the authorization endpoint use: the request's client, the browser session, the templates. */
export type PageDeps = Pick<OAuthContext, 'config' | 'findClient' | 'session' | 'pages'>;
/** What the consent page needs besides: the user's earlier grants. */
export type ConsentDeps = PageDeps & Pick<OAuthContext, 'store'>;

/** The sign-in page: the built-in form when the router checks passwords, and a link per upstream provider. */
export function renderSignIn(
  ctx: PageDeps,
  req: Request,
  res: Response,
  request: AuthorizationRequest,
  extra: {
    email?: string;
    errorKey?: PageMessageKey;
    errorValues?: Record<string, string>;
    status?: number;
  } = {},
) {
  const fields = ctx.session.formFields(req, res, request.params);
  const start = ctx.config.issuer + upstreamStartPath(ctx.config.paths);
  const providers = [...(ctx.config.upstream?.providers.values() ?? [])].map(({ id, name }) => ({
    id,
    name,
    // A link, not a form: a form's redirect to the provider would need the provider in the page's form-action.
    href: `${start}?${new URLSearchParams({ provider: id, ...fields })}`,
  }));
  return ctx.pages.render(
    res,
    'login',
    {
      ...fields,
      action: ctx.config.issuer + signInPath(ctx.config.paths),
      passwordForm: Boolean(ctx.config.authenticateUser),
      providers,
      clientName: describeClient(request.client).name,
      client: describeClient(request.client),
      email: extra.email ?? '',
      // Rendered in the page's language (pages.ts).
      errorKey: extra.errorKey,
      errorValues: extra.errorValues,
    },
    extra.status,
  );
}

async function renderConsent(
  ctx: ConsentDeps,
  req: Request,
  res: Response,
  request: AuthorizationRequest,
  user: OAuthUser,
) {
  const fields = ctx.session.formFields(req, res, request.params);
  const redirect = new URL(request.redirectUri);
  // Step-up: what this user allowed this client before is shown as allowed, and only what is new is asked.
  const { before, asked } = await splitScopes(ctx, user.id, request);
  const { scopes, allowedScopes } = consentScopes(asked, before, ctx.config.scopes, await registeredTools());
  return ctx.pages.render(res, 'consent', {
    ...fields,
    action: ctx.config.issuer + decisionPath(ctx.config.paths),
    clientName: describeClient(request.client).name,
    client: describeClient(request.client),
    redirectHost: redirect.host || redirect.protocol,
    // MCP security considerations: a client whose every redirect goes to this computer could be any program on it.
    localhostOnly: request.client.redirectUris.every(isLoopbackRedirect),
    scopes,
    allowedScopes,
    user,
  });
}

/** Shows the sign-in page, or the consent page when the user is already signed in. */
export function authorizePageHandler(ctx: ConsentDeps): RequestHandler {
  return handle(async function authorizationPage(req, res) {
    markAsPage(res);
    const request = await validateAuthorizationRequest(ctx, req.query, res);
    markAsPage(res, request);
    const user = await ctx.session.currentUser(req, request.params);
    if (user) return renderConsent(ctx, req, res, request, user);
    if (ctx.config.authenticateUser || ctx.config.upstream) return renderSignIn(ctx, req, res, request);
    // The host app signs users in: send the browser there, to come back to this very request.
    const returnTo = `${ctx.config.endpoints.authorization}?${new URLSearchParams(request.params)}`;
    res.redirect(302, ctx.config.signInUrl!(returnTo, req));
  });
}

/** Reads a form post: the CSRF token must be bound to this browser and the pending request still valid. */
async function openForm(ctx: PageDeps, req: Request, res: Response): Promise<AuthorizationRequest> {
  markAsPage(res);
  const { csrfValid, params } = ctx.session.openForm(req);
  if (!csrfValid) {
    throw new OAuthError(
      'access_denied',
      'This form was not sent from this site, or it has expired. Start again from your app.',
    );
  }
  if (!params)
    throw new OAuthError('invalid_request', 'This sign-in request has expired. Start again from your app.');
  // Validate again: the client may have changed since the page was shown.
  const { exp: _expiry, ...carried } = params;
  const request = await validateAuthorizationRequest(ctx, carried, res);
  markAsPage(res, request);
  return request;
}

/** The sign-in form: checks the credentials, remembers the user, then shows consent. */
export function signInHandler(ctx: PageDeps & Pick<OAuthContext, 'emit'>): RequestHandler {
  return handle(async function signInForm(req, res) {
    const request = await openForm(ctx, req, res);
    const email = readParam(req.body, 'email')?.trim() ?? '';
    const password = readParam(req.body, 'password') ?? '';
    const user = email && password ? await ctx.config.authenticateUser!(email, password, req) : undefined;
    const clientId = request.client.clientId;
    // One message for an unknown email and a wrong password, so the form does not reveal who has an account.
    if (!user) {
      ctx.emit(req, 'sign_in.failed', { clientId, reason: 'bad_credentials' });
      return renderSignIn(ctx, req, res, request, { email, errorKey: 'signIn.failed', status: 401 });
    }
    if (typeof user.id !== 'string' || !user.id)
      throw new Error('authenticateUser returned a user without a string id.');
    ctx.emit(req, 'sign_in.succeeded', { clientId, userId: user.id });
    ctx.session.signIn(res, user);
    res.redirect(303, `${ctx.config.endpoints.authorization}?${new URLSearchParams(request.params)}`);
  });
}

/**
 * The scopes the user left ticked on the consent page: only ever a subset of those asked, whatever the form sends. A
 * replaced page without the checkboxes (no scope_choice) grants all of them.
 */
export function grantedScopes(body: unknown, asked: string[]): string[] {
  const fields = (body ?? {}) as Record<string, unknown>;
  if (fields.scope_choice === undefined) return asked;
  const ticked = new Set(
    ([] as unknown[])
      .concat(fields.scope ?? [])
      .filter((value): value is string => typeof value === 'string'),
  );
  return asked.filter((scope) => ticked.has(scope));
}

/**
 * The consent page's two lists, one rule for the page and the form behind it: `before`, what this user allowed this
 * client for this resource in grants still active (and still in the catalogue: a scope taken out since is not given
 * again), and `asked`, the requested scopes that are new.
 */
async function splitScopes(
  ctx: ConsentDeps,
  userId: string,
  request: Pick<AuthorizationRequest, 'client' | 'resource' | 'scopes'>,
): Promise<{ before: string[]; asked: string[] }> {
  const before = new Set<string>();
  for (const grant of await ctx.store.listActiveGrants(userId))
    if (grant.clientId === request.client.clientId && grant.resource === request.resource)
      for (const scope of grant.scopes) if (ctx.config.scopeNames.has(scope)) before.add(scope);
  return { before: [...before], asked: request.scopes.filter((scope) => !before.has(scope)) };
}

/** The consent form: Deny redirects with access_denied; Allow issues a code bound to everything the user saw. */
export function decisionHandler(
  ctx: PageDeps & Pick<OAuthContext, 'emit' | 'store' | 'upstream'>,
): RequestHandler {
  return handle(async function consentDecision(req, res) {
    const request = await openForm(ctx, req, res);
    const user = await ctx.session.currentUser(req, request.params);
    if (!user) return renderSignIn(ctx, req, res, request, { errorKey: 'signIn.expired' });
    const clientId = request.client.clientId;
    const { store, config } = ctx;
    // Step-up: a client that asks again for more (a tool needed a scope it lacked) gets tokens that carry what this
    // user allowed it before too, so that it does not trade what it had for the one new scope. The page asked only
    // about what is new; what was allowed before stays allowed (the person ends it by revoking the grant), and the
    // earlier grant ends when this one's code is redeemed (grants/replace-earlier.ts). Read again now, not taken from
    // the form: a grant revoked since the page was shown gives nothing.
    const { before, asked } = await splitScopes(ctx, user.id, request);
    const decision = readParam(req.body, 'decision');
    const allowed = decision === 'allow' ? grantedScopes(req.body, asked) : [];
    if (decision !== 'allow' || allowed.length + before.length === 0) {
      // A denial leaves the earlier grant as it was.
      ctx.emit(req, 'consent.denied', { clientId, userId: user.id });
      throw new OAuthError(
        'access_denied',
        decision === 'allow' ? 'The user allowed no scope.' : 'The user denied access.',
      );
    }

    // A token whose sub is its client_id acts for no user (the client_credentials grant, RFC 9068 §2.2): a user's
    // id equal to the client's would make the bearer check take the user's token for a machine's.
    if (user.id === clientId)
      throw new OAuthError('access_denied', 'This account cannot authorize this app.');
    const scopes = [...new Set([...allowed, ...before])];
    const now = config.now();
    const grantId = timeOrderedId(now);
    // A document client is stored now that a user has consented to it, with the copy the user saw: never at
    // fetch time, or every stranger's URL would leave a row behind.
    const grant: GrantRecord = {
      grantId,
      clientId,
      userId: user.id,
      scopes,
      resource: request.resource,
      createdAt: now,
      expiresAt: now + config.lifetimes.refreshToken * 1000,
      lastUsedAt: null,
      revokedAt: null,
    };
    // An upstream sign-in that keeps tokens gives them to this grant, once: a replayed form gets no second grant.
    const heldTokens = ctx.session.upstreamTokens(req, request.params, user.id);
    if (
      heldTokens !== undefined &&
      !(await ctx.upstream!.tokens!.attach(heldTokens, grantId, grant.expiresAt))
    )
      throw new OAuthError('access_denied', 'This sign-in was already used; sign in again.');
    // Document clients reach this point only when the store keeps them (createOAuthRouter turns documents off
    // otherwise), so the grant always names a stored client.
    if (isClientIdUrl(clientId)) await store.createGrantWithClient!(grant, request.client);
    else await store.createGrant(grant);
    // RFC 9449 §10: a code for a dpop_jkt carries it in front ("<jkt>.<secret>"); the token endpoint redeems it only
    // with a proof of that key. The thumbprint is public, and it is hashed with the rest, so it cannot be altered.
    const code = request.dpopJkt === undefined ? randomSecret() : `${request.dpopJkt}.${randomSecret()}`;
    await store.saveAuthorizationCode({
      codeHash: hashSecret(code),
      grantId,
      clientId: request.client.clientId,
      userId: user.id,
      redirectUri: request.redirectUri,
      scopes,
      resource: request.resource,
      codeChallenge: request.codeChallenge,
      codeChallengeMethod: 'S256',
      expiresAt: now + config.lifetimes.authorizationCode * 1000,
    });
    ctx.emit(req, 'consent.granted', { clientId, userId: user.id, grantId, scopes });
    ctx.emit(req, 'code.issued', { clientId, userId: user.id, grantId, scopes });
    const target = res.locals.oauthRedirect as RedirectTarget;
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, clientRedirect(config.issuer, target, { code }));
  });
}
