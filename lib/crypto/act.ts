// The act claim of a token issued by a token exchange (RFC 8693 §4.1): the current actor's `sub`, and nested within
// it the actors before. Read and written here, so the signer and the exchange agree on its shape and depth.

/** RFC 8693 §4.1: who acts for the token's subject; a nested `act` is the actor before (the outermost is the latest). */
export interface ActClaim {
  sub: string;
  act?: ActClaim;
}

/**
 * The most actors a chain may hold. RFC 8693 sets no limit; each exchange adds one, and a token carries its whole
 * chain, so a loop of services exchanging for one another would otherwise grow tokens without end.
 */
export const MAX_ACT_DEPTH = 5;

/** Whether a claim is an act chain of at most `depth` actors, each with a string sub and no member but sub and act. */
export function isActClaim(value: unknown, depth: number): value is ActClaim {
  if (depth < 1 || typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { sub, act, ...rest } = value as Record<string, unknown>;
  // RFC 8693 §4.1 lets an actor carry other identity claims (iss); none is written here, and one this server does not
  // write is not read as harmless.
  if (typeof sub !== 'string' || !sub || Object.keys(rest).length > 0) return false;
  return act === undefined || isActClaim(act, depth - 1);
}

/** How many actors a chain holds. */
export const actDepth = (act: ActClaim | undefined): number =>
  act === undefined ? 0 : 1 + actDepth(act.act);
