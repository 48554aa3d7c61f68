// The store-backed key set (createKeySetSigner) on SQLite and PostgreSQL: instances agree on one key, rotation has
// no cutover, an unknown kid is read once, retired keys leave after their tokens, and keys are sealed at rest.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import { createKeySetSigner, createOAuthRouter, type KeySetSignerOptions } from '../../../lib';
import { createPostgresStore } from '../../../lib/postgres';
import { createSqliteStore } from '../../../lib/store/sqlite';
import type { OAuthStore, SigningKeyStore } from '../../../lib/store/types';
import { createFakeClock, HOUR, SECOND, type FakeClock } from '../../helpers/clock';
import { DATABASE_URL, describeWith } from '../../helpers/services';
import { clientRecord, grantRecord } from '../../helpers/fixtures';
import { waitUntil } from '../../helpers/wait';

type KeyStore = OAuthStore & SigningKeyStore;
const KEY = randomBytes(32);
const ISSUER = 'http://127.0.0.1:4000';
const claims = {
  issuer: ISSUER,
  subject: 'u',
  audience: `${ISSUER}/mcp`,
  clientId: 'c',
  scope: 'a',
  grantId: 'g',
  expiresIn: 3600,
};
const expected = { issuer: ISSUER, audience: `${ISSUER}/mcp` };
const kidOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid as string;

