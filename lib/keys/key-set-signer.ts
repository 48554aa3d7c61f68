// A signer whose keys live in the store, shared by every instance, so that keys rotate without a cutover: a new key
// is published (next), then signs (current), and the old one keeps verifying (retired) until every token it signed
// has expired. Instances re-read the set on a timer, and at once when a token names a kid they do not know.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { generateSigningKey, loadKey, type SigningAlgorithm } from '../crypto/keys';
import {
  createJwtSigner,
  isUnknownKeyError,
  type AccessTokenClaims,
  type JwtSigner,
  type UnknownKeyError,
} from '../crypto/signer';
import type { SigningKeyRecord, SigningKeyState, SigningKeyStore } from '../store/types';
import { createKeySealer } from '../crypto/encryption-at-rest';

/** Options of createKeySetSigner. */
export interface KeySetSignerOptions {
  /** Where the keys live: createSqliteStore's or createPostgresStore's store (or any SigningKeyStore). */
  store: SigningKeyStore;
  /** At least 32 random bytes: seals the private keys in the store. The same on every instance. */
  encryptionKey: Buffer | string;
  /** The algorithm of the keys this set generates. Default ES256. */
  algorithm?: SigningAlgorithm;
  /**
   * The longest access-token lifetime the router issues, in seconds (its lifetimes.accessToken): a retired key is
   * published and verifies for this long after it stopped signing. Default 86400 (the most the router allows).
   */
  maxTokenLifetimeSeconds?: number;
  /** How often the set is re-read, in milliseconds. Default and most 60000. */
  refreshIntervalMs?: number;
  /** The key of an empty set's first current key (a key you used before), instead of a generated one. */
  initialKey?: string | KeyObject;
  clockToleranceSeconds?: number;
  now?: () => number;
  /** Told when a background re-read fails (the last set read keeps working). Default: a console warning. */
  onRefreshError?: (error: unknown) => void;
}

/** A key of the set as operators see it: no private part. */
interface KeySetEntry {
  kid: string;
  state: SigningKeyState;
  createdAt: number;
  retiredAt: number | null;
  /** When a retired key stops verifying and leaves the JWKS. */
  publishedUntil: number | null;
}

/** A JwtSigner over a store-backed key set, with the operations of a rotation. */
export interface KeySetSigner extends JwtSigner {
  /** Re-reads the set from the store (unless the copy in memory is younger than `maxAgeMs`). */
  reloadKeys(options?: { maxAgeMs?: number }): Promise<void>;
  /** Verifies; a kid this instance does not know makes it read the set first (once per kid every 5 s). */
  verifyAccessTokenFresh(
    token: string,
    expected: { issuer: string; audience: string },
  ): Promise<AccessTokenClaims>;
  /** Generates a key in state next: published in the JWKS at once, not signing yet. Resolves with its kid. */
  addKey(): Promise<string>;
  /** Makes a next key current; the current one retires and verifies until its tokens have expired. */
  promoteKey(kid: string): Promise<void>;
  /** addKey and promoteKey in one go: a new key signs from now on. Resolves with its kid. */
  rotate(): Promise<string>;
  /** Deletes retired keys whose every token has expired; resolves with how many. */
  pruneKeys(): Promise<number>;
  /** The set as last read, newest first. */
  keys(): KeySetEntry[];
  /** Stops the timer. */
  close(): void;
}

/** A kid that made this instance read the set is not read for again for this long: repeating it costs no read. */
const UNKNOWN_KID_RELOAD_MS = 5_000;
/** How many such kids are remembered: a stream of new ones pushes out the oldest, so memory stays bounded. */
const MAX_REMEMBERED_KIDS = 1_000;
/** No key of the set has a longer kid (they are RFC 7638 thumbprints): a longer one is never read for. */
const MAX_KID_LENGTH = 256;

