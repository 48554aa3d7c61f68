// fastPath(oauth, app): which requests it takes and which it leaves to the app untouched, what runs before the
// endpoint, the client's address as Express would give it, failures, and (a property) the same answer as the router
// for the same bytes.
import type { RequestListener } from 'node:http';
import express from 'express';
import fc from 'fast-check';
import type { OAuthEvent } from '../../../lib/events';
import { createSqliteStore } from '../../../lib/store/sqlite';
import { createFakeClock } from '../../helpers/clock';
import { mountTestApp } from '../../helpers/oauth-app';
import { comparable, exchange, listenOnLoopback, type RawAnswer } from '../../helpers/raw-http';
import { fastPath, type NodeMiddleware } from '../../../lib/experimental';

const TOKEN = '/v1/oauth/token';

/** A test app on a fresh in-memory store, its events, and what reached Express (method, url, the body it read). */
function setUp(options: Parameters<typeof mountTestApp>[2] = {}) {
  const clock = createFakeClock(Date.parse('2026-11-26T12:00:00Z'));
  const store = createSqliteStore(':memory:', { now: clock.now });
  const events: OAuthEvent[] = [];
  const errors: unknown[] = [];
  const { app, oauth } = mountTestApp(store, clock, {
    onEvent: (event) => void events.push(event),
    onError: (error) => void errors.push(error),
    ...options,
  });
  const reachedApp: Array<{ method: string; url: string; body: string }> = [];
  const host = express();
  host.use((req, res, next) => {
    // In front of the app, the body as Express would first see it: unread by the fast path.
    if (req.url.startsWith('/echo') || req.headers['x-echo']) {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('latin1');
        reachedApp.push({ method: req.method, url: req.url, body });
        res.json({ echoed: body });
      });
      return;
    }
    next();
  });
  host.use(app);
  return { host, app, oauth, events, errors, reachedApp, close: () => store.close() };
}

const form = (path: string, body: string, headers: Record<string, string> = {}) => {
  const fields = { 'Content-Type': 'application/x-www-form-urlencoded', ...headers };
  const lines = Object.entries(fields).map(([name, value]) => `${name}: ${value}\r\n`);
  return [
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${lines.join('')}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    body,
  ] as const;
};

async function send(listener: RequestListener, head: string, body = ''): Promise<RawAnswer> {
  const server = await listenOnLoopback(listener);
  try {
    return await exchange(server.port, head, body);
  } finally {
    server.close();
  }
}

describe('arguments', () => {
  // OAUTH stands for the router setUp made.
  const OAUTH = Symbol('the OAuth router');
  test.each([
    ['no router', [undefined, () => undefined], /must be the router createOAuthRouter returned/],
    [
      'an Express router of its own',
      [express.Router(), () => undefined],
      /must be the router createOAuthRouter/,
    ],
    ['no app', [OAUTH, undefined], /pass your app/],
    ['an object for an app', [OAUTH, {}], /pass your app/],
    [
      'before that is not a list',
      [OAUTH, () => undefined, { before: () => undefined }],
      /before must be an array/,
    ],
    ['before with a non-function', [OAUTH, () => undefined, { before: [1] }], /before must be an array/],
  ])('%s: a TypeError that says how to fix it', (_name, args, message) => {
    const { oauth, close } = setUp();
    const given = (args as unknown[]).map((arg) => (arg === OAUTH ? oauth : arg));
    expect(() => (fastPath as (...a: unknown[]) => unknown)(...given)).toThrow(message);
    close();
  });
});

