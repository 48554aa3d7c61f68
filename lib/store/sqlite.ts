// The default store: SQLite through better-sqlite3, with every atomic operation in an IMMEDIATE transaction.
import type { Database } from 'better-sqlite3';
import { grantKeyRange } from '../crypto/refresh-token';
import { createGroupCommit } from './group-commit';
import { withSweepCache } from './sqlite-cache';
import { migrateSqlite } from './sqlite-schema';
import { prepareStatements } from './sqlite-statements';
import { sqliteUpstreamTokens } from './sqlite-upstream';
import {
  mapRow,
  toClient,
  toClientListing,
  toCode,
  toDeviceAuthorization,
  toGrant,
  toRefreshLookup,
  toSigningKey,
  type Row,
} from './rows';
import type {
  AdvanceRefreshTokenInput,
  ClientRecord,
  GrantRecord,
  GrantWithClient,
  OAuthStore,
  SigningKeyStore,
  UpstreamTokenStore,
} from './types';

/** Options of createSqliteStore. */
export interface SqliteStoreOptions {
  /** The clock lifetimes are compared against, in milliseconds since the epoch. Default Date.now. */
  now?: () => number;
  /**
   * Whether the atomic writes of code exchanges and refresh-token rotations that arrive in the same turn of the event
   * loop share one transaction (each in a savepoint of its own; every caller answered after the COMMIT). Default true:
   * under load a commit then writes each page once for many requests. False commits each write on its own, at once.
   */
  groupCommit?: boolean;
}

/**
 * The SQLite store: the storage contract, the underlying database, and a way to close it.
 * It keeps both optional capabilities of OAuthStore, so they are required here.
 */
export interface SqliteStore extends Required<OAuthStore>, SigningKeyStore, UpstreamTokenStore {
  /** The better-sqlite3 connection, for a host app that keeps its own tables in the same file. */
  readonly database: Database;
  /** Closes the connection if the store opened it. */
  close(): void;
}

/**
 * Opens (or adopts) a SQLite database, migrates its schema and returns the store. Pass a file path, or an open
 * better-sqlite3 Database that the host app owns.
 */