function describeKeySet(
  name: string,
  open: (clock: FakeClock) => Promise<{ store: KeyStore; close(): Promise<void> }>,
) {
  describe(`key set signer (${name})`, () => {
    let clock: FakeClock;
    let store: KeyStore;
    let closeStore: () => Promise<void>;
    const signers: Array<{ close(): void }> = [];
    const signer = async (options: Partial<KeySetSignerOptions> = {}) => {
      const made = await createKeySetSigner({
        store,
        encryptionKey: KEY,
        maxTokenLifetimeSeconds: 3600,
        now: clock.now,
        ...options,
      });
      signers.push(made);
      return made;
    };
    beforeEach(async () => {
      clock = createFakeClock();
      ({ store, close: closeStore } = await open(clock));
    });
    afterEach(async () => {
      for (const made of signers.splice(0)) made.close();
      await closeStore();
    });

    test('instances starting at once on an empty set agree on one current key', async () => {
      const all = await Promise.all(Array.from({ length: 4 }, () => signer()));
      const kids = all.map((one) => one.keys().find((entry) => entry.state === 'current')!.kid);
      expect(new Set(kids).size).toBe(1);
      expect((await store.listSigningKeys()).filter((key) => key.state === 'current')).toHaveLength(1);
    });

    test('rotation without a cutover: old tokens verify, new tokens carry the new kid, the JWKS has both', async () => {
      const a = await signer();
      const old = a.signAccessToken(claims).token;
      const oldKid = kidOf(old);
      const newKid = await a.rotate();
      expect(newKid).not.toBe(oldKid);
      expect(kidOf(a.signAccessToken(claims).token)).toBe(newKid);
      expect(a.verifyAccessToken(old, expected).sub).toBe('u');
      expect(
        a
          .jwks()
          .keys.map((key) => key.kid)
          .sort(),
      ).toEqual([oldKid, newKid].sort());
      expect(a.keys().map((entry) => [entry.kid, entry.state])).toEqual([
        [newKid, 'current'],
        [oldKid, 'retired'],
      ]);
    });

    test('another instance reads a kid it does not know once, then verifies; it signs with the new key after a re-read', async () => {
      const a = await signer();
      const b = await signer();
      await a.rotate();
      const fresh = a.signAccessToken(claims).token;
      expect(() => b.verifyAccessToken(fresh, expected)).toThrow(/unknown key/);
      expect((await b.verifyAccessTokenFresh(fresh, expected)).sub).toBe('u');
      expect(kidOf(b.signAccessToken(claims).token)).toBe(kidOf(fresh));
    });

    test('instances re-read the set on their timer', async () => {
      const a = await signer();
      const b = await signer({ refreshIntervalMs: 100 });
      const kid = await a.rotate();
      // Nothing but b's own timer makes it read the set again. (Whether b still signs with the old key right after
      // the rotation is not asserted: on PostgreSQL its 100 ms timer may fire within a.rotate()'s round trips.)
      await waitUntil(
        () => kidOf(b.signAccessToken(claims).token) === kid,
        2_000,
        'b signing with the new key',
      );
    });

    test('a repeated unknown kid cannot make every request a read: one read per kid per 5 seconds', async () => {
      let reads = 0;
      const counting = Object.assign(Object.create(null), store, {
        listSigningKeys: () => {
          reads += 1;
          return store.listSigningKeys();
        },
      }) as KeyStore;
      const a = await signer({ store: counting });
      const elsewhere = await open(clock);
      const other = await createKeySetSigner({ store: elsewhere.store, encryptionKey: KEY, now: clock.now });
      signers.push(other);
      const foreign = other.signAccessToken(claims).token;
      const before = reads;
      for (let i = 0; i < 5; i += 1)
        await expect(a.verifyAccessTokenFresh(foreign, expected)).rejects.toThrow(/unknown key/);
      expect(reads - before).toBe(1);
      clock.advance(5 * SECOND);
      await expect(a.verifyAccessTokenFresh(foreign, expected)).rejects.toThrow(/unknown key/);
      expect(reads - before).toBe(2);
      await elsewhere.close();
    });

    /** A token like `token` whose header names `kid`: its signature can match no key. */
    const withKid = (token: string, kid: string) =>
      token.replace(
        /^[^.]+/,
        Buffer.from(JSON.stringify({ typ: 'at+jwt', alg: 'ES256', kid })).toString('base64url'),
      );
    /** The store, counting the reads of the key set. */
    const countingReads = () => {
      const counter = { reads: 0 };
      const counting = Object.assign(Object.create(null), store, {
        listSigningKeys: () => {
          counter.reads += 1;
          return store.listSigningKeys();
        },
      }) as KeyStore;
      return { counter, counting };
    };

    test('forged kids every second cannot delay a real one: a freshly rotated kid is read for and verified at once', async () => {
      const a = await signer();
      const b = await signer();
      const forged = a.signAccessToken(claims).token;
      for (let i = 0; i < 20; i += 1) {
        await expect(b.verifyAccessTokenFresh(withKid(forged, `forged-${i}`), expected)).rejects.toThrow(
          /unknown key/,
        );
        clock.advance(SECOND);
      }
      await expect(b.verifyAccessTokenFresh(withKid(forged, 'forged-last'), expected)).rejects.toThrow(
        /unknown key/,
      );
      // Another instance rotates in the same second: b has not read since, and its timer is a minute away.
      const kid = await a.rotate();
      const fresh = a.signAccessToken(claims).token;
      expect(kidOf(fresh)).toBe(kid);
      expect((await b.verifyAccessTokenFresh(fresh, expected)).sub).toBe('u');
    });

    test('a read already in flight when a new kid arrives does not answer for it: the kid gets a read of its own', async () => {
      const a = await signer();
      // A store whose reads can be held between reading the rows and answering, as a slow database would.
      let held: { taken: () => void; release: Promise<void> } | undefined;
      const slow = Object.assign(Object.create(null), store, {
        listSigningKeys: async () => {
          const rows = await store.listSigningKeys();
          const hold = held;
          held = undefined;
          if (hold) {
            hold.taken();
            await hold.release;
          }
          return rows;
        },
      }) as KeyStore;
      const b = await signer({ store: slow });
      let release!: () => void;
      let taken!: () => void;
      const rowsTaken = new Promise<void>((resolve) => (taken = resolve));
      held = { taken, release: new Promise<void>((resolve) => (release = resolve)) };
      const forged = b.verifyAccessTokenFresh(withKid(a.signAccessToken(claims).token, 'forged'), expected);
      await rowsTaken; // b's read has the rows from before the rotation
      await a.rotate();
      const fresh = b.verifyAccessTokenFresh(a.signAccessToken(claims).token, expected);
      release();
      await expect(forged).rejects.toThrow(/unknown key/);
      expect((await fresh).sub).toBe('u');
    });

    test('the kids it remembers are bounded: after 1,000 others, a kid is read for again', async () => {
      const { counter, counting } = countingReads();
      const a = await signer({ store: counting });
      const token = a.signAccessToken(claims).token;
      const attempt = (kid: string) =>
        expect(a.verifyAccessTokenFresh(withKid(token, kid), expected)).rejects.toThrow(/unknown key/);
      await attempt('first');
      await attempt('first');
      const before = counter.reads;
      for (let i = 0; i < 1000; i += 1) await attempt(`rotating-${i}`);
      expect(counter.reads - before).toBe(1000);
      await attempt('first'); // forgotten: read for again, within its 5 seconds
      expect(counter.reads - before).toBe(1001);
      await attempt('rotating-999'); // still remembered
      expect(counter.reads - before).toBe(1001);
      // Kids no key can have are never read for: not a string, or longer than any thumbprint.
      await attempt('x'.repeat(257));
      expect(counter.reads - before).toBe(1001);
    });

    test('a read that finds the same keys keeps them: the same JWKS object, no rebuild', async () => {
      const a = await signer();
      const jwks = a.jwks();
      await a.reloadKeys();
      expect(a.jwks()).toBe(jwks);
      await a.rotate();
      expect(a.jwks()).not.toBe(jwks);
    });

    test('a next key is published before it signs; promoting it retires the current one', async () => {
      const a = await signer();
      const current = a.keys()[0]!.kid;
      const next = await a.addKey();
      expect(a.jwks().keys.map((key) => key.kid)).toContain(next);
      expect(kidOf(a.signAccessToken(claims).token)).toBe(current);
      await a.promoteKey(next);
      expect(kidOf(a.signAccessToken(claims).token)).toBe(next);
      await expect(a.promoteKey(current)).rejects.toThrow(/not a next key/);
    });

    test('a retired key verifies as long as its tokens live, then leaves the JWKS and is pruned', async () => {
      const a = await signer();
      const old = a.signAccessToken(claims).token;
      await a.rotate();
      clock.advance(HOUR);
      await a.reloadKeys();
      expect(a.verifyAccessToken(old, expected).sub).toBe('u'); // within the clock tolerance
      expect(a.jwks().keys).toHaveLength(2);
      expect(await a.pruneKeys()).toBe(0);
      clock.advance(6 * SECOND);
      await a.reloadKeys();
      expect(a.jwks().keys).toHaveLength(1);
      expect(await a.pruneKeys()).toBe(1);
      expect(await store.listSigningKeys()).toHaveLength(1);
    });

    test('keys are sealed at rest: the rows hold no PEM, and another encryption key cannot open them', async () => {
      await signer();
      const [row] = await store.listSigningKeys();
      expect(row!.sealedKey).toMatch(/^v1\./);
      expect(row!.sealedKey).not.toMatch(/PRIVATE KEY/);
      await expect(
        createKeySetSigner({ store, encryptionKey: randomBytes(32), now: clock.now }),
      ).rejects.toThrow(/encryptionKey differs/);
    });

    test('the router publishes a key another instance just added, and its bearer check accepts that key’s tokens', async () => {
      const a = await signer();
      const b = await signer();
      const app = express();
      const oauth = createOAuthRouter(store, b, {
        issuer: ISSUER,
        scopes: { a: 'A' },
        authenticateUser: () => null,
        rateLimits: false,
        now: clock.now,
      });
      app.use(oauth);
      app.get('/mcp', oauth.requireBearer(), (_req, res) => void res.json({ ok: true }));
      const client = clientRecord();
      await store.registerClient(client);
      await store.createGrant(grantRecord(clock.now(), { clientId: client.clientId, grantId: 'g' }));
      const kid = await a.rotate();
      // B has not read the set since: the bearer check reads it once for this unknown kid, and accepts.
      const fresh = a.signAccessToken(claims).token;
      expect((await request(app).get('/mcp').set('Authorization', `Bearer ${fresh}`)).status).toBe(200);
      const bogus = fresh.replace(
        /^[^.]+/,
        Buffer.from(JSON.stringify({ typ: 'at+jwt', alg: 'ES256', kid: 'nope' })).toString('base64url'),
      );
      expect((await request(app).get('/mcp').set('Authorization', `Bearer ${bogus}`)).status).toBe(401);
      const c = await signer();
      const newer = await c.rotate();
      clock.advance(SECOND); // the JWKS is at most a second old
      const jwks = await request(app).get('/v1/oauth/jwks');
      expect(jwks.body.keys.map((key: { kid: string }) => key.kid)).toEqual(
        expect.arrayContaining([kid, newer]),
      );
    });
  });
}

