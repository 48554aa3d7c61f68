// Expired rows are deleted on a schedule: under a steady flow of short-lived grants (with a code and an assertion id
// each), the tables stop growing instead of keeping every row ever written. Time is Jest's fake clock (Date and the
// schedule's setInterval): 4.5 s of traffic pass in a few milliseconds, the same every run.
import { randomUUID } from 'node:crypto';
import { hashSecret, randomSecret } from '../../lib/crypto/secrets';
import { clientRecord } from '../helpers/fixtures';
import { startExampleApp } from '../helpers/example-app';
import { schedulePurge } from '../../example-app/purge';

const count = async (app: Awaited<ReturnType<typeof startExampleApp>>, table: string) =>
  Number((await app.db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n);

afterEach(() => jest.useRealTimers());

test('under a steady flow of expiring grants the tables stop growing', async () => {
  // I/O and setImmediate (the store's group commit) stay real: only the clock and the timers are Jest's.
  jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate', 'clearImmediate'] });
  const app = await startExampleApp({ PURGE_INTERVAL_SECONDS: '1' });
  try {
    const clientId = randomUUID();
    await app.store.registerClient(clientRecord({ clientId, clientName: 'Flow', scope: 'clients:read' }));
    const samples: number[] = [];
    let written = 0;
    // One grant every 50 ms for 4.5 s.
    for (let step = 0; step < 90; step += 1) {
      const now = Date.now();
      const grantId = randomUUID();
      // Each lives 300 ms: without a purge, every one of them would still be in the tables at the end.
      await app.store.createGrant({
        grantId,
        clientId,
        userId: app.user.id,
        scopes: ['clients:read'],
        resource: `${app.baseUrl}/mcp`,
        createdAt: now,
        expiresAt: now + 300,
        lastUsedAt: null,
        revokedAt: null,
      });
      await app.store.saveAuthorizationCode({
        codeHash: hashSecret(randomSecret()),
        grantId,
        clientId,
        userId: app.user.id,
        redirectUri: 'http://127.0.0.1/cb',
        scopes: ['clients:read'],
        resource: `${app.baseUrl}/mcp`,
        codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        codeChallengeMethod: 'S256',
        expiresAt: now + 300,
      });
      await app.store.useAssertionId!(clientId, randomUUID(), now + 300);
      written += 1;
      if (written % 20 === 0) samples.push(await count(app, 'oauth_grants'));
      // Fires the schedule at each whole second, and lets its pass run to the end.
      await jest.advanceTimersByTimeAsync(50);
    }
    // 20 grants a second, each gone within its 0.3 s life and the 1 s schedule: never many more than 30.
    console.log(`purge: ${written} grants written, grant rows sampled each second: ${samples.join(', ')}`);
    expect(Math.max(...samples.slice(1))).toBeLessThan(45);
    expect(await count(app, 'oauth_grants')).toBeLessThan(45);
    expect(await count(app, 'oauth_authorization_codes')).toBeLessThan(45);
    expect(await count(app, 'oauth_client_assertions')).toBeLessThan(45);
  } finally {
    await app.stop();
  }
});

test('a pass over a synchronous store lets other work run between its batches', async () => {
  // Another request's work: one step per turn of the event loop, for as long as the pass runs.
  let turns = 0;
  let running = true;
  const tick = () => {
    turns += 1;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const seen: number[] = [];
  let left = 3;
  const store = {
    purgeExpired: (batchSize: number) => {
      seen.push(turns);
      return left-- > 0 ? batchSize : 0;
    },
  } as unknown as Parameters<typeof schedulePurge>[0];
  let auditLeft = 1;
  const audit = jest.fn((limit: number) => {
    seen.push(turns);
    return Promise.resolve(auditLeft-- > 0 ? limit : 0);
  });
  const schedule = schedulePurge(store, 86_400_000, undefined, [audit]);
  try {
    expect(await schedule.runOnce()).toBe(2_000);
  } finally {
    running = false;
    schedule.stop();
  }
  // Four batches of the store's (three full, one empty) and two of the audit's (one full, one empty), each after a
  // turn the other work had.
  expect(seen).toHaveLength(6);
  for (let i = 1; i < seen.length; i += 1) expect(seen[i]).toBeGreaterThan(seen[i - 1]!);
});

test('the schedule also deletes public registrations nobody connected within IDLE_CLIENT_DAYS, and only those', async () => {
  const app = await startExampleApp({ IDLE_CLIENT_DAYS: '1' });
  try {
    const old = Date.now() - 2 * 86_400_000;
    const publicClient = (clientId: string, issuedAt = old) =>
      clientRecord({ clientId, clientSecretHash: null, tokenEndpointAuthMethod: 'none', issuedAt });
    await app.store.registerClient(publicClient('idle'));
    await app.store.registerClient(publicClient('fresh', Date.now()));
    await app.store.registerClient(clientRecord({ clientId: 'operator', issuedAt: old }));
    await app.store.registerClient(publicClient('connected'));
    await app.store.createGrant({
      grantId: randomUUID(),
      clientId: 'connected',
      userId: app.user.id,
      scopes: ['clients:read'],
      resource: `${app.baseUrl}/mcp`,
      createdAt: old,
      expiresAt: Date.now() + 86_400_000,
      lastUsedAt: null,
      revokedAt: null,
    });
    await app.purge.runOnce();
    expect(await app.store.findClient('idle')).toBeUndefined();
    for (const kept of ['fresh', 'operator', 'connected'])
      expect(await app.store.findClient(kept)).toBeDefined();
  } finally {
    await app.stop();
  }
});
