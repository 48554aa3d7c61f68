// Rate-limit options: one limit per OAuth endpoint, with defaults, and an optional shared store (e.g. Redis).
import type { Store } from 'express-rate-limit';

/** The per-account slowdown of sign-ins (see signInSlowdown). */
interface SlowdownOptions {
  after?: number;
  windowMs?: number;
  maxDelayMs?: number;
}

/** One limit: how many requests per window, per client IP (or per account and IP, for signInPerAccount). */
interface LimitOptions {
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
  /**
   * Failed sign-ins per account (email) from one address: past it, that address is refused for that account, and
   * the owner signing in from any other address is not held back. Default 5 per 15 minutes.
   */
  signInPerAccount?: LimitOptions | false;
  /**
   * The per-account ceiling, as growing delays instead of a wall: once an account has `after` failed sign-ins in the
   * window (from any addresses), every attempt from an address that has already failed for it waits 250 ms, doubling
   * with each further failure, up to `maxDelayMs`. An address that has not failed for it is never slowed.
   * Default { after: 10, windowMs: 15 minutes, maxDelayMs: 10,000 }.
   */
  signInSlowdown?: SlowdownOptions | false;
  /** The token endpoint. Default 300 per 15 minutes per IP. */
  token?: LimitOptions | false;
  /** The revocation endpoint. Default 60 per 15 minutes per IP. */
  revoke?: LimitOptions | false;
  /**
   * The introspection endpoint. Default 3,000 per 15 minutes per IP: a resource server may ask about every request
   * it serves; raise it (or cache answers for a few seconds) for one that serves more.
   */
  introspect?: LimitOptions | false;
  /** The device authorization endpoint (RFC 8628 §3.1). Default 60 per 15 minutes per IP. */
  deviceAuthorization?: LimitOptions | false;
  /**
   * User codes typed on the device page that match no live device authorization, per IP (RFC 8628 §5.1: guessing).
   * Default 20 per 15 minutes.
   */
  userCode?: LimitOptions | false;
  /**
   * How often one user code may be typed, from any addresses, right or wrong: a code seen over a shoulder, or
   * guessed, is not tried at length. Default 10 per 15 minutes.
   */
  userCodePerCode?: LimitOptions | false;
  /** Makes the store of one limit, so that several instances share counts (e.g. rate-limit-redis). */
  store?: (name: RateLimitName) => Store;
}

export type RateLimitName =
  | 'register'
  | 'authorize'
  | 'signIn'
  | 'signInPerAccount'
  | 'signInSlowdown'
  | 'token'
  | 'revoke'
  | 'introspect'
  | 'deviceAuthorization'
  | 'userCode'
  | 'userCodePerCode';

type LimitName = Exclude<RateLimitName, 'signInSlowdown'>;

export type RateLimitConfig = {
  limits: Record<LimitName, Required<LimitOptions> | false>;
  slowdown: Required<SlowdownOptions> | false;
  store: ((name: RateLimitName) => Store) | undefined;
};

const WINDOW = 15 * 60 * 1000;
const DEFAULTS: Record<LimitName, number> = {
  register: 20,
  authorize: 120,
  signIn: 20,
  signInPerAccount: 5,
  token: 300,
  revoke: 60,
  introspect: 3000,
  deviceAuthorization: 60,
  userCode: 20,
  userCodePerCode: 10,
};

export function parseRateLimits(
  options: RateLimitOptions,
  fail: (message: string) => never,
): RateLimitConfig {
  const limits = {} as RateLimitConfig['limits'];
  for (const name of Object.keys(DEFAULTS) as LimitName[]) {
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
  return { limits, slowdown: parseSlowdown(options.signInSlowdown, fail), store: options.store };
}

function parseSlowdown(
  given: SlowdownOptions | false | undefined,
  fail: (message: string) => never,
): Required<SlowdownOptions> | false {
  if (given === false) return false;
  const slowdown = { after: 10, windowMs: WINDOW, maxDelayMs: 10_000, ...given };
  if (!Number.isInteger(slowdown.after) || slowdown.after < 1)
    fail('rateLimits.signInSlowdown.after must be a whole number of at least 1.');
  if (!Number.isInteger(slowdown.windowMs) || slowdown.windowMs < 1000)
    fail('rateLimits.signInSlowdown.windowMs must be at least 1000 ms.');
  if (!Number.isInteger(slowdown.maxDelayMs) || slowdown.maxDelayMs < 0 || slowdown.maxDelayMs > 60_000)
    fail('rateLimits.signInSlowdown.maxDelayMs must be from 0 to 60,000 ms.');
  return slowdown;
}
