// Two instances of the reference app on one PostgreSQL and one Redis, as behind a load balancer: whatever one
// instance issues, the other honours; atomic operations stay atomic across them; limits count requests to both.
import { execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chatGptDocument } from '../helpers/client-documents';
import { startDocumentServer, type DocumentServer } from '../helpers/document-server';
import { TEST_SECRET_KEY } from '../helpers/example-app';
import { authorizeOn } from '../helpers/http-browser';
import { testCa } from '../helpers/test-ca';
import { createTestDatabase } from '../helpers/postgres-database';
import { describeWith, REDIS_URL } from '../helpers/services';
import { freePort } from '../helpers/ports';
import { ROOT, startInstance } from '../helpers/app-process';
import { waitUntil } from '../helpers/wait';

const USER = { email: 'multi@example.com', password: 'a long multi password' };

// Response bodies of the instances under test, read as loosely as a client would.
type Json = any;
const json = async (response: Response | Promise<Response>) => (await (await response).json()) as Json;

describeWith('several instances behind a load balancer', { postgres: true, redis: true }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let documents: DocumentServer;
  const instances: ChildProcess[] = [];
  let a: string;
  let b: string;
  let issuer: string;
  let registrations = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    documents = await startDocumentServer();
    const [portA, portB] = [await freePort(), await freePort()];
    a = `http://127.0.0.1:${portA}`;
    b = `http://127.0.0.1:${portB}`;
    issuer = a; // one public address for both, as a load balancer would give them
    const env = {
      BASE_URL: issuer,
      DATABASE_URL: database.url,
      SECRET_KEY: TEST_SECRET_KEY,
      REDIS_URL: REDIS_URL!,
      RATE_LIMIT_PREFIX: `test-${randomBytes(4).toString('hex')}:`,
      // Client documents on this machine's loopback, over HTTPS from the test's own CA (the contract's way).
      CIMD_ALLOW_LOOPBACK: '1',
      NODE_EXTRA_CA_CERTS: testCa().caFile,
    };
    await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'dist/example-app/cli/user-create.js'), '--email', USER.email, '--password', USER.password],
      {
        env: { ...process.env, ...env },
      },
    );
    // Both start at once on the same database: the migrations must not collide.
    instances.push(...(await Promise.all([startInstance(portA, env), startInstance(portB, env)])));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(
      instances.map(
        (child) => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM'))),
      ),
    );
    await database?.drop();
    await documents?.stop();
  });

  const register = async (base: string) => {
    registrations += 1;
    return fetch(`${base}/v1/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Multi',
        redirect_uris: ['https://client.example/cb'],
        token_endpoint_auth_method: 'client_secret_post',
      }),
    });
  };
  const token = (
    base: string,
    client: { client_id: string; client_secret: string },
    params: Record<string, string>,
  ) =>
    fetch(`${base}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...params,
        client_id: client.client_id,
        client_secret: client.client_secret,
      }),
    });
  const callTool = (base: string, accessToken: string) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${accessToken}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_clients', arguments: {} },
      }),
    });
  const exchange = async (
    base: string,
    client: Json,
    grant: { code: string; verifier: string; redirectUri: string },
  ) =>
    token(base, client, {
      grant_type: 'authorization_code',
      code: grant.code,
      code_verifier: grant.verifier,
      redirect_uri: grant.redirectUri,
    });

  test('a client registered through one instance is used through the other; a code from one is redeemed on the other', async () => {
    const client = await json(register(a));
    const grant = await authorizeOn(b, client, USER, `${issuer}/mcp`);
    const res = await exchange(a, client, grant);
    expect(res.status).toBe(200);
    const tokens = await json(res);
    expect((await callTool(b, tokens.access_token)).status).toBe(200);
    expect((await callTool(a, tokens.access_token)).status).toBe(200);
  });

  test('50 concurrent redemptions of one code spread over both instances: exactly one succeeds', async () => {
    const client = await json(register(b));
    const grant = await authorizeOn(a, client, USER, `${issuer}/mcp`);
    const statuses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => exchange(i % 2 ? a : b, client, grant).then((res) => res.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 400)).toHaveLength(49);
  });

  // The instances share SECRET_KEY, so they derive a token's successor alike: a token presented on both converges
  // on one chain (reuse after the window, which this test cannot wait for, is on the fake clock in
  // test/flows/refresh-scenarios.test.ts, with two routers on one store).
  test('a refresh token rotated on one instance and presented again on the other gets the same successor', async () => {
    const client = await json(register(a));
    const first = await json(exchange(a, client, await authorizeOn(a, client, USER, `${issuer}/mcp`)));
    const refresh = (base: string, refreshToken: string) =>
      json(token(base, client, { grant_type: 'refresh_token', refresh_token: refreshToken }));
    const second = await refresh(a, first.refresh_token);
    const third = await refresh(a, second.refresh_token);
    // A second process of the client, which kept the first token, reaches the other instance.
    const late = await refresh(b, first.refresh_token);
    expect(late.refresh_token).toBe(second.refresh_token);
    // Two refreshes of one token racing on both instances: the same successor, and both access tokens work.
    const [here, there] = await Promise.all([
      refresh(a, third.refresh_token),
      refresh(b, third.refresh_token),
    ]);
    expect(here.refresh_token).toBe(there.refresh_token);
    expect((await callTool(b, here.access_token)).status).toBe(200);
    expect((await callTool(a, there.access_token)).status).toBe(200);
  });

  test('a revocation on one instance is seen by the other within the documented delay (grantStatusMs, 1 s)', async () => {
    const client = await json(register(b));
    const tokens = await json(exchange(b, client, await authorizeOn(b, client, USER, `${issuer}/mcp`)));
    expect((await callTool(b, tokens.access_token)).status).toBe(200); // B now remembers the grant as active
    const revoked = await fetch(`${a}/v1/oauth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: tokens.refresh_token }),
    });
    expect(revoked.status).toBe(200);
    expect((await callTool(a, tokens.access_token)).status).toBe(401); // the revoking instance: at once
    const started = Date.now();
    await waitUntil(
      async () => (await callTool(b, tokens.access_token)).status !== 200,
      1000 + 250,
      'the other instance refusing the revoked grant',
    );
    console.log(`revocation seen by the other instance after ${Date.now() - started} ms`);
    expect((await callTool(b, tokens.access_token)).status).toBe(401);
  });

  test('a metadata-document client with private_key_jwt: authorized on one instance, served by both; an assertion is single-use across them', async () => {
    const chatgpt = chatGptDocument(documents, { path: '/multi/chatgpt.json', host: '127.0.0.1' });
    const redirectUris = chatgpt.document.redirect_uris as string[];
    const grant = await authorizeOn(
      a,
      { client_id: chatgpt.clientId, redirect_uris: redirectUris },
      USER,
      `${issuer}/mcp`,
    );
    const post = (base: string, params: Record<string, string>) =>
      fetch(`${base}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          ...params,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        }),
      });
    const assertion = chatgpt.assertion(`${issuer}/v1/oauth/token`);
    const exchanged = await post(b, {
      grant_type: 'authorization_code',
      code: grant.code,
      code_verifier: grant.verifier,
      redirect_uri: grant.redirectUri,
      client_assertion: assertion,
    });
    expect(exchanged.status).toBe(200);
    const tokens = await json(exchanged);
    const replay = await post(a, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_assertion: assertion,
    });
    expect(replay.status).toBe(401);
    expect((await json(replay)).error_description).toMatch(/already used/);
    const refreshed = await post(a, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_assertion: chatgpt.assertion(`${issuer}/v1/oauth/token`),
    });
    expect(refreshed.status).toBe(200);
    expect((await callTool(b, (await json(refreshed)).access_token)).status).toBe(200);
  });

  test('the registration limit (20 per 15 minutes per address) counts requests to both instances', async () => {
    const statuses: number[] = [];
    while (registrations < 20) statuses.push((await register(registrations % 2 ? a : b)).status);
    expect(statuses.every((status) => status === 201)).toBe(true);
    expect((await register(a)).status).toBe(429);
    expect((await register(b)).status).toBe(429);
  });
});
