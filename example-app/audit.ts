// The app's audit trail: every event of the OAuth router goes to the structured log (pino, with its request id) and
// to the audit_events table, which the connected-apps page reads and the purge trims to AUDIT_RETENTION_DAYS.
//
// onEvent is synchronous and must never fail a request, so events are queued and written in one transaction per
// turn of the event loop: a busy token endpoint costs one extra write per batch, not one per event.
import type { OAuthEvent } from 'express-mcp-oauth';
import type { Logger } from 'pino';
import type { AppDb } from './db/database';

export interface AuditLog {
  /** The router's onEvent. */
  record(event: OAuthEvent): void;
  /** Resolves once every event recorded so far is in the table (tests, shutdown). */
  flush(): Promise<void>;
  /** One batch of the app's purge: deletes up to `limit` events past the retention, oldest first; returns how many. */
  purge(now: number, limit: number): Promise<number>;
  /** Per client of a user: the last sign-in for it and the last refresh of each grant. */
  activity(userId: string): Promise<ActivitySummary>;
}

interface ActivitySummary {
  lastSignIn: Map<string, number>;
  lastRefresh: Map<string, number>;
}

/**
 * The oldest events past the retention, by the time index. Ordered by time (then id, which the index holds too), not
 * by id alone: for `ORDER BY id` SQLite, without statistics, walks the whole table in id order and filters on time,
 * which reads every page of a large trail into the connection's page cache on each pass.
 */
export const PURGE_AUDIT_SQL =
  'DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE time < ? ORDER BY time, id LIMIT ?)';
/** At most this many events wait for the table; past it the oldest are dropped (the log line has them). */
const MAX_QUEUE = 10_000;

export function createAuditLog(db: AppDb, logger: Logger, retentionMs: number): AuditLog {
  let queue: OAuthEvent[] = [];
  let writing: Promise<void> = Promise.resolve();
  let scheduled = false;

  // One statement per event, all in one go: on SQLite a single synchronous transaction, so the token requests'
  // store calls never queue behind an audit write that awaits its own inserts one by one.
  const write = (events: OAuthEvent[]) =>
    db.runMany(
      `INSERT INTO audit_events (time, type, client_id, user_id, grant_id, address, request_id, detail)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      events.map(({ type, time, clientId, userId, grantId, address, requestId, ...detail }) => [
        time,
        type,
        clientId ?? null,
        userId ?? null,
        grantId ?? null,
        address ?? null,
        requestId ?? null,
        JSON.stringify(detail),
      ]),
    );
  const drain = () => {
    scheduled = false;
    const events = queue;
    queue = [];
    writing = writing
      .then(() => write(events))
      .catch((error: Error) => logger.error({ err: error, lost: events.length }, 'audit events not saved'));
  };

  return {
    record(event) {
      const { requestId, ...fields } = event;
      logger.info({ reqId: requestId, audit: fields }, event.type);
      if (queue.length >= MAX_QUEUE) queue.shift();
      queue.push(event);
      if (!scheduled) {
        scheduled = true;
        setImmediate(drain);
      }
    },
    async flush() {
      if (scheduled) drain();
      await writing;
    },
    purge: (now, limit) => db.run(PURGE_AUDIT_SQL, [now - retentionMs, limit]),
    async activity(userId) {
      const rows = await db.all<{ type: string; key: string; at: number }>(
        `SELECT type, CASE WHEN type = 'sign_in.succeeded' THEN client_id ELSE grant_id END AS key, max(time) AS at
           FROM audit_events WHERE user_id = ? AND type IN ('sign_in.succeeded', 'token.refreshed')
          GROUP BY type, CASE WHEN type = 'sign_in.succeeded' THEN client_id ELSE grant_id END`,
        [userId],
      );
      const summary: ActivitySummary = { lastSignIn: new Map(), lastRefresh: new Map() };
      for (const row of rows) {
        (row.type === 'sign_in.succeeded' ? summary.lastSignIn : summary.lastRefresh).set(
          row.key,
          Number(row.at),
        );
      }
      return summary;
    },
  };
}
