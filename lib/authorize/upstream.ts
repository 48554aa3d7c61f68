// Sign-in through an upstream provider: the sign-in page's "Continue with <name>" link sends the browser upstream
// with PKCE, state and nonce; the callback checks that this browser started it (state, in a sealed cookie), that it is
// used once, that the answer is the provider's (RFC 9207 iss, the ID token), reads who signed in, asks the host app
// for its user, and goes on to the consent page of the very authorization request the sign-in was started for.
import type { Request, RequestHandler, Response } from 'express';
import { handle, type OAuthContext } from '../context';
import { OAuthError } from '../errors';
import type { PageMessageKey } from '../i18n/messages';
import type { OAuthUser } from '../options';
import { UpstreamError, classify } from '../upstream/client';
import type { UpstreamIdentity, UpstreamProvider } from '../upstream/options';
import { readParam } from '../util/params';
import { renderSignIn, type PageDeps } from './handlers';
import { validateAuthorizationRequest, type AuthorizationRequest } from './request';

type UpstreamDeps = PageDeps & Pick<OAuthContext, 'emit' | 'store' | 'upstream'>;

/** A refusal shown on the sign-in page of the request, in the page's language. */
class SignInRefusal extends Error {
  constructor(
    readonly key: PageMessageKey,
    readonly status: number,
    readonly reason: string,
    readonly detail?: string,
  ) {
    super(reason);
  }
}

const callbackUrl = (ctx: UpstreamDeps, provider: UpstreamProvider) =>
  ctx.config.issuer + ctx.config.paths.upstreamCallback + provider.callbackSuffix;

function providerOf(ctx: UpstreamDeps, id: unknown): UpstreamProvider {
  const provider = typeof id === 'string' ? ctx.upstream!.config.providers.get(id) : undefined;
  if (!provider)
    throw new OAuthError('invalid_request', 'Unknown sign-in provider. Start again from your app.');
  return provider;
}

/** Renders the refusal on the sign-in page, after an event for the operator. */
async function refuse(
  ctx: UpstreamDeps,
  req: Request,
  res: Response,
  request: AuthorizationRequest,
  provider: UpstreamProvider,
  error: unknown,
): Promise<void> {
  let refusal: SignInRefusal;
  if (error instanceof SignInRefusal) refusal = error;
  else {
    // A bug of ours (or of findUser) is the operator's to hear of; the provider's failures are events.
    if (!(error instanceof UpstreamError) && !isOpenIdError(error)) ctx.config.onError(error, req);
    const failure = classify(error, provider.name);
    refusal =
      failure.kind === 'unavailable'
        ? new SignInRefusal('upstream.unavailable', 502, 'upstream_unavailable', failure.message)
        : new SignInRefusal('upstream.failed', 400, 'upstream_invalid', failure.message);
  }
  ctx.emit(req, 'sign_in.failed', {
    clientId: request.client.clientId,
    provider: provider.id,
    reason: refusal.reason,
    ...(refusal.detail ? { detail: refusal.detail.slice(0, 500) } : {}),
  });
  await renderSignIn(ctx, req, res, request, {
    errorKey: refusal.key,
    errorValues: { provider: provider.name },
    status: refusal.status,
  });
}

/**
 * openid-client's own errors (a refused answer, a failed check) are the provider's doing, not a bug here. By name:
 * they may come from another realm (a VM context under a test runner), where instanceof fails.
 */
const isOpenIdError = (error: unknown) =>
  /^(ClientError|ResponseBodyError|AuthorizationResponseError|WWWAuthenticateChallengeError|OperationProcessingError)$/.test(
    String((error as { name?: unknown } | null)?.name),
  );

/** The sign-in page's link: checks its CSRF token, then sends the browser to the provider. */
export function upstreamStartHandler(ctx: UpstreamDeps): RequestHandler {
  return handle(async function upstreamStart(req, res) {
    res.locals.oauthPage = true;
    const { csrfValid, params } = ctx.session.openForm(req, req.query);
    if (!csrfValid || !params)
      throw new OAuthError(
        'access_denied',
        'This sign-in link was not made for this browser, or it has expired. Start again from your app.',
      );
    const { exp: _expiry, ...carried } = params;
    const request = await validateAuthorizationRequest(ctx, carried, res);
    const provider = providerOf(ctx, readParam(req.query, 'provider'));
    let target: URL;
    try {
      const { url, checks } = await (
        await ctx.upstream!.connect(provider)
      ).authorize(callbackUrl(ctx, provider));
      ctx.session.beginUpstream(res, { provider: provider.id, ...checks, params: request.params });
      target = url;
    } catch (error) {
      return refuse(ctx, req, res, request, provider, error);
    }
    res.redirect(302, target.href);
  });
}

