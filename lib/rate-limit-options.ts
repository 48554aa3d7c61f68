// Rate-limit options: one limit per OAuth endpoint, with defaults, and an optional shared store (e.g. Redis).
import type { Store } from 'express-rate-limit';

/** One limit: how many requests per window, per client IP (or per account, for signInPerAccount). */
export interface LimitOptions {
  limit?: number;
  /** Milliseconds. Default 15 minutes. */
  windowMs?: number;
}

/** The rate limits of the OAuth endpoints; each may be false to turn it off. */
export interface RateLimitOptions {
  /** Dynamic registration. Default 20 per 15 minutes per IP. */
  register?: LimitOptions | false;
  /** The authorization endpoint's pages. Default 120 per 15 minutes per IP. */
  authorize?: LimitOptions | false;
  /** Failed sign-ins per IP. Default 20 per 15 minutes. */
  signIn?: LimitOptions | false;
  /** Failed sign-ins per account (email). Default 5 per 15 minutes. */
  signInPerAccount?: LimitOptions | false;
  /** The token endpoint. Default 300 per 15 minutes per IP. */
  token?: LimitOptions | false;
  /** The revocation endpoint. Default 60 per 15 minutes per IP. */
  revoke?: LimitOptions | false;
  /** Makes the store of one limit, so that several instances share counts (e.g. rate-limit-redis). */
  store?: (name: RateLimitName) => Store;
}

export type RateLimitName = 'register' | 'authorize' | 'signIn' | 'signInPerAccount' | 'token' | 'revoke';

export type RateLimitConfig = {
  limits: Record<RateLimitName, Required<LimitOptions> | false>;
  store: ((name: RateLimitName) => Store) | undefined;
};

const WINDOW = 15 * 60 * 1000;
const DEFAULTS: Record<RateLimitName, number> = {
  register: 20,
  authorize: 120,
  signIn: 20,
  signInPerAccount: 5,
  token: 300,
  revoke: 60,
};

export function parseRateLimits(
  options: RateLimitOptions,
  fail: (message: string) => never,
): RateLimitConfig {
  const limits = {} as RateLimitConfig['limits'];
  for (const name of Object.keys(DEFAULTS) as RateLimitName[]) {
    const given = options[name];
    if (given === false) {
      limits[name] = false;
      continue;
    }
    const limit = given?.limit ?? DEFAULTS[name];
    const windowMs = given?.windowMs ?? WINDOW;
    if (!Number.isInteger(limit) || limit < 1)
      fail(`rateLimits.${name}.limit must be a whole number of at least 1.`);
    if (!Number.isInteger(windowMs) || windowMs < 1000)
      fail(`rateLimits.${name}.windowMs must be at least 1000 ms.`);
    limits[name] = { limit, windowMs };
  }
  if (options.store !== undefined && typeof options.store !== 'function') {
    fail('rateLimits.store must be a function (name) => Store, making one store per limit.');
  }
  return { limits, store: options.store };
}
