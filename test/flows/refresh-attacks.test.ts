// Attacks on refresh-token rotation with derived successors (README "Refresh tokens", lib/grants/rotation.ts), through
// the real token and introspection endpoints on the fake clock, on each store. Each test asserts the safe behaviour and
// is named after the attack it stops.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type Express } from 'express';
import request from 'supertest';
import { createPostgresStore } from '../../lib/postgres';
import { issueRefreshToken, refreshTokenKey, successorOf } from '../../lib/crypto/refresh-token';
import { sha256 } from '../../lib/crypto/secrets';
import { parseRefreshTokenReuse } from '../../lib/grants/reuse-options';
import type { OAuthEvent } from '../../lib/events';
import type { OAuthRouterOptions } from '../../lib/options';
import { createOAuthRouter } from '../../lib/router';
import { createMemoryStore } from '../../lib/store/memory';
import { createSqliteStore } from '../../lib/store/sqlite';
import type { OAuthStore } from '../../lib/store/types';
import { createFakeClock, DAY, HOUR, MINUTE, type FakeClock } from '../helpers/clock';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import {
  mountTestApp,
  obtainTokens,
  tokenRequest,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';
import { describeWith } from '../helpers/services';
import { BUSINESS_SCOPES } from '../../example-app/scopes';

type Tokens = { access_token: string; refresh_token: string };
type Policy = OAuthRouterOptions['refreshTokenReuse'];
const SECRET = 's'.repeat(32);
const WINDOW = 2 * HOUR; // the default refreshTokenReuse.window (twice the access-token lifetime)

interface Harness {
  app: Express;
  store: OAuthStore;
  clock: FakeClock;
  events: OAuthEvent[];
  /** Another router on the same store and clock (another instance, or this one after a restart). */
  instance(options?: Partial<OAuthRouterOptions>): Express;
  close(): Promise<void>;
}
type StoreKind = 'sqlite' | 'memory' | 'postgres';

let database: TestDatabase | undefined;
let schemas = 0;
afterAll(() => database?.drop());

async function openHarness(kind: StoreKind, options: Partial<OAuthRouterOptions> = {}): Promise<Harness> {
  const clock = createFakeClock(Date.UTC(2026, 5, 1));
  const events: OAuthEvent[] = [];
  let store: OAuthStore;
  let close: () => Promise<void>;
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-attacks-'));
    const sqlite = createSqliteStore(join(dir, 'oauth.db'), { now: clock.now });
    store = sqlite;
    close = async () => {
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    };
  } else if (kind === 'memory') {
    store = createMemoryStore({ now: clock.now });
    close = async () => undefined;
  } else {
    database ??= await createTestDatabase();
    const pg = createPostgresStore(database.url, { schema: `attacks_${(schemas += 1)}`, now: clock.now });
    await pg.ready;
    store = pg;
    close = () => pg.close();
  }
  const all = { secret: SECRET, onEvent: (event: OAuthEvent) => void events.push(event), ...options };
  const { app, signer } = mountTestApp(store, clock, all);
  return {
    app,
    store,
    clock,
    events,
    instance: (more = {}) =>
      express().use(
        createOAuthRouter(store, signer, {
          issuer: 'http://127.0.0.1:4000',
          scopes: BUSINESS_SCOPES,
          now: clock.now,
          rateLimits: false,
          authenticateUser: () => null,
          secret: SECRET,
          onEvent: (event) => void events.push(event),
          ...more,
        }),
      ),
    close,
  };
}

let h: Harness;
afterEach(() => h?.close());
const asServer = () => h as unknown as TestServer;

const refresh = (client: RegisteredClient, token: string, app = h.app, extra: Record<string, string> = {}) =>
  tokenRequest(app, client, { grant_type: 'refresh_token', refresh_token: token, ...extra });
const grantOf = (tokens: Tokens) =>
  JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()).grant_id as string;
