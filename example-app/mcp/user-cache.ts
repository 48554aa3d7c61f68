// The token's user, looked up at most once a second per user instead of once per tool call. A token carries the
// user id but not the company, and a user can be deleted while their tokens live on: a deleted user is served from
// memory for at most `ttlMs` (one second), and never when unknown (absence is not remembered).
import type { AppUser } from '../users';

export interface UserCache {
  /** The user, from memory when looked up less than `ttlMs` ago (no promise then), else from `find`. */
  get(id: string): AppUser | null | Promise<AppUser | null>;
}

export function createUserCache(
  find: (id: string) => Promise<AppUser | null>,
  {
    ttlMs = 1000,
    maxEntries = 10_000,
    now = Date.now,
  }: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
): UserCache {
  const entries = new Map<string, { user: AppUser; at: number }>();
  const pending = new Map<string, Promise<AppUser | null>>();
  return {
    get(id) {
      const entry = entries.get(id);
      if (entry && now() - entry.at < ttlMs) return entry.user;
      const inFlight = pending.get(id);
      if (inFlight) return inFlight;
      const started = now();
      const lookup = find(id)
        .then((user) => {
          entries.delete(id);
          if (user) {
            entries.set(id, { user, at: started });
            if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
          }
          return user;
        })
        .finally(() => pending.delete(id));
      pending.set(id, lookup);
      return lookup;
    },
  };
}