export function createSqliteStore(
  pathOrDatabase: string | Database,
  options: SqliteStoreOptions = {},
): SqliteStore {
  const ownsDatabase = typeof pathOrDatabase === 'string';
  if (!ownsDatabase && !(pathOrDatabase && typeof (pathOrDatabase as Database).prepare === 'function')) {
    throw new TypeError('createSqliteStore: pass a file path or a better-sqlite3 Database.');
  }
  const now = options.now ?? Date.now;
  // Loaded here, not at import: an app on another store never loads the native module (nor needs it built).
  const db = ownsDatabase
    ? new (require('better-sqlite3') as typeof import('better-sqlite3'))(pathOrDatabase)
    : pathOrDatabase;
  // WAL lets readers (the bearer check) run beside a writer; NORMAL sync is durable across process crashes.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // Checkpoints (the only fsyncs under synchronous=NORMAL) every 4,000 pages instead of 1,000: each rotation writes
  // a few pages, and a bigger batch costs less per page. The WAL file peaks around 16 MB.
  db.pragma('wal_autocheckpoint = 4000');
  migrateSqlite(db);

  const sql = prepareStatements(db);

  /**
   * The grant a code or a device approval was just claimed for, while it is active, with its first refresh token
   * inserted and its last use set in the same step (consumeAuthorizationCode, redeemDeviceAuthorization).
   */
  const grantWithFirstToken = (
    grantId: string,
    clientId: string,
    at: number,
    firstTokenHash: string | undefined,
  ): GrantRecord | undefined => {
    const grantRow = sql.findGrant.get(grantId, at) as Row | undefined;
    if (!grantRow || grantRow.revoked_at !== null) return undefined;
    if (firstTokenHash === undefined) return toGrant(grantRow);
    sql.insertToken.run(firstTokenHash, grantId, clientId, null, at, grantRow.expires_at);
    sql.markGrantUsed.run(at, grantId);
    return { ...toGrant(grantRow), lastUsedAt: at };
  };

  const consume = (codeHash: string, at: number, firstTokenHash: string | undefined) => {
    const claimed = sql.claimCode.get(at, codeHash, at) as Row | undefined;
    if (!claimed) {
      // Not claimed: unknown or expired, or used already (a replay), which the caller answers by revoking the grant.
      const row = sql.findCode.get(codeHash, at) as Row | undefined;
      return row ? ({ status: 'replayed', code: toCode(row) } as const) : ({ status: 'not_found' } as const);
    }
    const code = toCode(claimed);
    const grant = grantWithFirstToken(code.grantId, code.clientId, at, firstTokenHash);
    return { status: 'consumed', code, grant } as const;
  };

  // As consume, for a device authorization the user approved.
  const redeemDevice = (deviceCodeHash: string, at: number, firstTokenHash: string | undefined) => {
    const claimed = sql.claimDevice.get(deviceCodeHash, at) as Row | undefined;
    if (!claimed) return { status: 'not_redeemed' } as const;
    const grantId = claimed.grant_id as string;
    const grant = grantWithFirstToken(grantId, claimed.client_id as string, at, firstTokenHash);
    return { status: 'redeemed', grant } as const;
  };

  const advance = (input: AdvanceRefreshTokenInput, at: number): boolean => {
    const { successor, latestUsed, expectedLatestUsed, grantId } = input;
    const swapped = latestUsed
      ? sql.moveLatest.run(
          latestUsed.key,
          latestUsed.usedAt,
          successor.issuedAt,
          grantId,
          expectedLatestUsed,
          at,
        )
      : sql.keepLatest.run(successor.issuedAt, grantId, expectedLatestUsed, at);
    if (swapped.changes === 0) return false;
    sql.insertToken.run(
      successor.key,
      successor.grantId,
      successor.clientId,
      successor.parentKey,
      successor.issuedAt,
      successor.expiresAt,
    );
    return true;
  };

  // The two writes of a grant's life that every token request makes: grouped across requests, or each on its own.
  const grouped = options.groupCommit === false ? undefined : createGroupCommit(db);
  const atomically: Atomically = grouped ? grouped.run : commitEachAtOnce(db);

  // Codes first; then expired grants, each with its refresh tokens (by key range, and the old-format ones by the
  // partial index) and, by cascade, its codes; then the document copies no grant names any more; then expired
  // upstream tokens (by their own expires_at). One IMMEDIATE transaction, as a grant and its copy are written in
  // one: neither can slip between the other's steps.
  const purge = db.transaction((batchSize: number, at: number) => {
    let removed = sql.purgeCodes.run(at, batchSize).changes;
    removed += sql.purgeAssertions.run(at, batchSize).changes;
    sql.revokeUnredeemed.run(at, at);
    removed += sql.purgeDevices.run(at, batchSize).changes;
    for (const { grant_id: grantId } of sql.expiredGrants.all(at, batchSize) as Array<{ grant_id: string }>) {
      const [lower, upper] = grantKeyRange(grantId);
      sql.deleteGrantTokens.run(lower, upper, grantId);
      sql.deleteUnkeyedGrantTokens.run(grantId);
      removed += sql.deleteGrant.run(grantId).changes;
    }
    removed += sql.purgeDocumentCopies.run(batchSize).changes;
    return removed + sql.purgeUpstream.run(at, batchSize).changes;
  });

  // Both steps or neither: the retired key and the new current one change together.
  const promoteKey = db.transaction((kid: string, at: number): boolean => {
    if (!sql.isNextKey.get(kid)) return false;
    sql.retireCurrentKey.run(at);
    return sql.promoteNextKey.run(kid).changes === 1;
  });

  const insertGrant = (grant: GrantRecord) => {
    sql.insertGrant.run(
      grant.grantId,
      grant.clientId,
      grant.userId,
      grant.scopes.join(' '),
      grant.resource,
      grant.createdAt,
      grant.expiresAt,
      grant.lastUsedAt,
      grant.revokedAt,
    );
  };

  // A consented document's copy and its grant: both or neither, so the grant always names a stored client.
  const grantWithDocument = db.transaction((grant: GrantRecord, clientDocument: ClientRecord) => {
    saveClient(sql.upsertClientDocument, clientDocument);
    insertGrant(grant);
  });

  const saveClient = (statement: (typeof sql)['insertClient'], client: ClientRecord) => {
    statement.run(
      client.clientId,
      client.clientSecretHash,
      client.clientName,
      JSON.stringify(client.redirectUris),
      JSON.stringify(client.grantTypes),
      JSON.stringify(client.responseTypes),
      client.tokenEndpointAuthMethod,
      client.scope,
      JSON.stringify(client.metadata ?? {}),
      client.issuedAt,
    );
  };

  return {
    database: db,
    close: () => {
      grouped?.flush();
      if (ownsDatabase && db.open) db.close();
    },

    registerClient: (client) => saveClient(sql.insertClient, client),
    findClient: (clientId) => mapRow(sql.findClient.get(clientId), toClient),
    useAssertionId: (clientId, jti, expiresAt) =>
      sql.useAssertionId.run(clientId, jti, expiresAt, now()).changes === 1,

    createGrant: (grant) => insertGrant(grant),
    createGrantWithClient(grant, client) {
      if (client.clientId !== grant.clientId)
        throw new TypeError("createGrantWithClient: the client is not the grant's client.");
      grantWithDocument.immediate(grant, client);
    },
    findGrant: (grantId) => mapRow(sql.findGrant.get(grantId, now()), toGrant),
    isGrantActive: (grantId) => sql.grantActive.get(grantId, now()) !== undefined,
    // A grant's refresh tokens are revoked with it: every read of a token goes through its grant.
    revokeGrant: (grantId) => {
      const at = now();
      return sql.revokeGrant.run(at, grantId, at).changes > 0;
    },
    saveDeviceAuthorization(record) {
      sql.insertDevice.run(
        record.deviceCodeHash,
        record.userCodeHash,
        record.clientId,
        record.scopes.join(' '),
        record.resource,
        record.expiresAt,
        record.interval,
        record.status,
        record.userId,
        record.grantId,
      );
    },
    findDeviceAuthorization: (hash, by) =>
      mapRow(
        (by === 'device_code' ? sql.findDeviceByDeviceCode : sql.findDeviceByUserCode).get(hash),
        toDeviceAuthorization,
      ),
    decideDeviceAuthorization: (deviceCodeHash, { approved, userId, grantId }) =>
      sql.decideDevice.run(
        approved ? 'approved' : 'denied',
        userId,
        approved ? grantId : null,
        deviceCodeHash,
        now(),
      ).changes === 1,
    slowDownDeviceAuthorization: (deviceCodeHash, interval) => {
      sql.slowDownDevice.run(interval, deviceCodeHash);
    },
    redeemDeviceAuthorization: (deviceCodeHash, firstRefreshToken) =>
      atomically(() => redeemDevice(deviceCodeHash, now(), firstRefreshToken?.key)),
    markScopeChallenge: (grantId, until) => {
      sql.markScopeChallenge.run(until, grantId, now());
    },
    takeScopeChallenge: (grantId) => sql.takeScopeChallenge.run(grantId, now()).changes === 1,
    // The empty string sorts before every id, and U+FFFF after every id the library makes.
    listClients: ({ after, limit }) =>
      (sql.listClients.all(now(), after ?? '', limit) as Row[]).map(toClientListing),
    listGrants: ({ before, limit }) =>
      (sql.listAllGrants.all(before ?? '\uffff', now(), limit) as Row[]).map((row): GrantWithClient => ({
        ...toGrant(row),
        clientName: row.client_name as string | null,
      })),
    setClientDisabled: (clientId, disabled) =>
      sql.setClientDisabled.run(disabled ? now() : null, clientId).changes === 1,
    revokeClientGrants: (clientId) => {
      const at = now();
      return (sql.revokeClientGrants.all(at, clientId, at) as Array<{ grant_id: string }>).map(
        (row) => row.grant_id,
      );
    },
    purgeIdleClients: (registeredBefore, batchSize = 500) =>
      sql.purgeIdleClients.run(registeredBefore, now(), batchSize).changes,
    listActiveGrants: (userId) =>
      (sql.listGrants.all(userId, now()) as Row[]).map((row): GrantWithClient => ({
        ...toGrant(row),
        clientName: row.client_name as string | null,
      })),

    saveAuthorizationCode(code) {
      sql.insertCode.run(
        code.codeHash,
        code.grantId,
        code.clientId,
        code.userId,
        code.redirectUri,
        code.scopes.join(' '),
        code.resource,
        code.codeChallenge,
        code.codeChallengeMethod,
        code.expiresAt,
      );
    },
    findAuthorizationCode: (codeHash) => mapRow(sql.findCode.get(codeHash, now()), toCode),
    consumeAuthorizationCode: (codeHash, firstRefreshToken) =>
      atomically(() => consume(codeHash, now(), firstRefreshToken?.key)),

    findRefreshToken: (key) => mapRow(sql.findTokenWithGrant.get(key, now()), toRefreshLookup),
    advanceRefreshToken: (input) => atomically(() => advance(input, now())),

    // A batch reads cold pages: under a small page cache (sqlite-cache.ts), so that it leaves at most 2 MB of them.
    purgeExpired: (batchSize = 500) => withSweepCache(db, () => purge.immediate(batchSize, now())),

    listSigningKeys: () => (sql.listSigningKeys.all() as Row[]).map(toSigningKey),
    addSigningKey: (key) =>
      sql.addSigningKey.run(key.kid, key.sealedKey, key.state, key.createdAt, key.retiredAt).changes === 1,
    promoteSigningKey: (kid, at) => promoteKey.immediate(kid, at),
    deleteRetiredSigningKeys: (before) => sql.deleteRetiredKeys.run(before).changes,

    ...sqliteUpstreamTokens(sql, now),
  };
}

/** Runs a write atomically: in the next group commit (a promise), or in a transaction of its own (a value). */
type Atomically = <T>(work: () => T) => T | Promise<T>;

/** Each write in an IMMEDIATE transaction of its own, committed before the call returns (groupCommit: false). */
function commitEachAtOnce(db: Database): Atomically {
  const single = db.transaction((work: () => unknown) => work());
  return <T>(work: () => T) => single.immediate(work) as T;
}