/** Creates the signer and reads (or starts) the key set. */
export async function createKeySetSigner(options: KeySetSignerOptions): Promise<KeySetSigner> {
  const { store } = options;
  for (const method of ['listSigningKeys', 'addSigningKey', 'promoteSigningKey', 'deleteRetiredSigningKeys'])
    if (typeof (store as unknown as Record<string, unknown>)?.[method] !== 'function')
      throw new TypeError(
        `createKeySetSigner: the store has no ${method}(); use createSqliteStore or createPostgresStore.`,
      );
  const secret = Buffer.isBuffer(options.encryptionKey)
    ? options.encryptionKey
    : Buffer.from(options.encryptionKey ?? '');
  if (secret.length < 32)
    throw new TypeError(
      'createKeySetSigner: encryptionKey must be at least 32 bytes; make one with `openssl rand -base64 32`.',
    );
  const algorithm = options.algorithm ?? 'ES256';
  const lifetimeMs = (options.maxTokenLifetimeSeconds ?? 86_400) * 1000;
  if (!Number.isInteger(lifetimeMs) || lifetimeMs <= 0)
    throw new TypeError('createKeySetSigner: maxTokenLifetimeSeconds must be a whole number of seconds.');
  const refreshMs = options.refreshIntervalMs ?? 60_000;
  if (!Number.isInteger(refreshMs) || refreshMs < 100 || refreshMs > 60_000)
    throw new TypeError('createKeySetSigner: refreshIntervalMs must be from 100 to 60000 milliseconds.');
  const toleranceSeconds = options.clockToleranceSeconds ?? 5;
  const now = options.now ?? Date.now;
  const onRefreshError =
    options.onRefreshError ??
    ((error: unknown) =>
      console.warn(`express-mcp-oauth: re-reading the signing keys failed: ${(error as Error)?.message}`));
  const sealer = createKeySealer(secret);
  // A retired key verifies as long as a token it signed can live, plus the clock tolerance.
  const publishedUntil = (key: SigningKeyRecord) =>
    key.retiredAt === null ? null : key.retiredAt + lifetimeMs + toleranceSeconds * 1000;

  const newRecord = (
    state: SigningKeyState,
    privateKey: KeyObject = generateSigningKey(algorithm),
  ): SigningKeyRecord => {
    const { kid } = loadKey({ privateKey }, 0);
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    return { kid, sealedKey: sealer.seal(kid, pem), state, createdAt: now(), retiredAt: null };
  };

  let inner: JwtSigner;
  let entries: KeySetEntry[] = [];
  /** The keys last built into `inner`: a read that finds the same ones keeps it (and its JWKS object). */
  let builtFrom = '';
  let loadedAt = -Infinity;
  let loading: Promise<void> | undefined;
  /** How many reads have started: a request knows whether a read began after it arrived. */
  let readsStarted = 0;
  /** kid -> when it last made this instance read the set (unknown kids only; insertion order is age). */
  const unknownKids = new Map<string, number>();

  async function read(): Promise<void> {
    let rows = await store.listSigningKeys();
    if (!rows.some((row) => row.state === 'current')) {
      // The first start of the set (or every instance racing to be it): one current key wins, the others read it.
      const initial = options.initialKey === undefined ? undefined : toPrivateKey(options.initialKey);
      await store.addSigningKey(newRecord('current', initial));
      rows = await store.listSigningKeys();
    }
    const at = now();
    const live = rows.filter((row) => row.state !== 'retired' || publishedUntil(row)! > at);
    const order: Record<SigningKeyState, number> = { current: 0, next: 1, retired: 2 };
    live.sort((a, b) => order[a.state] - order[b.state] || b.createdAt - a.createdAt);
    if (live[0]?.state !== 'current') throw new Error('express-mcp-oauth: the key set has no current key.');
    const fingerprint = live.map((row) => `${row.kid} ${row.state} ${row.retiredAt}`).join('\n');
    if (fingerprint === builtFrom) {
      loadedAt = at;
      return;
    }
    inner = createJwtSigner({
      keys: live.map((row) => ({ kid: row.kid, privateKey: sealer.open(row.kid, row.sealedKey) })),
      clockToleranceSeconds: toleranceSeconds,
      now,
    });
    entries = live.map((row) => ({
      kid: row.kid,
      state: row.state,
      createdAt: row.createdAt,
      retiredAt: row.retiredAt,
      publishedUntil: publishedUntil(row),
    }));
    builtFrom = fingerprint;
    loadedAt = at;
  }
  const reload = () => {
    if (!loading) {
      readsStarted += 1;
      loading = read().finally(() => (loading = undefined));
    }
    return loading;
  };
  /** Resolves after a read that started after this call: one in flight from before could miss a key added since. */
  async function readFromNow(): Promise<void> {
    const before = readsStarted;
    if (loading) await loading.catch(() => undefined);
    if (readsStarted === before) return reload();
    // Another request started one after this call: share it (or it has already answered).
    return loading;
  }
  /**
   * Whether an unknown kid is worth a read: once per kid per UNKNOWN_KID_RELOAD_MS. Per kid, not for the instance as
   * a whole: a stream of forged kids must not make this instance ignore a real one, the kid of a key another instance
   * has just rotated in, until its timer (up to a minute). Each forged kid costs one read, and reads never overlap
   * (readFromNow), so a flood makes at most one read at a time, each of an unchanged set cheap (no rebuild).
   */
  function worthARead(kid: unknown): boolean {
    if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH) return false;
    const at = now();
    const last = unknownKids.get(kid);
    if (last !== undefined && at - last < UNKNOWN_KID_RELOAD_MS) return false;
    unknownKids.delete(kid);
    if (unknownKids.size >= MAX_REMEMBERED_KIDS)
      unknownKids.delete(unknownKids.keys().next().value as string);
    unknownKids.set(kid, at);
    return true;
  }

  await reload();
  const timer = setInterval(() => void reload().catch(onRefreshError), refreshMs);
  timer.unref();

  const signer: KeySetSigner = {
    signAccessToken: (input) => inner.signAccessToken(input),
    verifyAccessToken: (token, expected) => inner.verifyAccessToken(token, expected),
    jwks: () => inner.jwks(),
    async reloadKeys({ maxAgeMs = 0 } = {}) {
      if (now() - loadedAt >= maxAgeMs) await reload();
    },
    async verifyAccessTokenFresh(token, expected) {
      try {
        return inner.verifyAccessToken(token, expected);
      } catch (error) {
        // A kid this instance has not read yet: another instance may have rotated. Read the set once, then decide.
        if (!isUnknownKeyError(error) || !worthARead(((error as Error).cause as UnknownKeyError).kid))
          throw error;
        await readFromNow();
        return inner.verifyAccessToken(token, expected);
      }
    },
    async addKey() {
      const record = newRecord('next');
      if (!(await store.addSigningKey(record)))
        throw new Error(`express-mcp-oauth: key ${record.kid} was not added.`);
      await reload();
      return record.kid;
    },
    async promoteKey(kid) {
      if (!(await store.promoteSigningKey(kid, now())))
        throw new Error(
          `express-mcp-oauth: ${kid} is not a next key of the set; add one with addKey() first.`,
        );
      await reload();
    },
    async rotate() {
      const kid = await signer.addKey();
      await signer.promoteKey(kid);
      return kid;
    },
    async pruneKeys() {
      const removed = await store.deleteRetiredSigningKeys(now() - lifetimeMs - toleranceSeconds * 1000);
      await reload();
      return removed;
    },
    keys: () => entries.map((entry) => ({ ...entry })),
    close: () => clearInterval(timer),
  };
  return signer;
}

function toPrivateKey(key: string | KeyObject): KeyObject {
  return typeof key === 'string' ? createPrivateKey(key) : key;
}
