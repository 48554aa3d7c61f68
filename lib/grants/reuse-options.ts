// The refresh-token reuse policy's public options, parsed once: how long a used token may come back and still be
// answered with its successor (RFC 9700 §4.14.2 leaves the trade-off between lost sessions and theft detection to
// the server). README's "Refresh tokens" section shows the scenarios each setting survives; docs/security.md says
// why the default window is what it is.
import { createHmac } from 'node:crypto';

/** How the token endpoint answers a refresh token presented again after its first use. */
export interface RefreshTokenReuseOptions {
  /**
   * Seconds after a token's first use during which presenting it again is answered with the same successor (several
   * processes sharing one stored token, racing refreshes, a lost response). After it, presenting it is reuse: the
   * grant is revoked. Within it, a copy of any token used in the window reaches the live token: whoever holds one is
   * not told apart from the client. Default twice the access-token lifetime (7,200 with its default of an hour: a
   * process that shares a token and refreshes once per access token comes back within it), at most the refresh
   * token lifetime; from 0 to the refresh token lifetime. A token bound to a DPoP key is held to 'strict' whatever
   * this says.
   */
  window?: number;
  /**
   * Whether the grant's newest used token, while nobody has used its successor, is answered with that successor at
   * any time, even after the window (a client that lost the response retrying days later: nobody has gone on with
   * the grant since). Default true.
   */
  untilSuccessorUsed?: boolean;
}

/** The parsed policy the rotation rule applies. */
export interface RefreshTokenReusePolicy {
  windowMs: number;
  untilSuccessorUsed: boolean;
  /** The key successors are derived with (crypto/refresh-token.ts), itself derived from the router's secret. */
  successorKey: Buffer;
}

/** The policy of RFC 9700 before clients shared tokens: a used token is good for a minute, then it is reuse. */
const STRICT_REUSE: Required<RefreshTokenReuseOptions> = { window: 60, untilSuccessorUsed: false };

/**
 * The policy for a refresh token bound to a DPoP key (RFC 9449 §5): 'strict', or the operator's window if shorter.
 * Only the holder of the key can present such a token at all, so the leniency that keeps sharing processes and lost
 * answers connected is not needed to tell a thief apart, and a copy taken with the key is caught a minute on.
 */
export function boundTokenPolicy(policy: RefreshTokenReusePolicy): RefreshTokenReusePolicy {
  return {
    ...policy,
    windowMs: Math.min(policy.windowMs, STRICT_REUSE.window * 1000),
    untilSuccessorUsed: false,
  };
}

export function parseRefreshTokenReuse(
  given: RefreshTokenReuseOptions | 'strict' | undefined,
  refreshTokenLifetime: number,
  secret: Buffer,
  fail: (message: string) => never,
  accessTokenLifetime = 3600,
): RefreshTokenReusePolicy {
  const options = given === 'strict' ? STRICT_REUSE : (given ?? {});
  if (!options || typeof options !== 'object')
    fail("refreshTokenReuse must be 'strict' or { window, untilSuccessorUsed }.");
  // A process holding its own copy of a shared token refreshes when its access token has expired: within one
  // access-token lifetime of another's refresh while it is in use, and a second lifetime lets it sit idle through one
  // expiry. docs/security.md has the numbers.
  const window = options.window ?? Math.min(2 * accessTokenLifetime, refreshTokenLifetime);
  if (!Number.isInteger(window) || window < 0 || window > refreshTokenLifetime) {
    fail(
      `refreshTokenReuse.window must be a whole number of seconds from 0 to the refresh token lifetime ` +
        `(${refreshTokenLifetime}), got ${String(options.window)}.`,
    );
  }
  const untilSuccessorUsed = options.untilSuccessorUsed ?? true;
  if (typeof untilSuccessorUsed !== 'boolean')
    fail('refreshTokenReuse.untilSuccessorUsed must be true or false.');
  return {
    windowMs: window * 1000,
    untilSuccessorUsed,
    // A key of its own, so that a successor tells nothing about the cookie or CSRF keys made from the same secret.
    // Stryker disable next-line StringLiteral: equivalent, any label of its own keeps the key apart from the others
    successorKey: createHmac('sha256', secret).update('express-mcp-oauth refresh-token successor').digest(),
  };
}
