// Users' upstream tokens in memory (UpstreamTokenStore), for memory.ts: the same rules as the other kinds there. No
// method awaits between its check and its write, so each test-and-set is atomic within the process.
import type { UpstreamTokenStore, UpstreamTokensRecord } from './types';

/** The upstream-token methods of the memory store, and its share of purgeExpired. */
export interface MemoryUpstreamTokens {
  methods: UpstreamTokenStore;
  /** Deletes up to `batchSize` expired rows; returns how many. */
  purge(batchSize: number): number;
}

/** Upstream tokens held in a Map, their lifetimes compared against `now`. */
export function createMemoryUpstreamTokens(now: () => number): MemoryUpstreamTokens {
  const rows = new Map<string, UpstreamTokensRecord>();
  // A row lives while the clock is before its expiresAt, as every record of the store does.
  const alive = (row: UpstreamTokensRecord) => now() < row.expiresAt;
  // The row attached to a grant, expired or not: a database's unique grant_id sees expired rows too.
  const attachedTo = (grantId: string) => [...rows.values()].find((row) => row.grantId === grantId);
  const live = (grantId: string) => {
    const row = attachedTo(grantId);
    return row && alive(row) ? row : undefined;
  };

  const methods: UpstreamTokenStore = {
    saveUpstreamTokens({ id, provider, userId, sealed, expiresAt }) {
      if (rows.has(id)) throw new Error('saveUpstreamTokens: the id is taken.');
      rows.set(id, { id, provider, userId, sealed, grantId: null, version: 0, leaseUntil: 0, expiresAt });
    },
    // Once per row, and one row per grant: every check comes before the write.
    attachUpstreamTokens(id, grantId, expiresAt) {
      const row = rows.get(id);
      if (!row || !alive(row) || row.grantId !== null || attachedTo(grantId)) return false;
      Object.assign(row, { grantId, expiresAt });
      return true;
    },
    findUpstreamTokens: (grantId) => copy(live(grantId)),
    // One refresher at a time: a lease is granted only once the one before has run out, by the store's clock.
    leaseUpstreamTokens(grantId, version, until) {
      const row = live(grantId);
      if (!row || row.version !== version || row.leaseUntil > now()) return false;
      row.leaseUntil = until;
      return true;
    },
    replaceUpstreamTokens(grantId, version, sealed) {
      const row = live(grantId);
      if (!row || row.version !== version) return false;
      Object.assign(row, { sealed, version: version + 1, leaseUntil: 0 });
      return true;
    },
    // Expired or not: what the row held goes back to the caller with its deletion.
    deleteUpstreamTokens(grantId) {
      const row = attachedTo(grantId);
      if (row) rows.delete(row.id);
      return row;
    },
  };

  const purge = (batchSize: number) => {
    const dead = [...rows.values()].filter((row) => !alive(row)).slice(0, batchSize);
    for (const row of dead) rows.delete(row.id);
    return dead.length;
  };
  return { methods, purge };
}

/** Records cross the seam as copies: a caller changing one changes nothing stored. */
const copy = (row: UpstreamTokensRecord | undefined) => (row ? { ...row } : undefined);