const reused = () => h.events.filter((event) => event.type === 'refresh_token.reused');
const refreshed = () => h.events.filter((event) => event.type === 'token.refreshed');
const successorKeyOf = (secret: string | Buffer) =>
  parseRefreshTokenReuse(undefined, 30 * 86_400, Buffer.from(secret), (message) => {
    throw new TypeError(message);
  }).successorKey;

/**
 * What the rotation before derived successors did at a first use: the pointer moves to the token, and a random
 * successor is stored. The client loses the answer (R is returned for the test to use or not).
 */
async function firstUseBeforeDerivation(token: string, grantId: string, clientId: string) {
  const found = await h.store.findRefreshToken(refreshTokenKey(token));
  const random = issueRefreshToken(grantId);
  const now = h.clock.now();
  expect(
    await h.store.advanceRefreshToken({
      grantId,
      expectedLatestUsed: found!.latestUsed?.key ?? null,
      latestUsed: { key: refreshTokenKey(token), usedAt: now },
      successor: {
        key: random.key,
        grantId,
        clientId,
        parentKey: refreshTokenKey(token),
        issuedAt: now,
        expiresAt: found!.grant.expiresAt,
      },
    }),
  ).toBe(true);
  return random.token;
}

describe('a successor stored late keeps its parent’s first use: an old copy gets no new window', () => {
  // classifyPresentation reads "when was this token first used" from its stored successor's issuedAt. A repeat of
  // the latest token whose derived successor is not stored (a successor issued before derivation, or one derived
  // under another secret: the default secret is random per process) stores it late; were its issuedAt the time of
  // the repeat, once the pointer moved on the old token would be answered for a window counted from that repeat,
  // and a thief holding a copy would walk the chain up to the current token undetected, days after its first use.
  test('upgrade path: a copy of a token first used 10 days ago (random successor) catches up after the retry', async () => {
    h = await openHarness('sqlite');
    const { client, tokens } = await obtainTokens(asServer());
    const grantId = grantOf(tokens);
    const stolen = tokens.refresh_token; // the thief copies it on day 0
    const firstUse = h.clock.now();
    await firstUseBeforeDerivation(tokens.refresh_token, grantId, client.client_id); // answer lost
    h.clock.advance(10 * DAY);
    // The client comes back with the token it rotated (the latest, nobody used its successor): served, as promised.
    const retried = await refresh(client, tokens.refresh_token);
    expect(retried.status).toBe(200);
    // The client goes on with the grant: the token's successor is used, it is no longer the latest.
    const next = await refresh(client, retried.body.refresh_token);
    expect(next.status).toBe(200);
    h.clock.advance(HOUR);
    // The thief presents the copy: first used ten days ago, its successor used since: reuse (RFC 9700 §4.14.2).
    const thief = await refresh(client, stolen);
    const caughtUp =
      thief.status === 200 ? await refresh(client, thief.body.refresh_token) : { status: 0, body: {} };
    expect({ status: thief.status, caughtUp: caughtUp.status }).toEqual({ status: 400, caughtUp: 0 });
    expect(reused()).toEqual([expect.objectContaining({ reason: 'after_window', firstUsedAt: firstUse })]);
    expect(await h.store.isGrantActive(grantId)).toBe(false);
  });

  test('default random secret: after a restart the same copy catches up, with no upgrade involved', async () => {
    // Before the restart the router has one random secret, after it another (options.secret left out).
    h = await openHarness('sqlite', { secret: undefined });
    const { client, tokens } = await obtainTokens(asServer());
    const grantId = grantOf(tokens);
    const stolen = tokens.refresh_token;
    const firstUse = h.clock.now();
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200); // answer lost
    const restarted = h.instance({ secret: undefined, authenticateUser: () => null });
    h.clock.advance(10 * DAY);
    const retried = await refresh(client, tokens.refresh_token, restarted);
    expect(retried.status).toBe(200);
    expect((await refresh(client, retried.body.refresh_token, restarted)).status).toBe(200);
    h.clock.advance(HOUR);
    const thief = await refresh(client, stolen, restarted);
    expect(thief.status).toBe(400);
    expect(reused()).toEqual([expect.objectContaining({ reason: 'after_window', firstUsedAt: firstUse })]);
  });

  test('introspection reports the 10-day-old copy inactive, as the token endpoint refuses it', async () => {
    h = await openHarness('sqlite');
    const { client, tokens } = await obtainTokens(asServer(), {
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const grantId = grantOf(tokens);
    await firstUseBeforeDerivation(tokens.refresh_token, grantId, client.client_id);
    h.clock.advance(10 * DAY);
    const retried = await refresh(client, tokens.refresh_token);
    expect((await refresh(client, retried.body.refresh_token)).status).toBe(200);
    h.clock.advance(HOUR);
    const answer = await tokenRequest(h.app, client, { token: tokens.refresh_token }, '/v1/oauth/introspect');
    expect(answer.body).toEqual({ active: false });
  });
});

describe('the same copy is caught when nothing was upgraded (the successor was stored at the first use)', () => {
  test('a copy of a token first used 10 days ago, whose retry the client used, is reuse', async () => {
    h = await openHarness('sqlite');
    const { client, tokens } = await obtainTokens(asServer());
    const firstUse = h.clock.now();
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200); // answer lost
    h.clock.advance(10 * DAY);
    const retried = await refresh(client, tokens.refresh_token);
    expect((await refresh(client, retried.body.refresh_token)).status).toBe(200);
    h.clock.advance(HOUR);
    expect((await refresh(client, tokens.refresh_token)).body.error).toBe('invalid_grant');
    expect(reused()).toEqual([expect.objectContaining({ reason: 'after_window', firstUsedAt: firstUse })]);
  });
});