describe('what goes to the app untouched, body unread', () => {
  const body = 'grant_type=refresh_token&client_id=abc&refresh_token=xyz';
  test.each([
    ['another path', form('/echo', body)],
    ['a query string', form(`${TOKEN}?x=1`, body, { 'X-Echo': '1' })],
    ['a trailing slash', form(`${TOKEN}/`, body, { 'X-Echo': '1' })],
    ['another case', form(TOKEN.toUpperCase(), body, { 'X-Echo': '1' })],
    ['the absolute form of the target', form(`http://127.0.0.1${TOKEN}`, body, { 'X-Echo': '1' })],
    [
      'JSON',
      form(TOKEN, '{"grant_type":"refresh_token"}', { 'Content-Type': 'application/json', 'X-Echo': '1' }),
    ],
    [
      'a latin1 form',
      form(TOKEN, body, {
        'Content-Type': 'application/x-www-form-urlencoded; charset=latin1',
        'X-Echo': '1',
      }),
    ],
    ['a compressed body', form(TOKEN, body, { 'Content-Encoding': 'gzip', 'X-Echo': '1' })],
    // Over the API endpoints' 16 KB: the router answers 413 through body-parser, which the fast path must not skip.
    ['a body over 16 KB', form(TOKEN, `${body}&pad=${'a'.repeat(16 * 1024)}`, { 'X-Echo': '1' })],
  ])('%s', async (_name, [head, payload]) => {
    const { host, oauth, reachedApp, events, close } = setUp();
    const answer = await send(fastPath(oauth, host), head, payload);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ echoed: payload });
    expect(reachedApp).toHaveLength(1);
    expect(events).toEqual([]);
    close();
  });

  test('a body of unknown length (chunked) and a GET go to the app', async () => {
    const { host, oauth, reachedApp, close } = setUp();
    const listener = fastPath(oauth, host);
    const chunked = await send(
      listener,
      `POST ${TOKEN} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Echo: 1\r\n` +
        'Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n',
      '5\r\na=b&c\r\n0\r\n\r\n',
    );
    expect(JSON.parse(chunked.body)).toEqual({ echoed: 'a=b&c' });
    const get = await send(
      listener,
      `GET ${TOKEN} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Echo: 1\r\n\r\n`,
    );
    expect(get.status).toBe(200);
    expect(reachedApp.map(({ method }) => method)).toEqual(['POST', 'GET']);
    close();
  });
});

describe('before', () => {
  const refused = form(TOKEN, 'grant_type=refresh_token&client_id=nobody&refresh_token=x');

  test('runs in order on the requests the fast path takes, and only on those', async () => {
    const { host, oauth, events, close } = setUp();
    const seen: string[] = [];
    const mark =
      (name: string): NodeMiddleware =>
      (req, _res, next) => {
        seen.push(`${name} ${req.url}`);
        next();
      };
    const listener = fastPath(oauth, host, { before: [mark('a'), mark('b')] });
    expect((await send(listener, ...refused)).status).toBe(401);
    expect((await send(listener, ...form('/echo', 'x=1'))).status).toBe(200);
    expect(seen).toEqual([`a ${TOKEN}`, `b ${TOKEN}`]);
    expect(events.map(({ type }) => type)).toEqual(['token.refused']);
    close();
  });

  test('one that answers stops the request before the endpoint (nothing read, no event)', async () => {
    const { host, oauth, events, close } = setUp();
    const deny: NodeMiddleware = (_req, res) => {
      res.statusCode = 403;
      res.end('no');
    };
    const answer = await send(fastPath(oauth, host, { before: [deny] }), ...refused);
    expect(answer).toMatchObject({ status: 403, body: 'no' });
    expect(events).toEqual([]);
    close();
  });

  test('one that fails: 500 server_error in JSON, reported to onError, never the cause', async () => {
    const { host, oauth, errors, close } = setUp();
    const fail: NodeMiddleware = (_req, _res, next) => next(new Error('secret detail'));
    const thrower: NodeMiddleware = () => {
      throw new Error('thrown detail');
    };
    for (const step of [fail, thrower]) {
      const answer = await send(fastPath(oauth, host, { before: [step] }), ...refused);
      expect(answer.status).toBe(500);
      expect(JSON.parse(answer.body)).toEqual({
        error: 'server_error',
        error_description: 'An unexpected error occurred; try again later.',
      });
      expect(answer.headers).toMatch(/cache-control: no-store/i);
    }
    expect(errors.map((error) => (error as Error).message)).toEqual(['secret detail', 'thrown detail']);
    close();
  });

  test('a failure after the answer began: the connection is closed and the error reported', async () => {
    const { host, oauth, errors, close } = setUp();
    const halfway: NodeMiddleware = (_req, res, next) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('partial');
      next(new Error('too late'));
    };
    const answer = await send(fastPath(oauth, host, { before: [halfway] }), ...refused);
    // Never the 100 bytes announced: the client can tell the answer was cut off.
    expect(answer.body.length).toBeLessThan(100);
    expect(errors.map((error) => (error as Error).message)).toEqual(['too late']);
    close();
  });
});

