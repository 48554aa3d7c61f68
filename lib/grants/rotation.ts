// The refresh-token rotation rule (RFC 6749 §6, RFC 9700 §4.14.2), decided by the library for every store: a store
// only reads a token with its grant and performs one compare-and-set (OAuthStore.advanceRefreshToken).
//
// A grant remembers the token it last exchanged for the first time (its rotation pointer, and when). Each first use is
// of a successor of the previous latest token, so the used tokens of a grant form one chain ending at the pointer,
// and every question the rule asks is answered by that pointer and the presented token's parent:
// - a successor of the latest token (or a grant's first token, while nothing has been used) is unused and current;
// - the latest token itself was used, and none of its successors has been, so a retry is possible;
// - anything else was used before the latest, or is a sibling of a token that was used first: it is stale.
// The pointer only moves forward along that chain, so a decision of reuse made on a read is final, and a first use or
// a retry is applied only if the pointer has not moved since the read (otherwise the rule is asked again).
import { issueRefreshToken } from '../crypto/refresh-token';
import type { GrantRecord, OAuthStore, RefreshTokenKey, RefreshTokenLookup } from '../store/types';

export type RotationDecision =
  /** First use: the token becomes the grant's latest; a successor is issued. */
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
  { token, latestUsed }: Pick<RefreshTokenLookup, 'token' | 'latestUsed'>,
  now: number,
  retryWindowMs: number,
): RotationDecision {
  if (latestUsed !== null && token.key === latestUsed.key) {
    return now - latestUsed.usedAt <= retryWindowMs ? 'retry' : 'reuse';
  }
  return token.parentKey === (latestUsed?.key ?? null) ? 'first-use' : 'reuse';
}

/** What rotateRefreshToken needs. */
export interface RotateRefreshTokenInput {
  /** The store key of the token the client presented. */
  presentedKey: RefreshTokenKey;
  /** The authenticated client: a token issued to another client is treated as unknown and left untouched. */
  clientId: string;
  /** How long after its first use the presented token may be used again (lost responses, parallel refreshes). */
  retryWindowMs: number;
  /** The time of the request, in milliseconds since the epoch. */
  now: number;
}

/**
 * The outcome of a rotation. `rotated`: the successor (a new token, and its key) is stored and expires with the
 * grant. `reused`: a used or superseded token was presented outside the retry window; the grant is already revoked
 * in the store. `invalid`: unknown, expired, revoked, or issued to another client; nothing changed.
 */
export type RotateRefreshTokenResult =
  | { status: 'rotated'; grant: GrantRecord; successor: { token: string; key: RefreshTokenKey } }
  | { status: 'reused'; grantId: string }
  | { status: 'invalid' };

// Each failed swap means the pointer moved since the read; by the chain argument above the third read at the latest
// decides reuse (or finds the grant revoked). The bound only guards against a store that breaks the contract.
const MAX_ATTEMPTS = 4;

/** Exchanges a refresh token for a successor, detecting reuse, on any store that keeps the storage contract. */
export async function rotateRefreshToken(
  store: OAuthStore,
  { presentedKey, clientId, retryWindowMs, now }: RotateRefreshTokenInput,
): Promise<RotateRefreshTokenResult> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const found = await store.findRefreshToken(presentedKey);
    if (!found || found.token.clientId !== clientId) return { status: 'invalid' };
    const { token, grant, latestUsed } = found;
    if (grant.revokedAt !== null || grant.expiresAt <= now) return { status: 'invalid' };
    const decision = decideRotation(found, now, retryWindowMs);
    if (decision === 'reuse') {
      await store.revokeGrant(grant.grantId);
      return { status: 'reused', grantId: grant.grantId };
    }
    const successor = issueRefreshToken(grant.grantId);
    const advanced = await store.advanceRefreshToken({
      grantId: grant.grantId,
      expectedLatestUsed: latestUsed?.key ?? null,
      // The first of several successors to be used becomes the latest; the others go stale with it.
      ...(decision === 'first-use' ? { latestUsed: { key: token.key, usedAt: now } } : {}),
      successor: {
        key: successor.key,
        grantId: grant.grantId,
        clientId,
        parentKey: token.key,
        issuedAt: now,
        expiresAt: grant.expiresAt,
      },
    });
    if (advanced) return { status: 'rotated', grant: { ...grant, lastUsedAt: now }, successor };
  }
  throw new Error(
    'express-mcp-oauth: the store kept refusing advanceRefreshToken for a grant whose rotation pointer did not ' +
      'change; check that it compares the pointer as OAuthStore documents.',
  );
}