describe('forging a successor', () => {
  test('a successor made up from the token and its grant id, without this router secret, is unknown and harmless', async () => {
    h = await openHarness('sqlite');
    const { client, tokens } = await obtainTokens(asServer());
    const grantId = grantOf(tokens);
    const other = await obtainTokens(asServer()); // the attacker's own grant, with tokens it may study
    const token = tokens.refresh_token;
    const secretPart = token.slice(token.lastIndexOf('.') + 1);
    const guesses = [
      // The library is public: the same derivation under secrets an attacker might try.
      successorOf(token, grantId, successorKeyOf('t'.repeat(32))).token,
      successorOf(token, grantId, successorKeyOf(Buffer.alloc(32))).token,
      successorOf(token, grantId, Buffer.alloc(32)).token,
      successorOf(token, grantId, Buffer.from(SECRET)).token, // the raw secret as the key, had it leaked
      `${grantId}.${sha256(token)}`,
      `${grantId}.${Buffer.from(sha256(token), 'hex').toString('base64url')}`,
      // Another grant's successor, moved under this grant's id.
      `${grantId}.${(await refresh(other.client, other.tokens.refresh_token)).body.refresh_token.split('.')[1]}`,
      `${grantId}.${secretPart}.${secretPart}`,
      `${grantOf(other.tokens)}.${secretPart}`,
      secretPart,
    ];
    for (const guess of guesses) {
      const res = await refresh(client, guess);
      expect([guess, res.status, res.body.error]).toEqual([guess, 400, 'invalid_grant']);
    }
    expect(reused()).toEqual([]);
    // Nothing was written: the real token's first use is still a first use, and its successor is the real one.
    const real = await refresh(client, token);
    expect(real.status).toBe(200);
    expect(guesses).not.toContain(real.body.refresh_token);
    expect(refreshed().at(-1)).not.toHaveProperty('firstUsedAt');
  });

  test('the successor depends on the router secret: the same library under another secret derives another', async () => {
    // refresh-scenarios' "cannot be made up" test compares two unrelated tokens; this one derives the same token's
    // successor under another secret, as an attacker running the library would, and presents it.
    h = await openHarness('sqlite');
    const { client, tokens } = await obtainTokens(asServer());
    const grantId = grantOf(tokens);
    const forged = successorOf(tokens.refresh_token, grantId, successorKeyOf('t'.repeat(32))).token;
    const real = await refresh(client, tokens.refresh_token);
    expect(real.body.refresh_token).toBe(
      successorOf(tokens.refresh_token, grantId, successorKeyOf(SECRET)).token,
    );
    expect(forged).not.toBe(real.body.refresh_token);
    expect((await refresh(client, forged)).body.error).toBe('invalid_grant');
    expect(reused()).toEqual([]);
    expect(await h.store.isGrantActive(grantId)).toBe(true);
  });
});