describe("the client's address, as Express gives it (events, rate limits)", () => {
  test.each([
    ['no proxy trusted: the peer', undefined, '127.0.0.1'],
    ['loopback trusted: X-Forwarded-For', 'loopback', '203.0.113.9'],
  ])('%s', async (_name, trust, expected) => {
    const { host, oauth, events, close } = setUp();
    if (trust) host.set('trust proxy', trust);
    const request = form(TOKEN, 'grant_type=refresh_token&client_id=nobody&refresh_token=x', {
      'X-Forwarded-For': '203.0.113.9',
    });
    await send(fastPath(oauth, host), ...request);
    await send(host, ...request);
    expect(events.map(({ address }) => address)).toEqual([expected, expected]);
    close();
  });

  test('with the limits on: counted by address, RateLimit headers, 429 in OAuth terms', async () => {
    const { host, oauth, close } = setUp({ rateLimits: { token: { limit: 2, windowMs: 60_000 } } });
    const listener = fastPath(oauth, host);
    const request = form(TOKEN, 'grant_type=refresh_token&client_id=nobody&refresh_token=x');
    const answers = [];
    for (let i = 0; i < 3; i += 1) answers.push(await send(listener, ...request));
    expect(answers.map(({ status }) => status)).toEqual([401, 401, 429]);
    expect(answers[0]!.headers).toMatch(/^ratelimit: "token"; r=1; t=\d+$/im);
    expect(answers[0]!.headers).toMatch(/^ratelimit-policy: "token"; q=2; w=60/im);
    expect(JSON.parse(answers[2]!.body)).toMatchObject({ error: 'too_many_requests' });
    // The router's own path shares the counter: the same limit whichever dispatched the request.
    expect((await send(host, ...request)).status).toBe(429);
    close();
  });
});

// The same bytes to the router through Express and through the fast path, one store behind both: the same status,
// headers and body. The requests are refusals of every kind (they change nothing a later request would see), with
// values a client chooses: grant types, parameters repeated or missing, control characters, __proto__, sizes.
describe('property: the fast path answers as the router does', () => {
  const value = fc.oneof(
    fc.constantFrom(
      'refresh_token',
      'authorization_code',
      'client_credentials',
      'password',
      '',
      'x%00y',
      '%0A',
    ),
    fc.string({ maxLength: 20 }).map(encodeURIComponent),
  );
  const name = fc.constantFrom(
    'grant_type',
    'client_id',
    'refresh_token',
    'code',
    'code_verifier',
    'redirect_uri',
    'scope',
    'resource',
    'token',
    'token_type_hint',
    'client_secret',
    '__proto__',
    'constructor',
  );
  const pairs = fc.array(fc.tuple(name, value), { maxLength: 60 });
  const path = fc.constantFrom(TOKEN, '/v1/oauth/revoke', '/v1/oauth/introspect');
  const auth = fc.option(fc.constantFrom('Basic bm9ib2R5OnNlY3JldA==', 'Basic !!', 'Bearer x'), {
    nil: undefined,
  });

  test('status, headers and body', async () => {
    const { host, oauth, close } = setUp();
    const fast = await listenOnLoopback(fastPath(oauth, host));
    const plain = await listenOnLoopback(host);
    // The date moves between the two requests and Express alone adds X-Powered-By; everything else must match.
    const ignored = ['date', 'x-powered-by'];
    try {
      await fc.assert(
        fc.asyncProperty(path, pairs, auth, async (target, fields, authorization) => {
          const body = fields.map(([key, item]) => `${key}=${item}`).join('&');
          const request = form(target, body, authorization ? { Authorization: authorization } : {});
          const [a, b] = await Promise.all([
            exchange(fast.port, ...request),
            exchange(plain.port, ...request),
          ]);
          expect(comparable(a, ignored)).toEqual(comparable(b, ignored));
          expect(a.status).not.toBe(500);
        }),
        { numRuns: 150 },
      );
    } finally {
      fast.close();
      plain.close();
      close();
    }
  });
});

