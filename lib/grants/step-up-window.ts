// The step-up window: a client that answers a scope challenge by refreshing is sent to authorize again.
//
// The MCP spec's step-up (RFC 6750 §3.1 insufficient_scope, then a new authorization request for the challenge's
// scope) assumes the client goes to the authorization endpoint. The MCP SDK 1.x client, like others, refreshes first
// when it holds a refresh token: the refresh succeeds with the grant's scopes (RFC 6749 §6 never widens them), the
// retry is refused again, and the client gives up without ever asking the person. So when a tool is refused for want
// of scope, the grant is marked for a short window, and the first refresh of its current token in that window is
// refused with invalid_grant: the client drops its tokens and authorizes with the challenge's scope, which names what
// the token had together with what the tool needs. Nothing is revoked: the grant, and its refresh token, still work
// until the new grant replaces it (replace-earlier.ts) or the person revokes it.
//
// Only a first use of the grant's current token is refused: the rotation rule, which reads the token anyway, asks
// the window when it finds one (rotation.ts, beforeFirstUse). A used token presented again is reuse or a retry, which
// the rule decides as always (a stolen token must still revoke the grant). The mark is taken once, so a client that
// refreshes again is served, and only by the client's current token: a grant id alone (no secret: access tokens and
// events carry it) cannot take a mark, nor keep one alive.
//
// A 403 writes the mark on the grant's row before it is answered: a token holder refused again and again would make
// as many writes, so a process marks one grant at most once every few seconds.
import type { OAuthStore } from '../store/types';
import { invalidGrant } from './grant-token-response';

/** Default length of the window, in milliseconds: long enough for a client that asks the person first. */
const DEFAULT_STEP_UP_WINDOW_MS = 120_000;
/** A grant marked by this process is not marked again sooner. */
const REMARK_AFTER_MS = 5_000;
/** How many grants' last marks a process remembers (the oldest go first). */
const REMEMBERED_MARKS = 10_000;

/** The window as the router uses it. */
export interface StepUpWindow {
  /** Marks the grant: a tool was refused for want of scope now. */
  mark(grantId: string): Promise<void>;
  /**
   * Throws invalid_grant if this refresh, a first use of the grant's current token by the client that holds it (as
   * the rotation rule found it), is the first one since a refusal.
   */
  checkFirstUse(grantId: string): Promise<void>;
}

/** Checks the router's `stepUpWindowMs` option, failing fast with a message that says how to fix it. */
export function parseStepUpWindowMs(value: unknown, fail: (message: string) => never): number {
  if (value === undefined) return DEFAULT_STEP_UP_WINDOW_MS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 3_600_000)
    fail('stepUpWindowMs must be a whole number of milliseconds from 0 (off) to 3,600,000 (an hour).');
  return value;
}

/** The window, or undefined when off: `windowMs` 0, as the router makes it for a store without the marks. */
export function createStepUpWindow(
  store: Pick<OAuthStore, 'markScopeChallenge' | 'takeScopeChallenge'>,
  windowMs: number,
  now: () => number,
): StepUpWindow | undefined {
  if (windowMs === 0) return undefined;
  const lastMarked = new Map<string, number>();
  return {
    async mark(grantId) {
      const at = now();
      const before = lastMarked.get(grantId);
      if (before !== undefined && at - before < REMARK_AFTER_MS) return;
      lastMarked.delete(grantId);
      lastMarked.set(grantId, at);
      if (lastMarked.size > REMEMBERED_MARKS) lastMarked.delete(lastMarked.keys().next().value!);
      await store.markScopeChallenge!(grantId, at + windowMs);
    },
    async checkFirstUse(grantId) {
      if (!(await store.takeScopeChallenge!(grantId))) return;
      throw invalidGrant(
        'A tool needed more scope than this authorization holds: ask the user again at the authorization ' +
          'endpoint, for the scope the 403 challenge named. The authorization itself is unchanged.',
      );
    },
  };
}
