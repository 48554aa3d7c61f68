// The refresh-token rotation rule (RFC 6749 §6, RFC 9700 §4.14.2), decided by the library for every store: a store
// only reads a token with its grant and performs one compare-and-set (OAuthStore.advanceRefreshToken).
//
// Every token has one successor, derived from it (crypto/refresh-token.ts), so the grant's tokens form one chain and
// every process that presents a token gets the same next one: clients that share a stored token, or race two
// refreshes of it, converge instead of branching. The grant remembers the token it last exchanged for the first time
// (its rotation pointer, and when), and a token's successor, once stored, says when the token was first used:
// - a successor of the latest token (or a grant's first token, while nothing has been used) is unused: first use;
// - a used token is answered with its successor again within the reuse window after its first use, and, when the
//   policy says so, at any time while it is the latest (nobody has used its successor since);
// - any other presentation of a used token is reuse, and so is a token that is neither (a sibling left over from a
//   branch, or a second first token once another was used): the grant is revoked, as RFC 9700 §4.14.2 asks, since
//   the server cannot tell which of two holders is the thief.
// The pointer only moves forward along the chain, so a decision of reuse made on a read is final, and a first use
// is applied only if the pointer has not moved since the read (otherwise the rule is asked again).
import { boundKeyOf, refreshTokenKey, successorOf } from '../crypto/refresh-token';
import type { GrantRecord, OAuthStore, RefreshTokenKey, RefreshTokenLookup } from '../store/types';
import { boundTokenPolicy, type RefreshTokenReusePolicy } from './reuse-options';

/** What presenting a token means, and what the decision rests on. */
export type Presentation =
  /** Its first use: it becomes the grant's latest; its successor is stored. */
  | { kind: 'first-use' }
  /** A used token presented again within the policy: answered with its successor, stored already or not yet. */
  | { kind: 'repeat'; firstUsedAt: number; successorStored: boolean }
  /** Reuse: the grant must be revoked. */
  | { kind: 'reuse'; reason: ReuseReason; firstUsedAt: number | null };

/**
 * Why a presentation is reuse: `after_window`, a used token came back after the reuse window (and, when the policy
 * allows the latest token at any time, after its successor was used); `superseded`, a token that was never used and
 * never will be (a sibling of a used token, or a second first token of the grant).
 */
type ReuseReason = 'after_window' | 'superseded';

/** Classifies a presented token against its grant's pointer; reads the store once more when the token is older. */
export async function classifyPresentation(
  store: Pick<OAuthStore, 'findRefreshToken'>,
  found: Pick<RefreshTokenLookup, 'token' | 'grant' | 'latestUsed'>,
  successorKey: RefreshTokenKey,
  policy: Pick<RefreshTokenReusePolicy, 'windowMs' | 'untilSuccessorUsed'>,
  now: number,
): Promise<Presentation> {
  const { token, latestUsed } = found;
  const latest = latestUsed !== null && token.key === latestUsed.key;
  if (!latest && token.parentKey === (latestUsed?.key ?? null)) return { kind: 'first-use' };
  // Its successor, when stored, was issued at the token's first use. The latest token may have none yet: a successor
  // issued before successors were derived (its retry stores the derived one).
  const successor = await store.findRefreshToken(successorKey);
  const successorStored = successor !== undefined && successor.token.parentKey === token.key;
  const firstUsedAt = latest ? latestUsed.usedAt : successorStored ? successor.token.issuedAt : null;
  if (firstUsedAt === null) return { kind: 'reuse', reason: 'superseded', firstUsedAt };
  if (now - firstUsedAt <= policy.windowMs || (latest && policy.untilSuccessorUsed)) {
    return { kind: 'repeat', firstUsedAt, successorStored };
  }
  return { kind: 'reuse', reason: 'after_window', firstUsedAt };
}

/**
 * The policy a presented token is held to: a DPoP-bound token's is 'strict' (reuse-options.ts), since only the holder
 * of its key can present it at all. The token endpoint and introspection ask the same.
 */
export function policyFor(presentedToken: string, policy: RefreshTokenReusePolicy): RefreshTokenReusePolicy {
  return boundKeyOf(presentedToken) === undefined ? policy : boundTokenPolicy(policy);
}

