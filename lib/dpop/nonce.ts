// Server nonces for DPoP proofs (RFC 9449 §8): a nonce limits how far ahead a client can make proofs, so a proof
// stolen from a client's memory is worth minutes, not as long as the client's clock says. Stateless: a nonce is an
// HMAC of the current five-minute period under a key derived from the router's secret, so every instance that shares
// the secret issues and accepts the same nonces, and nothing is stored.
import { createHmac } from 'node:crypto';

/** How long one nonce is current; the one before it is still accepted, so a nonce lasts five to ten minutes. */
export const NONCE_PERIOD_MS = 5 * 60_000;

/** The nonces a server gives out and accepts. */
export interface DpopNonces {
  /** The nonce to send in the DPoP-Nonce header now. */
  current(): string;
  /** Whether a proof's nonce claim is one this server gave out in the current or the previous period. */
  accepts(nonce: unknown): boolean;
}

export function createDpopNonces(secret: Buffer, now: () => number): DpopNonces {
  // A key of its own, so that a nonce tells nothing about the other keys made from the same secret.
  // Stryker disable next-line StringLiteral: equivalent, any label of its own keeps the key apart from the others
  const key = createHmac('sha256', secret).update('express-mcp-oauth dpop nonce').digest();
  // Stryker disable next-line ObjectLiteral,StringLiteral: equivalent, a memo that never matches only computes again
  let memo = { period: Number.NaN, nonce: '' };
  const nonceOf = (period: number): string => {
    // Stryker disable next-line ConditionalExpression: equivalent, a memo only: computing every time gives the same nonce
    if (period !== memo.period) {
      memo = { period, nonce: createHmac('sha256', key).update(String(period)).digest('base64url') };
    }
    return memo.nonce;
  };
  const periodNow = () => Math.floor(now() / NONCE_PERIOD_MS);
  return {
    current: () => nonceOf(periodNow()),
    accepts(nonce) {
      // Stryker disable next-line ConditionalExpression: equivalent, no other value equals a nonce string below
      if (typeof nonce !== 'string') return false;
      const period = periodNow();
      if (nonce === nonceOf(period)) return true;
      const previous = createHmac('sha256', key)
        .update(String(period - 1))
        .digest('base64url');
      return nonce === previous;
    },
  };
}