describeKeySet('SQLite', async (clock) => {
  const dir = mkdtempSync(join(tmpdir(), 'keyset-'));
  const store = createSqliteStore(join(dir, 'keys.db'), { now: clock.now });
  return {
    store,
    close: async () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
describeWith('key set on PostgreSQL', { postgres: true }, () => {
  describeKeySet('PostgreSQL', async (clock) => {
    const schema = `keys_${randomBytes(5).toString('hex')}`;
    const store = createPostgresStore(DATABASE_URL!, { schema, now: clock.now });
    await store.ready;
    return {
      store,
      close: async () => {
        await store.pool.query(`DROP SCHEMA ${schema} CASCADE`);
        await store.close();
      },
    };
  });
});

test.each([
  ['a short encryption key', { encryptionKey: 'short' }, /at least 32 bytes/],
  ['a store without a key set', { store: {} as never }, /has no listSigningKeys/],
  ['a refresh interval over a minute', { refreshIntervalMs: 120_000 }, /refreshIntervalMs/],
])('refuses %s', async (_name, options, message) => {
  const dir = mkdtempSync(join(tmpdir(), 'keyset-'));
  const store = createSqliteStore(join(dir, 'keys.db'));
  try {
    await expect(createKeySetSigner({ store, encryptionKey: KEY, ...options })).rejects.toThrow(message);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