describe('another client presenting a token', () => {
  test('client B presenting A tokens (fresh, used, past the window, with a scope) changes nothing of A grant', async () => {
    h = await openHarness('sqlite');
    const a = await obtainTokens(asServer());
    const b = await obtainTokens(asServer());
    const grantId = grantOf(a.tokens);
    const t0 = a.tokens.refresh_token;
    // B first tries A's fresh token: were it taken as a first use, A's own first use would become a repeat.
    expect((await refresh(b.client, t0)).body.error).toBe('invalid_grant');
    expect((await refresh(b.client, t0, h.app, { scope: 'fakture:read' })).body.error).toBe('invalid_grant');
    const t1 = await refresh(a.client, t0);
    expect(t1.status).toBe(200);
    expect(refreshed().at(-1)).not.toHaveProperty('firstUsedAt');
    const t2 = await refresh(a.client, t1.body.refresh_token);
    h.clock.advance(WINDOW + MINUTE);
    // t0 is past its window: from A it would revoke the grant; from B it must not (B would sign A out at will).
    for (const token of [t0, t1.body.refresh_token, t2.body.refresh_token]) {
      const res = await refresh(b.client, token);
      expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    }
    expect(reused()).toEqual([]);
    expect(await h.store.isGrantActive(grantId)).toBe(true);
    expect((await refresh(a.client, t2.body.refresh_token)).status).toBe(200);
  });
});

describe('time', () => {
  test('an old token cannot catch up through the chain once its own window is over, though its successor may still be presented', async () => {
    h = await openHarness('sqlite');
    const { client, tokens } = await obtainTokens(asServer());
    const grantId = grantOf(tokens);
    const t0 = tokens.refresh_token;
    const firstUse = h.clock.now();
    const t1 = (await refresh(client, t0)).body.refresh_token as string;
    h.clock.advance(WINDOW - HOUR);
    const t2 = (await refresh(client, t1)).body.refresh_token as string;
    // At the edge of t0's window (inclusive) a process that kept t0 is still answered with t1.
    h.clock.advance(HOUR);
    const edge = await refresh(client, t0);
    expect([edge.status, edge.body.refresh_token]).toEqual([200, t1]);
    // One millisecond later t0 is reuse, though t1 (first used an hour ago) would still be answered.
    h.clock.advance(1);
    expect((await refresh(client, t0)).body.error).toBe('invalid_grant');
    expect(reused()).toEqual([expect.objectContaining({ reason: 'after_window', firstUsedAt: firstUse })]);
    expect(await h.store.isGrantActive(grantId)).toBe(false);
    expect((await refresh(client, t2)).body.error).toBe('invalid_grant');
    expect(reused()).toHaveLength(1);
  });

  test('a revoked or expired grant: every token of its chain is invalid_grant, without a second reuse event', async () => {
    h = await openHarness('memory');
    const { client, tokens } = await obtainTokens(asServer());
    const t1 = (await refresh(client, tokens.refresh_token)).body.refresh_token as string;
    const t2 = (await refresh(client, t1)).body.refresh_token as string;
    expect((await tokenRequest(h.app, client, { token: t2 }, '/v1/oauth/revoke')).status).toBe(200);
    for (const token of [
      tokens.refresh_token,
      t1,
      t2,
      successorOf(t2, grantOf(tokens), successorKeyOf(SECRET)).token,
    ]) {
      const res = await refresh(client, token);
      expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    }
    expect(reused()).toEqual([]);
    const other = await obtainTokens(asServer());
    const u1 = (await refresh(other.client, other.tokens.refresh_token)).body.refresh_token as string;
    h.clock.advance(31 * DAY);
    for (const token of [other.tokens.refresh_token, u1]) {
      expect((await refresh(other.client, token)).body.error).toBe('invalid_grant');
    }
    expect(reused()).toEqual([]);
  });
});

