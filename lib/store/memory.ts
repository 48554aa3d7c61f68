// An in-memory store: the storage contract (types.ts) as a small working program, for tests and for reading.
//
// Every method runs from its first check to its last write without an await: in one JavaScript process no other
// call can run in between, so each test-and-set and compare-and-set the contract asks for is atomic by construction.
// A store over a database gets the same guarantee from a conditional statement or a transaction (see sqlite.ts).
import type {
  ClientListing,
  AuthorizationCodeRecord,
  ClientRecord,
  ConsumeCodeResult,
  DeviceAuthorizationRecord,
  GrantRecord,
  GrantWithClient,
  OAuthStore,
  RefreshTokenKey,
  RefreshTokenRecord,
  RotationPointer,
  SigningKeyRecord,
  SigningKeyStore,
  UpstreamTokenStore,
} from './types';
import { createMemoryUpstreamTokens } from './memory-upstream';

/** Options of createMemoryStore. */
export interface MemoryStoreOptions {
  /** The clock every lifetime is compared against, in milliseconds since the epoch. Default Date.now. */
  now?: () => number;
  /** Whether the store keeps Client ID Metadata Documents (createGrantWithClient). Default true. */
  clientDocuments?: boolean;
  /** Whether the store keeps client assertion ids for private_key_jwt (useAssertionId). Default true. */
  assertionIds?: boolean;
  /** Whether the store keeps scope challenges (markScopeChallenge, takeScopeChallenge). Default true. */
  scopeChallenges?: boolean;
  /** Whether the store keeps device authorizations (the device authorization grant). Default true. */
  deviceAuthorizations?: boolean;
}

/** The in-memory store: the storage contract, a signing key set and users' upstream tokens. */
export type MemoryStore = OAuthStore & SigningKeyStore & UpstreamTokenStore;

/** A grant with what only the store sees: its rotation pointer, and until when a scope challenge marks it. */
interface StoredGrant {
  grant: GrantRecord;
  latestUsed: RotationPointer | null;
  challengedUntil?: number;
}

/** A code with the mark of its first redemption. */
interface StoredCode {
  code: AuthorizationCodeRecord;
  usedAt: number | null;
}

const DEFAULT_BATCH = 500;

