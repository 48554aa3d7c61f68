// The OAuth endpoints' rate limits (express-rate-limit), with standard RateLimit headers. Behind a reverse proxy
// the host app must set Express's `trust proxy`, or every client shares the proxy's address and one limit.
//
// Sign-in is guarded three ways, so that guessing is slow and nobody can lock an owner out: failures per address
// (signIn); failures per account from one address (signInPerAccount: that address is refused for that account,
// any other address is not); and, per account from all addresses, growing delays for the addresses that have already
// failed for it (signInSlowdown), so a guess spread over many addresses still meets a ceiling, without a wall.
import type { Request, RequestHandler } from 'express';
import {
  rateLimit,
  ipKeyGenerator,
  type RateLimitExceededEventHandler,
  type RateLimitInfo,
} from 'express-rate-limit';
import { OAuthError } from '../errors';
import type { OAuthConfig } from '../options';
import type { RateLimitName } from '../rate-limit-options';
import type { EmitEvent } from '../events';
import { createRefusalReports } from './refusal-reports';
import { normaliseUserCode, userCodeHash } from '../device/user-code';

export type RateLimiters = Record<RateLimitName, RequestHandler>;

/** A limit that is off: routes leave it out rather than call it (rateLimits: false). */
export const passThrough: RequestHandler = function noRateLimit(_req, _res, next) {
  next();
};

const accountOf = (req: Request) =>
  (req.body && typeof req.body.email === 'string' ? req.body.email : '').trim().toLowerCase().slice(0, 320);
const addressOf = (req: Request) => ipKeyGenerator(req.ip ?? 'unknown');
/**
 * The key of the user code a device page request names: its HMAC, as the store keeps it, so that a shared limit store
 * (Redis) never holds live codes; anything that cannot be a code shares one key.
 */
const typedUserCode = (req: Request, secret: Buffer) => {
  const code = normaliseUserCode((req.query as Record<string, unknown> | undefined)?.user_code);
  return code === undefined ? 'not-a-code' : userCodeHash(secret, code);
};
/** Where each sign-in counter leaves its count on the request, for the slowdown to read. */
const PAIR_FAILURES = 'signInFailuresFromAddress';
const ACCOUNT_FAILURES = 'signInFailuresOfAccount';

/** Failures before this request (the counters include the request itself, counted until it succeeds). */
const priorFailures = (req: Request, property: string) => {
  const info = (req as unknown as Record<string, RateLimitInfo | undefined>)[property];
  return info ? info.used - 1 : undefined;
};

/**
 * When the shared store (Redis) cannot be reached, the limits fail open: the OAuth endpoints keep answering, and an
 * operator is told, once a minute at most, rather than on every request.
 */
function storeErrorLogger(now: () => number) {
  let lastReport = -Infinity;
  const report = (error: unknown) => {
    if (now() - lastReport < 60_000) return;
    lastReport = now();
    console.warn(
      `express-mcp-oauth: the rate-limit store failed (${(error as Error)?.message ?? String(error)}); ` +
        'requests pass without rate limits until it answers again.',
    );
  };
  return { error: report, warn: () => undefined };
}

export function createRateLimiters(config: OAuthConfig, emit: EmitEvent = () => undefined): RateLimiters {
  const limiters = {} as RateLimiters;
  const failOpen = { passOnStoreError: true, logger: storeErrorLogger(config.now) };
  const settings = config.rateLimits;
  // One event per key and window, not one per refused request (see refusal-reports.ts). Each instance remembers
  // its own keys: with a shared store (Redis) the count is shared but this memory is not, so a key refused on every
  // instance is reported once per instance and window, which still bounds the writes by the number of instances.
  const tooMany = (limit: RateLimitName, windowMs: number): RateLimitExceededEventHandler => {
    const reports = createRefusalReports(windowMs, config.now);
    return function refuseTooMany(req, _res, next, options) {
      const info = (req as unknown as Record<string, RateLimitInfo | undefined>)[options.requestPropertyName];
      const count = reports.refused(info?.key ?? addressOf(req));
      if (count !== undefined) {
        emit(req, limit.startsWith('signIn') ? 'sign_in.rate_limited' : 'rate_limit.hit', { limit, count });
      }
      next(new OAuthError('too_many_requests', 'Too many requests; wait a while and try again.'));
    };
  };
  for (const name of [
    'register',
    'authorize',
    'signIn',
    'signInPerAccount',
    'token',
    'revoke',
    'introspect',
    'deviceAuthorization',
    'userCode',
    'userCodePerCode',
  ] as const) {
    const setting = settings ? settings.limits[name] : false;
    if (!settings || !setting) {
      limiters[name] = passThrough;
      continue;
    }
    const failuresOnly = name === 'signIn' || name === 'signInPerAccount' || name === 'userCode';
    limiters[name] = rateLimit({
      windowMs: setting.windowMs,
      limit: setting.limit,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      identifier: name,
      // Sign-in limits count failures only: a user who signs in correctly is never held back by them.
      skipSuccessfulRequests: failuresOnly,
      ...(name === 'signInPerAccount'
        ? {
            // Per account and address: a guesser refused here does not refuse the owner elsewhere.
            keyGenerator: (req) => `account:${accountOf(req)}:${addressOf(req)}`,
            requestPropertyName: PAIR_FAILURES,
          }
        : name === 'userCodePerCode'
          ? { keyGenerator: (req) => `user-code:${typedUserCode(req, config.secret)}` }
          : { keyGenerator: addressOf }),
      ...(settings.store ? { store: settings.store(name), ...failOpen } : {}),
      handler: tooMany(name, setting.windowMs),
    });
  }
  limiters.signInSlowdown =
    settings && settings.slowdown ? slowdown(settings, settings.slowdown, failOpen) : passThrough;
  return limiters;
}

/**
 * The limits of a built-in sign-in form, in the order they run: failures per address, per account and address, then
 * the per-account slowdown. The code flow's form, the device flow's and router.signInLimits (a host's own form) share
 * them, so none can miss one.
 */
export function signInLimitsOf(limits: RateLimiters): RequestHandler[] {
  return [limits.signIn, limits.signInPerAccount, limits.signInSlowdown];
}

function slowdown(
  settings: Exclude<OAuthConfig['rateLimits'], false>,
  { after, windowMs, maxDelayMs }: { after: number; windowMs: number; maxDelayMs: number },
  failOpen: { passOnStoreError: boolean; logger: ReturnType<typeof storeErrorLogger> },
): RequestHandler {
  // A counter only: it never refuses, it tells how many failures the account has had from all addresses.
  const count = rateLimit({
    windowMs,
    limit: Number.MAX_SAFE_INTEGER,
    standardHeaders: false,
    legacyHeaders: false,
    identifier: 'signInSlowdown',
    skipSuccessfulRequests: true,
    keyGenerator: (req) => `account:${accountOf(req)}`,
    requestPropertyName: ACCOUNT_FAILURES,
    ...(settings.store ? { store: settings.store('signInSlowdown'), ...failOpen } : {}),
  });
  return function slowRepeatedGuesses(req, res, next) {
    count(req, res, (error?: unknown) => {
      if (error) return next(error);
      const ofAccount = priorFailures(req, ACCOUNT_FAILURES) ?? 0;
      // Unknown (the per-address limit is off) counts as an address that has failed: the careful reading.
      const fromAddress = priorFailures(req, PAIR_FAILURES) ?? 1;
      if (fromAddress === 0 || ofAccount < after) return next();
      const delay = Math.min(maxDelayMs, 250 * 2 ** Math.min(ofAccount - after, 16));
      setTimeout(next, delay);
    });
  };
}