describe('the upgrade path does not leave two live branches', () => {
  test.each(['the random successor', 'the derived one'])(
    'latest token with a random successor, repeated: once %s is used, the other is reuse',
    async (firstUsed) => {
      h = await openHarness('sqlite');
      const { client, tokens } = await obtainTokens(asServer());
      const grantId = grantOf(tokens);
      const random = await firstUseBeforeDerivation(tokens.refresh_token, grantId, client.client_id);
      const derived = (await refresh(client, tokens.refresh_token)).body.refresh_token as string;
      expect(derived).not.toBe(random);
      // A second repeat writes nothing new: the same derived successor.
      expect((await refresh(client, tokens.refresh_token)).body.refresh_token).toBe(derived);
      const [winner, loser] = firstUsed === 'the random successor' ? [random, derived] : [derived, random];
      expect((await refresh(client, winner)).status).toBe(200);
      expect((await refresh(client, loser)).body.error).toBe('invalid_grant');
      expect(reused()).toEqual([expect.objectContaining({ reason: 'superseded' })]);
      expect(await h.store.isGrantActive(grantId)).toBe(false);
    },
  );

  test('two instances with different secrets branch, and the branch is caught, not kept', async () => {
    h = await openHarness('memory');
    const { client, tokens } = await obtainTokens(asServer());
    const other = h.instance({ secret: 'u'.repeat(32) });
    const here = (await refresh(client, tokens.refresh_token)).body.refresh_token as string;
    const there = (await refresh(client, tokens.refresh_token, other)).body.refresh_token as string;
    expect(there).not.toBe(here);
    expect((await refresh(client, here)).status).toBe(200);
    expect((await refresh(client, there, other)).body.error).toBe('invalid_grant');
    expect(await h.store.isGrantActive(grantOf(tokens))).toBe(false);
  });
});