describe("routes: the host's own POST endpoints (its /mcp)", () => {
  const json = (path: string, body: string, headers: Record<string, string> = {}) =>
    form(path, body, { 'Content-Type': 'application/json', ...headers });
  /** A route that reads its own JSON body and answers with it, and what it saw. */
  function hook(seen: string[]): NodeMiddleware {
    return (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push(`${req.url} ${Buffer.concat(chunks).toString()}`);
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ hooked: true }));
      });
    };
  }

  test.each([
    ['routes that is a list', { routes: [] }, /routes must be an object/],
    ['a path without its slash', { routes: { mcp: [() => undefined] } }, /must be a path starting with/],
    ['a path with a query', { routes: { '/mcp?x': [() => undefined] } }, /without \? or #/],
    ["one of the router's endpoints", { routes: { [TOKEN]: [() => undefined] } }, /OAuth router's endpoints/],
    ['an empty chain', { routes: { '/mcp': [] } }, /needs an array of/],
    ['a chain with a non-function', { routes: { '/mcp': [() => undefined, 'x'] } }, /needs an array of/],
    ['onRouteError not a function', { onRouteError: 'x' }, /onRouteError must be a function/],
  ])('%s: a TypeError that says how to fix it', (_name, options, message) => {
    const { host, oauth, close } = setUp();
    expect(() => (fastPath as (...a: unknown[]) => unknown)(oauth, host, options)).toThrow(message);
    close();
  });

  test('a POST to the exact path runs before and the chain, with any body; the rest goes to the app', async () => {
    const { host, oauth, reachedApp, close } = setUp();
    const seen: string[] = [];
    const marks: string[] = [];
    const mark: NodeMiddleware = (req, _res, next) => {
      marks.push(req.url!);
      next();
    };
    const listener = fastPath(oauth, host, { before: [mark], routes: { '/hook': [hook(seen)] } });
    const taken = await send(listener, ...json('/hook', '{"id":1}'));
    expect(taken).toMatchObject({ status: 200, body: '{"hooked":true}' });
    expect(seen).toEqual(['/hook {"id":1}']);
    for (const [head, body] of [
      json('/hook/', '{}', { 'X-Echo': '1' }),
      json('/hook?x=1', '{}', { 'X-Echo': '1' }),
      json('/HOOK', '{}', { 'X-Echo': '1' }),
      json('http://127.0.0.1/hook', '{}', { 'X-Echo': '1' }),
    ])
      expect((await send(listener, head, body)).status).toBe(200);
    const get = `GET /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Echo: 1\r\n\r\n`;
    expect((await send(listener, get)).status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(marks).toEqual(['/hook']);
    expect(reachedApp.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'POST /hook/',
      'POST /hook?x=1',
      'POST /HOOK',
      'POST http://127.0.0.1/hook',
      'GET /hook',
    ]);
    close();
  });

  test("an error in the chain: the host's onRouteError answers it, or the OAuth 500 without one", async () => {
    const { host, oauth, errors, close } = setUp();
    const broken: NodeMiddleware = (_req, _res, next) => next(new Error('route detail'));
    const answered: unknown[] = [];
    const failOnToken: NodeMiddleware = (req, _res, next) =>
      next(req.url === TOKEN ? new Error('before detail') : undefined);
    const withAnswer = fastPath(oauth, host, {
      before: [failOnToken],
      routes: { '/hook': [broken] },
      onRouteError: (error, _req, res) => {
        answered.push(error);
        res.statusCode = 500;
        res.end('{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":null}');
      },
    });
    const own = await send(withAnswer, ...json('/hook', '{}'));
    expect(own.status).toBe(500);
    expect(JSON.parse(own.body)).toMatchObject({ error: { code: -32603 } });
    expect((answered as Error[]).map(({ message }) => message)).toEqual(['route detail']);
    // The router's endpoints keep the OAuth answer whatever onRouteError says.
    const token = await send(withAnswer, ...form(TOKEN, 'grant_type=nope'));
    expect(JSON.parse(token.body)).toMatchObject({ error: 'server_error' });
    const fallback = await send(
      fastPath(oauth, host, { routes: { '/hook': [broken] } }),
      ...json('/hook', '{}'),
    );
    expect(fallback.status).toBe(500);
    expect(JSON.parse(fallback.body)).toMatchObject({ error: 'server_error' });
    expect(errors.map((error) => (error as Error).message)).toEqual(['before detail', 'route detail']);
    close();
  });

  test('an onRouteError that throws: the connection is closed and its error reported, never a hang', async () => {
    const { host, oauth, errors, close } = setUp();
    const listener = fastPath(oauth, host, {
      routes: { '/hook': [((_req, _res, next) => next(new Error('first'))) as NodeMiddleware] },
      onRouteError: () => {
        throw new Error('the answer failed');
      },
    });
    const answer = await send(listener, ...json('/hook', '{}'));
    expect(answer.status).toBe(0);
    expect(errors.map((error) => (error as Error).message)).toEqual(['the answer failed']);
    close();
  });
});