/** Who signed in, when the host app's rules accept them; a SignInRefusal otherwise. */
async function acceptIdentity(
  ctx: UpstreamDeps,
  req: Request,
  identity: UpstreamIdentity,
): Promise<OAuthUser> {
  const { config } = ctx.upstream!;
  if (config.requireVerifiedEmail && !(identity.email && identity.emailVerified))
    throw new SignInRefusal('upstream.unverified', 403, 'unverified_email');
  const user = await config.findUser(identity, req);
  if (!user) throw new SignInRefusal('upstream.noAccount', 403, 'no_account');
  if (typeof user.id !== 'string' || !user.id)
    throw new Error('upstream.findUser returned a user without a string id.');
  return user;
}

/**
 * The provider's redirect back (to the callback of `providerId`): every check, then the consent page of the request
 * it was started for.
 */
export function upstreamCallbackHandler(ctx: UpstreamDeps, providerId: string): RequestHandler {
  return handle(async function upstreamCallback(req, res) {
    res.locals.oauthPage = true;
    const stale = () =>
      new OAuthError(
        'access_denied',
        'This sign-in did not start in this browser, was already used, or has expired. Start again from your app.',
      );
    // Login CSRF (RFC 6749 §10.12): the answer must be to the request this browser made, and only once.
    const transaction = ctx.session.endUpstream(req, res, readParam(req.query, 'state'));
    if (!transaction) {
      ctx.emit(req, 'sign_in.failed', { provider: providerId, reason: 'state_mismatch' });
      throw stale();
    }
    // Mix-up (RFC 9700 §4.4): the answer came back to another provider's callback than the one it was sent to.
    if (transaction.provider !== providerId) {
      ctx.emit(req, 'sign_in.failed', { provider: providerId, reason: 'provider_mismatch' });
      throw stale();
    }
    if (
      !(await ctx.store.useAssertionId!(
        `upstream:${transaction.provider}`,
        transaction.state,
        transaction.exp,
      ))
    ) {
      ctx.emit(req, 'sign_in.failed', { provider: transaction.provider, reason: 'replayed' });
      throw stale();
    }
    const request = await validateAuthorizationRequest(ctx, transaction.params, res);
    // From here on errors are told on the sign-in page; a redirect to the client would hide a retry from the user.
    res.locals.oauthRedirect = undefined;
    const provider = providerOf(ctx, transaction.provider);
    const clientId = request.client.clientId;
    try {
      const upstreamError = readParam(req.query, 'error');
      if (upstreamError !== undefined)
        throw new SignInRefusal(
          'upstream.refused',
          403,
          'upstream_error',
          `${upstreamError}: ${readParam(req.query, 'error_description') ?? ''}`,
        );
      const connection = await ctx.upstream!.connect(provider);
      // openid-client reads code, state and iss from the URL as it came.
      const at = req.originalUrl.indexOf('?');
      const query = at === -1 ? '' : req.originalUrl.slice(at);
      const { tokens, identity } = await connection.exchange(
        new URL(callbackUrl(ctx, provider) + query),
        callbackUrl(ctx, provider),
        transaction,
        ctx.config.now(),
      );
      const user = await acceptIdentity(ctx, req, { ...identity, provider: provider.id });
      const held =
        provider.keepTokens && ctx.upstream!.tokens
          ? await ctx.upstream!.tokens.holdForConsent(provider, user.id, tokens)
          : undefined;
      ctx.emit(req, 'sign_in.succeeded', { clientId, userId: user.id, provider: provider.id });
      ctx.session.signIn(
        res,
        user,
        held === undefined ? undefined : { provider: provider.id, tokens: held, params: request.params },
      );
    } catch (error) {
      return refuse(ctx, req, res, request, provider, error);
    }
    res.redirect(303, `${ctx.config.endpoints.authorization}?${new URLSearchParams(request.params)}`);
  });
}
