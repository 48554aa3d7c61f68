// Memory for the bearer check, which runs on every tool call: verified access tokens (so a token reused through an
// MCP session is verified once), and the active state of grants (so most checks need no database read).
//
// Safety: a cached token is never used past its expiry, and a grant revoked through this process is refused at
// once. A grant revoked through another process is refused at most `grantStatusMs` later: that is the whole cost.
import type { BearerCacheOptions } from '../options';
import { sha256 } from '../crypto/secrets';
import type { AccessTokenClaims } from '../crypto/signer';
import type { OAuthStore } from '../store/types';

/** A verified token: its claims, and its scope already split. */
export interface VerifiedToken {
  claims: AccessTokenClaims;
  scopes: readonly string[];
}

export interface BearerCache {
  /** A token verified earlier for this audience, if it has not expired since. */
  verifiedToken(token: string, audience: string): VerifiedToken | undefined;
  /** Remembers a token just verified (if the cache is on) and returns it. */
  rememberToken(token: string, audience: string, claims: AccessTokenClaims): VerifiedToken;
  /** Whether the grant is active: from memory when it can be (a plain boolean), from the store otherwise. */
  isGrantActive(grantId: string): boolean | Promise<boolean>;
  /** A revocation through this process: the grant is refused from now on, without waiting. */
  forgetGrant(grantId: string): void;
}

const MAX_GRANTS = 50_000;

export function createBearerCache(
  store: OAuthStore,
  options: BearerCacheOptions,
  now: () => number,
): BearerCache {
  const maxTokens = options.accessTokens ?? 10_000;
  const grantStatusMs = options.grantStatusMs ?? 1000;
  const tokens = new Map<string, VerifiedToken>();
  /** grantId -> when it was last seen active, or 0 once it is known to be revoked (which is final). */
  const grants = new Map<string, number>();
  /** Counts revocations through this process, so a read that started before one is never remembered as active. */
  let revocations = 0;

  const bounded = <K, V>(map: Map<K, V>, max: number, key: K, value: V) => {
    if (map.size >= max && !map.has(key)) map.delete(map.keys().next().value as K);
    map.set(key, value);
  };
  const keyOf = (token: string, audience: string) => `${audience}\u0000${sha256(token)}`;

  return {
    verifiedToken(token, audience) {
      // Stryker disable next-line ConditionalExpression: equivalent, a shortcut: with maxTokens 0 rememberToken stores nothing, so the lookup finds nothing
      if (maxTokens === 0) return undefined;
      const key = keyOf(token, audience);
      const known = tokens.get(key);
      if (known && known.claims.exp * 1000 <= now()) {
        tokens.delete(key);
        return undefined;
      }
      return known;
    },
    rememberToken(token, audience, claims) {
      const known = { claims, scopes: claims.scope ? claims.scope.split(' ') : [] };
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, with maxTokens 0 (never below: options refuse it) verifiedToken never reads
      if (maxTokens > 0) bounded(tokens, maxTokens, keyOf(token, audience), known);
      return known;
    },
    isGrantActive(grantId) {
      const seen = grants.get(grantId);
      if (seen === 0) return false;
      // Stryker disable next-line ConditionalExpression: equivalent, for an unknown grant now() - undefined is NaN and the comparison false
      if (seen !== undefined && now() - seen < grantStatusMs) return true;
      const epoch = revocations;
      return Promise.resolve(store.isGrantActive(grantId)).then((active) => {
        // A revoked mark is final: a read already in flight when the grant was revoked must not undo it.
        if (grants.get(grantId) === 0) return false;
        // It answered for a moment before a revocation (maybe of this grant, its mark since pushed out): this
        // request may go on, as it began before, but the answer is not remembered for the next ones.
        if (active && epoch !== revocations) return true;
        // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, an active grant remembered with grantStatusMs 0 is never younger than 0 ms, so the store is asked again
        if (grantStatusMs > 0 || !active) bounded(grants, MAX_GRANTS, grantId, active ? now() : 0);
        return active;
      });
    },
    forgetGrant(grantId) {
      // Stryker disable next-line AssignmentOperator: equivalent, any change of the counter marks the revocation: it is only compared for inequality
      revocations += 1;
      bounded(grants, MAX_GRANTS, grantId, 0);
    },
  };
}
