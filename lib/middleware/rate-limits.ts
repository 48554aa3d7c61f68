// The OAuth endpoints' rate limits (express-rate-limit), with standard RateLimit headers. Behind a reverse proxy
// the host app must set Express's `trust proxy`, or every client shares the proxy's address and one limit.
import type { RequestHandler } from 'express';
import { rateLimit, ipKeyGenerator } from 'express-rate-limit';
import { OAuthError } from '../errors';
import type { OAuthConfig } from '../options';
import type { RateLimitName } from '../rate-limit-options';

export type RateLimiters = Record<RateLimitName, RequestHandler>;

const passThrough: RequestHandler = function noRateLimit(_req, _res, next) {
  next();
};

export function createRateLimiters(config: OAuthConfig): RateLimiters {
  const limiters = {} as RateLimiters;
  const settings = config.rateLimits;
  for (const name of ['register', 'authorize', 'signIn', 'signInPerAccount', 'token', 'revoke'] as const) {
    const setting = settings ? settings.limits[name] : false;
    if (!settings || !setting) {
      limiters[name] = passThrough;
      continue;
    }
    const failuresOnly = name === 'signIn' || name === 'signInPerAccount';
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
            // Per account, whatever address the guesses come from.
            keyGenerator: (req) => {
              const email = req.body && typeof req.body.email === 'string' ? req.body.email : '';
              return `account:${email.trim().toLowerCase().slice(0, 320)}`;
            },
          }
        : { keyGenerator: (req) => ipKeyGenerator(req.ip ?? 'unknown') }),
      ...(settings.store ? { store: settings.store(name) } : {}),
      handler: (_req, _res, next) => {
        next(new OAuthError('too_many_requests', 'Too many requests; wait a while and try again.'));
      },
    });
  }
  return limiters;
}
