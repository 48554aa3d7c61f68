// The reference app's audit trail: each OAuth event is a JSON log line with the request's id and a row of
// audit_events (on SQLite and PostgreSQL), the connected-apps page shows each app's recent activity, and old events
// are purged with the rest.
import request from 'supertest';
import { formOf } from '../helpers/oauth-app';
import { authorizeOn } from '../helpers/http-browser';
import { APP_USER, startExampleApp, type RunningExampleApp } from '../helpers/example-app';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database';
import { describeWith } from '../helpers/services';
import { logSink } from '../helpers/log-sink';
import { PURGE_AUDIT_SQL } from '../../example-app/audit';
import { readConfig } from '../../example-app/config';

async function connectClient(app: RunningExampleApp) {
  const client = (await (
    await fetch(`${app.baseUrl}/v1/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Audited agent', redirect_uris: ['https://agent.example/cb'] }),
    })
  ).json()) as { client_id: string; client_secret: string; redirect_uris: string[] };
  const { code, verifier, redirectUri } = await authorizeOn(
    app.baseUrl,
    client,
    APP_USER,
    `${app.baseUrl}/mcp`,
  );
  const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
  const token = async (body: Record<string, string>) =>
    (await (
      await fetch(`${app.baseUrl}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic },
        body: new URLSearchParams(body),
      })
    ).json()) as { access_token: string; refresh_token: string };
  const tokens = await token({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
  });
  const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
  return { client, tokens: refreshed };
}

/** Where a test's app keeps its data: a fresh environment per test, and its cleanup. */
interface Place {
  env(): Promise<Record<string, string>>;
  cleanUp(): Promise<void>;
}