/**
 * An OAuthStore, SigningKeyStore and UpstreamTokenStore held in Maps (upstream tokens in memory-upstream.ts): the
 * runnable specification of the storage contract, and a fast store for tests. Not for production: it lives in one
 * process (instances behind a load balancer would each have their own), and it forgets everything when the process
 * ends. `{ clientDocuments: false, assertionIds: false }` leaves the optional methods out, as a store without those
 * capabilities would.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const now = options.now ?? Date.now;
  const clients = new Map<string, ClientRecord>();
  const grants = new Map<string, StoredGrant>();
  const codes = new Map<string, StoredCode>();
  const refreshTokens = new Map<RefreshTokenKey, RefreshTokenRecord>();
  const assertionIds = new Map<string, number>();
  const devices = new Map<string, DeviceAuthorizationRecord>();
  const disabledClients = new Set<string>();
  const signingKeys = new Map<string, SigningKeyRecord>();
  const upstream = createMemoryUpstreamTokens(now);

  // A record lives while the clock is before its expiresAt; at that instant it has expired.
  const alive = (record: { expiresAt: number }) => now() < record.expiresAt;
  const liveGrant = (grantId: string) => {
    const stored = grants.get(grantId);
    return stored && alive(stored.grant) ? stored : undefined;
  };
  const isActive = (stored: StoredGrant | undefined): stored is StoredGrant =>
    stored !== undefined && stored.grant.revokedAt === null;

  // A grant has an id of its own and names a stored client (a database's keys refuse both mistakes alike).
  const checkNewGrant = (grant: GrantRecord, client = clients.get(grant.clientId)) => {
    if (grants.has(grant.grantId)) throw new Error(`createGrant: grant ${grant.grantId} already exists.`);
    if (!client) throw new Error(`createGrant: no client ${grant.clientId}.`);
  };
  const insertGrant = (grant: GrantRecord) => {
    grants.set(grant.grantId, { grant: copy(grant), latestUsed: null });
  };

  const store: MemoryStore = {
    registerClient(client) {
      if (clients.has(client.clientId)) throw new Error(`registerClient: ${client.clientId} already exists.`);
      clients.set(client.clientId, copy(client));
    },
    findClient: (clientId) => {
      const client = copy(clients.get(clientId));
      return client && disabledClients.has(clientId) ? { ...client, disabled: true } : client;
    },
    setClientDisabled(clientId, disabled) {
      if (!clients.has(clientId)) return false;
      if (disabled) disabledClients.add(clientId);
      else disabledClients.delete(clientId);
      return true;
    },
    revokeClientGrants(clientId) {
      const ended: string[] = [];
      for (const stored of grants.values()) {
        if (stored.grant.clientId !== clientId || !alive(stored.grant) || !isActive(stored)) continue;
        stored.grant.revokedAt = now();
        ended.push(stored.grant.grantId);
      }
      return ended;
    },

    createGrant(grant) {
      checkNewGrant(grant);
      insertGrant(grant);
    },
    findGrant: (grantId) => copy(liveGrant(grantId)?.grant),
    isGrantActive: (grantId) => isActive(liveGrant(grantId)),
    // The store's own clock says when; a second revocation keeps the first one's time.
    revokeGrant(grantId) {
      const stored = liveGrant(grantId);
      if (!isActive(stored)) return false;
      stored.grant.revokedAt = now();
      return true;
    },
    listClients({ after, limit }) {
      return [...clients.keys()]
        .filter((clientId) => after === undefined || clientId > after)
        .sort((a, b) => (a < b ? -1 : 1))
        .slice(0, limit)
        .map((clientId): ClientListing => {
          const own = [...grants.values()].filter(({ grant }) => grant.clientId === clientId);
          const used = own.map(({ grant }) => grant.lastUsedAt ?? grant.createdAt);
          return {
            ...(store.findClient(clientId) as ClientRecord),
            activeGrants: own.filter((stored) => isActive(stored) && alive(stored.grant)).length,
            lastUsedAt: used.length ? Math.max(...used) : null,
          };
        });
    },
    listGrants({ before, limit }) {
      return [...grants.values()]
        .filter((stored) => isActive(stored) && alive(stored.grant))
        .filter(({ grant }) => before === undefined || grant.grantId < before)
        .sort((a, b) => (a.grant.grantId < b.grant.grantId ? 1 : -1))
        .slice(0, limit)
        .map(({ grant }) => ({
          ...copy(grant),
          clientName: clients.get(grant.clientId)?.clientName ?? null,
        }));
    },
    purgeIdleClients(registeredBefore, batchSize = DEFAULT_BATCH) {
      const named = new Set([...grants.values()].map(({ grant }) => grant.clientId));
      for (const device of devices.values()) if (alive(device)) named.add(device.clientId);
      const idle = [...clients.values()]
        .filter(
          (client) =>
            client.tokenEndpointAuthMethod === 'none' &&
            !isDocumentCopy(client) &&
            client.issuedAt < registeredBefore &&
            !named.has(client.clientId),
        )
        .slice(0, batchSize);
      for (const client of idle) clients.delete(client.clientId);
      return idle.length;
    },
    listActiveGrants(userId) {
      const listed: GrantWithClient[] = [];
      for (const stored of grants.values()) {
        if (stored.grant.userId !== userId || !alive(stored.grant) || !isActive(stored)) continue;
        // The client's name as stored now: a document's newest copy names every grant of its client.
        const clientName = clients.get(stored.grant.clientId)?.clientName ?? null;
        listed.push({ ...copy(stored.grant), clientName });
      }
      // Newest first; grants made in the same millisecond by id, highest first (the library's ids are time-ordered).
      return listed.sort((a, b) => b.createdAt - a.createdAt || compare(b.grantId, a.grantId));
    },

    saveAuthorizationCode(code) {
      if (codes.has(code.codeHash)) throw new Error('saveAuthorizationCode: the code already exists.');
      codes.set(code.codeHash, { code: copy(code), usedAt: null });
    },
    findAuthorizationCode(codeHash) {
      const stored = codes.get(codeHash);
      return stored && alive(stored.code) ? copy(stored.code) : undefined;
    },
    consumeAuthorizationCode(codeHash, firstRefreshToken): ConsumeCodeResult {
      const at = now();
      const stored = codes.get(codeHash);
      if (!stored || !alive(stored.code)) return { status: 'not_found' };
      if (stored.usedAt !== null) return { status: 'replayed', code: copy(stored.code) };
      stored.usedAt = at;
      const code = copy(stored.code);
      const grant = liveGrant(code.grantId);
      if (!isActive(grant)) return { status: 'consumed', code, grant: undefined };
      if (firstRefreshToken) {
        const { key } = firstRefreshToken;
        const token = { key, grantId: code.grantId, clientId: code.clientId, parentKey: null };
        refreshTokens.set(key, { ...token, issuedAt: at, expiresAt: grant.grant.expiresAt });
        // Every refresh token issued under a grant sets its last use, in the same step.
        grant.grant.lastUsedAt = at;
      }
      return { status: 'consumed', code, grant: copy(grant.grant) };
    },

    findRefreshToken(key) {
      const token = refreshTokens.get(key);
      const stored = token && alive(token) ? grants.get(token.grantId) : undefined;
      if (!token || !stored) return undefined;
      // Revoked or not: the library tells a revoked grant's token from an unknown one.
      return { token: copy(token), grant: copy(stored.grant), latestUsed: copy(stored.latestUsed) };
    },
    advanceRefreshToken({ grantId, expectedLatestUsed, latestUsed, successor }) {
      const stored = liveGrant(grantId);
      if (!isActive(stored) || (stored.latestUsed?.key ?? null) !== expectedLatestUsed) return false;
      // A first use moves the pointer; a retry leaves it, with its time, as it was.
      if (latestUsed) stored.latestUsed = copy(latestUsed);
      stored.grant.lastUsedAt = successor.issuedAt;
      refreshTokens.set(successor.key, copy(successor));
      return true;
    },

    purgeExpired(batchSize = DEFAULT_BATCH) {
      // Up to batchSize of each kind, so that a backlog of one kind never holds up the others.
      const dead = <V>(records: Map<string, V>, isDead: (value: V) => boolean) =>
        [...records]
          .filter(([, value]) => isDead(value))
          .slice(0, batchSize)
          .map(([key]) => key);
      let removed = 0;
      for (const hash of dead(codes, ({ code }) => !alive(code))) removed += Number(codes.delete(hash));
      for (const id of dead(assertionIds, (expiresAt) => !alive({ expiresAt })))
        removed += Number(assertionIds.delete(id));
      for (const hash of dead(devices, (device) => !alive(device))) {
        // An approval the device never redeemed made a grant nobody holds a token of: it ends with its request.
        const device = devices.get(hash)!;
        const grant = device.status === 'approved' ? liveGrant(device.grantId!) : undefined;
        if (isActive(grant)) grant.grant.revokedAt = now();
        removed += Number(devices.delete(hash));
      }
      for (const grantId of dead(grants, ({ grant }) => !alive(grant))) {
        // A grant goes with its refresh tokens and codes, which are not counted.
        for (const [key, token] of refreshTokens) if (token.grantId === grantId) refreshTokens.delete(key);
        for (const [hash, { code }] of codes) if (code.grantId === grantId) codes.delete(hash);
        removed += Number(grants.delete(grantId));
      }
      // A document's copy goes once no grant names it; one being saved with its grant is never seen without it.
      const named = new Set([...grants.values()].map(({ grant }) => grant.clientId));
      for (const clientId of dead(clients, (client) => isDocumentCopy(client) && !named.has(client.clientId)))
        removed += Number(clients.delete(clientId));
      return removed + upstream.purge(batchSize);
    },

    listSigningKeys: () => [...signingKeys.values()].map(copy),
    addSigningKey(key) {
      const hasCurrent = [...signingKeys.values()].some(({ state }) => state === 'current');
      if (signingKeys.has(key.kid) || (key.state === 'current' && hasCurrent)) return false;
      signingKeys.set(key.kid, copy(key));
      return true;
    },
    promoteSigningKey(kid, at) {
      if (signingKeys.get(kid)?.state !== 'next') return false;
      for (const key of signingKeys.values()) {
        if (key.state === 'current') Object.assign(key, { state: 'retired', retiredAt: at });
      }
      signingKeys.get(kid)!.state = 'current';
      return true;
    },
    deleteRetiredSigningKeys(before) {
      let deleted = 0;
      for (const [kid, key] of signingKeys) {
        if (key.state === 'retired' && key.retiredAt !== null && key.retiredAt < before)
          deleted += Number(signingKeys.delete(kid));
      }
      return deleted;
    },

    ...upstream.methods,
  };

  if (options.assertionIds !== false) {
    // An expired id may be taken again: its assertion can no longer be accepted anyway.
    store.useAssertionId = (clientId, jti, expiresAt) => {
      const id = JSON.stringify([clientId, jti]);
      const held = assertionIds.get(id);
      if (held !== undefined && alive({ expiresAt: held })) return false;
      assertionIds.set(id, expiresAt);
      return true;
    };
  }
  if (options.scopeChallenges !== false) {
    store.markScopeChallenge = (grantId, until) => {
      const stored = liveGrant(grantId);
      if (isActive(stored)) stored.challengedUntil = until;
    };
    store.takeScopeChallenge = (grantId) => {
      const stored = liveGrant(grantId);
      const until = stored?.challengedUntil;
      if (stored === undefined || until === undefined) return false;
      delete stored.challengedUntil;
      return now() < until;
    };
  }
  if (options.deviceAuthorizations !== false) {
    store.saveDeviceAuthorization = (record) => {
      const taken = [...devices.values()].some(
        (device) =>
          device.deviceCodeHash === record.deviceCodeHash || device.userCodeHash === record.userCodeHash,
      );
      if (taken) throw new Error('saveDeviceAuthorization: a code hash is taken.');
      devices.set(record.deviceCodeHash, copy(record));
    };
    store.findDeviceAuthorization = (hash, by) =>
      copy(
        by === 'device_code'
          ? devices.get(hash)
          : [...devices.values()].find((device) => device.userCodeHash === hash),
      );
    store.decideDeviceAuthorization = (deviceCodeHash, { approved, userId, grantId }) => {
      const device = devices.get(deviceCodeHash);
      if (!device || !alive(device) || device.status !== 'pending') return false;
      Object.assign(device, {
        status: approved ? 'approved' : 'denied',
        userId,
        grantId: approved ? grantId : null,
      });
      return true;
    };
    store.slowDownDeviceAuthorization = (deviceCodeHash, interval) => {
      const device = devices.get(deviceCodeHash);
      if (device) device.interval = Math.max(device.interval, interval);
    };
    store.redeemDeviceAuthorization = (deviceCodeHash, firstRefreshToken) => {
      const device = devices.get(deviceCodeHash);
      if (!device || !alive(device) || device.status !== 'approved') return { status: 'not_redeemed' };
      device.status = 'redeemed';
      const grant = liveGrant(device.grantId!);
      if (!isActive(grant)) return { status: 'redeemed', grant: undefined };
      if (firstRefreshToken) {
        const at = now();
        const { key } = firstRefreshToken;
        const token = { key, grantId: device.grantId!, clientId: device.clientId, parentKey: null };
        refreshTokens.set(key, { ...token, issuedAt: at, expiresAt: grant.grant.expiresAt });
        grant.grant.lastUsedAt = at;
      }
      return { status: 'redeemed', grant: copy(grant.grant) };
    };
  }
  if (options.clientDocuments !== false) {
    // Both writes or neither: every check comes before the first write.
    store.createGrantWithClient = (grant, client) => {
      if (client.clientId !== grant.clientId)
        throw new TypeError("createGrantWithClient: the client is not the grant's client.");
      checkNewGrant(grant, client);
      clients.set(client.clientId, copy(client));
      insertGrant(grant);
    };
  }
  return store;
}

/** A stored copy of a Client ID Metadata Document: its client id is an https URL, in any case. */
const isDocumentCopy = (client: ClientRecord) => client.clientId.slice(0, 8).toLowerCase() === 'https://';

/** Records cross the seam as copies: a caller changing one changes nothing stored, and the other way round. */
function copy<T>(value: T): T {
  return value === undefined || value === null ? value : structuredClone(value);
}

/** Code-unit order, as a database compares text by bytes. */
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
