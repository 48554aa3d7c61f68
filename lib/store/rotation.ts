// The refresh-token rotation rule, shared by every store so that they cannot drift apart (RFC 9700 §4.14.2).
//
// A grant remembers the token it last exchanged for the first time (its "latest" token, and when). Each first use is
// of a successor of the previous latest token, so the used tokens of a grant form one chain ending at the latest,
// and every question the rule asks is answered by that pointer and the presented token's parent:
// - a successor of the latest token (or a grant's first token, while nothing has been used) is unused and current;
// - the latest token itself was used, and none of its successors has been, so a retry is possible;
// - anything else was used before the latest, or is a sibling of a token that was used first: it is stale.
// So a rotation writes one grant row and inserts one token, instead of marking tokens used and superseded.

export type RotationDecision =
  /** First use: the token becomes the grant's latest; a successor is issued. */
  | 'first-use'
  /** A retry of the token just used (lost response, parallel refresh): issue another successor. */
  | 'retry'
  /** Any other use of a used or superseded token: revoke the whole grant. */
  | 'reuse';

/** What the rule needs to know of a grant: its latest first-used token and when it was used. */
export interface RotationPointer {
  latest_token_hash?: unknown;
  latest_used_at?: unknown;
}

/**
 * What presenting this token means. A used token may be presented again only within the retry window after its
 * first use, and only while none of its successors has been used; a superseded one (a sibling was used) never.
 */
export function decideRotation(
  token: { token_hash?: unknown; parent_hash?: unknown },
  grant: RotationPointer,
  now: number,
  retryWindowMs: number,
): RotationDecision {
  const latest = grant.latest_token_hash ?? null;
  if (latest !== null && token.token_hash === latest) {
    return now - Number(grant.latest_used_at) <= retryWindowMs ? 'retry' : 'reuse';
  }
  return (token.parent_hash ?? null) === latest ? 'first-use' : 'reuse';
}