function describeAudit(name: string, place: Place) {
  describe(`audit trail (${name})`, () => {
    let app: RunningExampleApp;
    let sink: ReturnType<typeof logSink>;
    beforeEach(async () => {
      sink = logSink();
      app = await startExampleApp(
        { LOG_LEVEL: 'info', ...(await place.env()) },
        { logDestination: sink.stream },
      );
    });
    afterEach(async () => {
      await app.stop();
      await place.cleanUp();
    });

    test('every event is a log line with its request id, and a row with no secret in it', async () => {
      const { client, tokens } = await connectClient(app);
      await app.audit.flush();
      const rows = await app.db.all<Record<string, unknown>>(
        'SELECT type, client_id, user_id, grant_id, address, request_id, detail FROM audit_events ORDER BY id',
      );
      expect(rows.map((row) => row.type)).toEqual([
        'client.registered',
        'sign_in.succeeded',
        'consent.granted',
        'code.issued',
        'code.redeemed',
        'token.refreshed',
      ]);
      expect(rows[5]).toMatchObject({ client_id: client.client_id, user_id: String(app.user.id) });
      expect(JSON.parse(rows[2]!.detail as string)).toEqual({ scopes: ['fakture:read', 'clients:read'] });
      for (const row of rows) expect(row.request_id).toMatch(/^[0-9a-f-]{36}$/);
      const auditLines = sink.lines.filter((line) => line.audit);
      expect(auditLines.map((line) => line.msg)).toEqual(rows.map((row) => row.type));
      // The event's line and its request's line share the id.
      const requestLines = sink.lines.filter((line) => line.req);
      for (const line of auditLines) {
        expect(requestLines.some((other) => other.reqId === line.reqId)).toBe(true);
      }
      const everything = JSON.stringify(rows) + JSON.stringify(sink.lines);
      for (const secret of [
        client.client_secret,
        tokens.access_token,
        tokens.refresh_token,
        APP_USER.password,
      ]) {
        expect(everything).not.toContain(secret);
      }
      // No header or query string reaches the log: they carry codes and tokens.
      expect(JSON.stringify(sink.lines)).not.toMatch(/authorization|cookie|code_challenge/i);
    });

    test('a caller’s X-Request-Id is kept and echoed; a strange one is replaced', async () => {
      const kept = await request(app.baseUrl).get('/v1/oauth/jwks').set('X-Request-Id', 'trace-7f3a.1');
      expect(kept.headers['x-request-id']).toBe('trace-7f3a.1');
      const replaced = await request(app.baseUrl).get('/v1/oauth/jwks').set('X-Request-Id', 'a b<script>');
      expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    test('the connected-apps page shows each app’s last sign-in and last refresh; user revocation is recorded', async () => {
      const { client } = await connectClient(app);
      await app.audit.flush();
      const browser = request.agent(app.baseUrl);
      const form = formOf((await browser.get('/account/sign-in')).text);
      await browser
        .post('/account/sign-in')
        .type('form')
        .send({ ...form.fields, ...APP_USER });
      const page = await browser.get('/account/connected-apps');
      expect(page.text).toMatch(
        /Last sign-in for it \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC · last token refresh \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/,
      );
      const revoke = formOf(page.text.slice(page.text.indexOf('connected-apps/revoke') - 200));
      await browser.post('/account/connected-apps/revoke').type('form').send(revoke.fields);
      await app.audit.flush();
      const revoked = await app.db.get<Record<string, unknown>>(
        "SELECT client_id, user_id, detail FROM audit_events WHERE type = 'grant.revoked'",
      );
      expect(revoked).toMatchObject({ client_id: client.client_id, user_id: String(app.user.id) });
      expect(JSON.parse(revoked!.detail as string)).toEqual({ by: 'user' });
    });

    test('30 refused requests make one row and one line in their window, not 30', async () => {
      // This app with its rate limits on (the default of a real deployment; the tests' apps run without).
      await app.stop();
      await place.cleanUp();
      app = await startExampleApp(
        { LOG_LEVEL: 'info', RATE_LIMITS: 'on', ...(await place.env()) },
        { logDestination: sink.stream },
      );
      const register = () =>
        fetch(`${app.baseUrl}/v1/oauth/register`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ redirect_uris: ['https://flood.example/cb'] }),
        });
      const statuses: number[] = [];
      // The registration limit allows 20 per window; the next 30 are refused.
      for (let i = 0; i < 50; i += 1) statuses.push((await register()).status);
      expect(statuses.filter((status) => status === 429)).toHaveLength(30);
      await app.audit.flush();
      const rows = await app.db.all<{ detail: string }>(
        "SELECT detail FROM audit_events WHERE type = 'rate_limit.hit'",
      );
      expect(rows.map((row) => JSON.parse(row.detail))).toEqual([{ limit: 'register', count: 1 }]);
      expect(sink.lines.filter((line) => line.msg === 'rate_limit.hit')).toHaveLength(1);
    });

    test('events older than the retention are purged with the rest; newer ones stay', async () => {
      await connectClient(app);
      await app.audit.flush();
      const count = async () =>
        Number((await app.db.get<{ n: number }>('SELECT count(*) AS n FROM audit_events'))!.n);
      const before = await count();
      await app.db.run('UPDATE audit_events SET time = ? WHERE type = ?', [
        Date.now() - 91 * 86_400_000,
        'client.registered',
      ]);
      await app.purge.runOnce();
      expect(await count()).toBe(before - 1);
    });

    if (name === 'SQLite')
      test('the purge finds old events by the time index, not by reading the whole trail', async () => {
        const plan = await app.db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${PURGE_AUDIT_SQL}`, [0, 500]);
        const steps = plan.map((step) => step.detail);
        expect(steps).toContainEqual(expect.stringContaining('INDEX audit_events_time'));
        expect(steps.filter((step) => step.startsWith('SCAN'))).toEqual([]);
      });
  });
}

describeAudit('SQLite', { env: async () => ({}), cleanUp: async () => undefined });
let database: TestDatabase | undefined;
describeWith('audit trail on PostgreSQL', { postgres: true }, () => {
  // A database of its own per test: each app creates the same user.
  describeAudit('PostgreSQL', {
    env: async () => {
      database = await createTestDatabase();
      return { DATABASE_URL: database.url };
    },
    cleanUp: async () => database?.drop(),
  });
});

test('AUDIT_RETENTION_DAYS and LOG_LEVEL are checked at start', () => {
  expect(readConfig({ AUDIT_RETENTION_DAYS: '7' }).auditRetentionMs).toBe(7 * 86_400_000);
  expect(() => readConfig({ AUDIT_RETENTION_DAYS: '0' })).toThrow(/AUDIT_RETENTION_DAYS/);
  expect(() => readConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL must be one of/);
});