describe('introspection says active exactly when the token endpoint would answer', () => {
  type Setup = (c: RegisteredClient, t: Tokens) => Promise<string>;
  const cases: Array<[string, Policy, Setup]> = [
    ['a fresh token', undefined, async (_c, t) => t.refresh_token],
    [
      'the latest token, days later, its successor unused',
      undefined,
      async (c, t) => (await refresh(c, t.refresh_token), h.clock.advance(3 * DAY), t.refresh_token),
    ],
    [
      'the latest token two minutes later, strict',
      'strict',
      async (c, t) => (await refresh(c, t.refresh_token), h.clock.advance(2 * MINUTE), t.refresh_token),
    ],
    [
      'an older token within its window',
      undefined,
      async (c, t) => {
        const next = await refresh(c, t.refresh_token);
        await refresh(c, next.body.refresh_token);
        h.clock.advance(HOUR);
        return t.refresh_token;
      },
    ],
    [
      'an older token past its window',
      undefined,
      async (c, t) => {
        const next = await refresh(c, t.refresh_token);
        h.clock.advance(WINDOW + 1);
        await refresh(c, next.body.refresh_token);
        return t.refresh_token;
      },
    ],
    [
      'the successor of the latest token',
      undefined,
      async (c, t) => (await refresh(c, t.refresh_token)).body.refresh_token,
    ],
  ];
  test.each(cases)('%s', async (_name, policy, setup) => {
    h = await openHarness('sqlite', { refreshTokenReuse: policy });
    const { client, tokens } = await obtainTokens(asServer(), {
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const token = await setup(client, tokens);
    const introspected = await tokenRequest(h.app, client, { token }, '/v1/oauth/introspect');
    const presented = await refresh(client, token);
    expect(introspected.body.active).toBe(presented.status === 200);
  });
});

function races(kind: StoreKind) {
  describe(`races on ${kind}`, () => {
    test('twenty presentations of one fresh token at once: one successor, no reuse, the grant lives', async () => {
      h = await openHarness(kind);
      const { client, tokens } = await obtainTokens(asServer());
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          refresh(client, tokens.refresh_token, i % 2 ? h.app : h.instance()),
        ),
      );
      expect(answers.map((res) => res.status)).toEqual(answers.map(() => 200));
      expect(new Set(answers.map((res) => res.body.refresh_token)).size).toBe(1);
      expect(reused()).toEqual([]);
      expect((await refresh(client, answers[0]!.body.refresh_token)).status).toBe(200);
      expect(await h.store.isGrantActive(grantOf(tokens))).toBe(true);
    });

    test('a latest token with a random successor, repeated twenty times at once: one derived successor', async () => {
      h = await openHarness(kind);
      const { client, tokens } = await obtainTokens(asServer());
      await firstUseBeforeDerivation(tokens.refresh_token, grantOf(tokens), client.client_id);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          refresh(client, tokens.refresh_token, i % 2 ? h.app : h.instance()),
        ),
      );
      expect(answers.map((res) => res.status)).toEqual(answers.map(() => 200));
      expect(new Set(answers.map((res) => res.body.refresh_token)).size).toBe(1);
      expect((await refresh(client, answers[0]!.body.refresh_token)).status).toBe(200);
      expect(reused()).toEqual([]);
    });

    test('the latest token and its successor presented together, ten times each: all answered, one chain', async () => {
      h = await openHarness(kind);
      const { client, tokens } = await obtainTokens(asServer());
      const t1 = (await refresh(client, tokens.refresh_token)).body.refresh_token as string;
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => refresh(client, i % 2 ? t1 : tokens.refresh_token)),
      );
      expect(answers.map((res) => res.status)).toEqual(answers.map(() => 200));
      expect(new Set(answers.map((res) => res.body.refresh_token)).size).toBe(2);
      expect(reused()).toEqual([]);
    });

    test('malformed refresh tokens are a 400 in JSON (RFC 6749 §5.2), never a server error', async () => {
      h = await openHarness(kind);
      const { client, tokens } = await obtainTokens(asServer());
      const grantId = grantOf(tokens);
      for (const token of [
        '.',
        '..',
        'x.',
        '.x',
        `${grantId}.`,
        `${grantId}.\u0000`,
        `\u0000.${grantId}`,
        '\ud800.x',
        'a'.repeat(3_000),
        `${'g'.repeat(2_000)}.x`,
      ]) {
        const res = await refresh(client, token);
        // A control character is refused by the parameter reader (invalid_request); anything else is no token.
        expect([JSON.stringify(token).slice(0, 40), res.status, res.type]).toEqual([
          JSON.stringify(token).slice(0, 40),
          400,
          'application/json',
        ]);
        expect(['invalid_grant', 'invalid_request']).toContain(res.body.error);
        const introspected = await tokenRequest(h.app, client, { token }, '/v1/oauth/introspect');
        expect(introspected.status).not.toBe(500);
      }
    });
  });
}
races('sqlite');
races('memory');
describeWith('races on PostgreSQL', { postgres: true }, () => races('postgres'));

describe('events', () => {
  test('no event carries a refresh token, a successor or its key', async () => {
    h = await openHarness('sqlite');
    const { client, tokens } = await obtainTokens(asServer());
    const t1 = (await refresh(client, tokens.refresh_token)).body.refresh_token as string;
    await refresh(client, tokens.refresh_token);
    const t2 = (await refresh(client, t1)).body.refresh_token as string;
    h.clock.advance(WINDOW + 1);
    await refresh(client, tokens.refresh_token);
    const text = JSON.stringify(h.events);
    for (const token of [tokens.refresh_token, t1, t2]) {
      expect(text).not.toContain(token.split('.')[1]);
      expect(text).not.toContain(refreshTokenKey(token).split('.')[1]);
    }
    expect(reused()).toHaveLength(1);
  });
});