/** What rotateRefreshToken needs. */
export interface RotateRefreshTokenInput {
  /** The refresh token the client presented. */
  presentedToken: string;
  /** The authenticated client: a token issued to another client is treated as unknown and left untouched. */
  clientId: string;
  policy: RefreshTokenReusePolicy;
  /** The time of the request, in milliseconds since the epoch. */
  now: number;
  /**
   * Asked before a first use (the holder's current token) is applied, with its grant; what it throws is the
   * request's answer, and nothing has changed. A repeat or a reuse never reaches it. The step-up window uses it.
   */
  beforeFirstUse?: (grant: GrantRecord) => Promise<void>;
}

/**
 * The outcome of a rotation. `rotated`: the successor is stored and expires with the grant; `firstUsedAt` is null
 * for a first use and the time of the first use for a repeat. `reused`: the grant is already revoked in the store.
 * `invalid`: unknown, expired, revoked, or issued to another client; nothing changed.
 */
export type RotateRefreshTokenResult =
  | {
      status: 'rotated';
      grant: GrantRecord;
      successor: { token: string; key: RefreshTokenKey };
      firstUsedAt: number | null;
    }
  | { status: 'reused'; grantId: string; reason: ReuseReason; firstUsedAt: number | null }
  | { status: 'invalid' };

// Each failed swap means the pointer moved since the read; by the chain argument above the third read at the latest
// decides (or finds the grant revoked). The bound only guards against a store that breaks the contract.
const MAX_ATTEMPTS = 4;

/** Exchanges a refresh token for its successor, detecting reuse, on any store that keeps the storage contract. */
export async function rotateRefreshToken(
  store: OAuthStore,
  { presentedToken, clientId, policy: given, now, beforeFirstUse }: RotateRefreshTokenInput,
): Promise<RotateRefreshTokenResult> {
  const presentedKey = refreshTokenKey(presentedToken);
  const policy = policyFor(presentedToken, given);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const found = await store.findRefreshToken(presentedKey);
    if (!found || found.token.clientId !== clientId) return { status: 'invalid' };
    const { token, grant, latestUsed } = found;
    if (grant.revokedAt !== null || grant.expiresAt <= now) return { status: 'invalid' };
    const successor = successorOf(presentedToken, grant.grantId, policy.successorKey);
    const presentation = await classifyPresentation(store, found, successor.key, policy, now);
    if (presentation.kind === 'reuse') {
      await store.revokeGrant(grant.grantId);
      const { reason, firstUsedAt } = presentation;
      return { status: 'reused', grantId: grant.grantId, reason, firstUsedAt };
    }
    const firstUse = presentation.kind === 'first-use';
    if (firstUse && beforeFirstUse) await beforeFirstUse(grant);
    // Stryker disable next-line ConditionalExpression: equivalent, a first use has no successorStored
    if (!firstUse && presentation.successorStored) {
      return { status: 'rotated', grant, successor, firstUsedAt: presentation.firstUsedAt };
    }
    // A successor's issuedAt is when its parent was first used: classifyPresentation reads it back as that. So one
    // stored late (a repeat of the latest token whose successor was issued before successors were derived, or under
    // another secret) keeps the time of the first use, never the repeat's, or a copy of the parent would get a new
    // window once the grant moved on.
    const usedAt = firstUse ? now : presentation.firstUsedAt;
    const advanced = await advance(store, {
      grantId: grant.grantId,
      expectedLatestUsed: latestUsed?.key ?? null,
      ...(firstUse ? { latestUsed: { key: token.key, usedAt } } : {}),
      successor: {
        key: successor.key,
        grantId: grant.grantId,
        clientId,
        parentKey: token.key,
        issuedAt: usedAt,
        expiresAt: grant.expiresAt,
      },
    });
    if (advanced) {
      return {
        status: 'rotated',
        grant: { ...grant, lastUsedAt: usedAt },
        successor,
        firstUsedAt: firstUse ? null : presentation.firstUsedAt,
      };
    }
  }
  throw new Error(
    'express-mcp-oauth: the store kept refusing advanceRefreshToken for a grant whose rotation pointer did not ' +
      'change; check that it compares the pointer as OAuthStore documents.',
  );
}

/**
 * advanceRefreshToken, where a refused insert counts as a lost swap: two repeats of a latest token whose successor
 * was not stored yet race to insert the same derived successor, and the loser reads it on its next attempt.
 */
async function advance(store: OAuthStore, input: Parameters<OAuthStore['advanceRefreshToken']>[0]) {
  try {
    return await store.advanceRefreshToken(input);
  } catch (error) {
    const stored = await Promise.resolve()
      .then(() => store.findRefreshToken(input.successor.key))
      .catch(() => undefined);
    // Stryker disable next-line BooleanLiteral: equivalent, true would answer with the successor the other stored
    if (stored) return false;
    throw error;
  }
}
