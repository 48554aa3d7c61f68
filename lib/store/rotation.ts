// The refresh-token rotation rule, shared by every store so that they cannot drift apart (RFC 9700 §4.14.2).

export type RotationDecision =
  /** First use: mark it used, supersede its unused siblings, issue a successor. */
  | 'first-use'
  /** A retry of the token just used (lost response, parallel refresh): issue another successor. */
  | 'retry'
  /** Any other use of a used or superseded token: revoke the whole grant. */
  | 'reuse';

/**
 * What presenting this token means. A used token may be presented again only within the retry window after its
 * first use, and only while none of its successors has been used; a superseded one (a sibling was used) never.
 */
export function decideRotation(
  token: { used_at?: unknown; superseded_at?: unknown },
  now: number,
  retryWindowMs: number,
  successorUsed: boolean,
): RotationDecision {
  if (token.superseded_at !== null && token.superseded_at !== undefined) return 'reuse';
  if (token.used_at === null || token.used_at === undefined) return 'first-use';
  return now - Number(token.used_at) <= retryWindowMs && !successorUsed ? 'retry' : 'reuse';
}
