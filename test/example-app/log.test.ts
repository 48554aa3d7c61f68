// The reference app's request log: one JSON line per request, at a level that says how it went, with the request's
// id on it and on every line logged for that request; never a query string.
import type { IncomingMessage } from 'node:http';
import express from 'express';
import request from 'supertest';
import { createLogger, isoTime, requestLog, requestLogger } from '../../example-app/log';
import { logSink } from '../helpers/log-sink';
import { waitUntil } from '../helpers/wait';

afterEach(() => jest.useRealTimers());

test.each([
  '2026-11-25T04:42:11.000Z',
  '2026-11-25T04:42:11.007Z',
  '2026-11-25T04:42:11.070Z',
  '2026-11-25T04:42:11.999Z',
  '2026-11-25T04:42:12.000Z',
  '2026-12-31T23:59:59.999Z',
  '2027-01-01T00:00:00.001Z',
])('the timestamp at %s is pino’s isoTime', (instant) => {
  const time = isoTime();
  jest.useFakeTimers({ now: Date.parse('2026-11-25T04:42:10.500Z') });
  time(); // an earlier second, remembered: the next call must not reuse it
  jest.setSystemTime(Date.parse(instant));
  expect(time()).toBe(`,"time":"${instant}"`);
});

function loggedApp() {
  const sink = logSink();
  const app = express();
  const logger = createLogger('info', sink.stream);
  app.use(requestLogger(logger));
  app.get('/healthz', (_req, res) => void res.send('ok'));
  app.get('/status/:code', (req, res) => {
    requestLog(req, logger).info({ step: 'inside' }, 'handler ran');
    res.status(Number(req.params.code)).send('done');
  });
  app.get('/cut', (req) => req.socket.destroy());
  return { app, lines: sink.lines };
}

test.each([
  [200, 30, 'request completed'],
  [302, 30, 'request completed'],
  [404, 40, 'request completed'],
  [503, 50, 'request errored'],
])('a %d is logged at level %d, with the id its handler’s lines carry too', async (code, level, msg) => {
  const { app, lines } = loggedApp();
  const res = await request(app).get(`/status/${code}?code=secret`).set('X-Request-Id', 'trace-1');
  expect(res.headers['x-request-id']).toBe('trace-1');
  // The request's line is written when its response closes, which the client need not have waited for.
  await waitUntil(() => lines.length >= 2, 5_000, 'the request line');
  expect(lines).toEqual([
    expect.objectContaining({ level: 30, reqId: 'trace-1', step: 'inside', msg: 'handler ran' }),
    expect.objectContaining({
      level,
      reqId: 'trace-1',
      req: { id: 'trace-1', method: 'GET', path: `/status/${code}` },
      res: { statusCode: code },
      responseTime: expect.any(Number),
      msg,
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    }),
  ]);
  expect(JSON.stringify(lines)).not.toContain('secret');
});

test.each([
  ['none', undefined],
  ['too long', 'x'.repeat(65)],
  ['with a space', 'a b'],
  ['with a quote', 'a"b'],
])('a request id %s is replaced with a new one', async (_name, given) => {
  const { app, lines } = loggedApp();
  const call = request(app).get('/status/200');
  const res = await (given === undefined ? call : call.set('X-Request-Id', given));
  expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  await waitUntil(() => lines.some((line) => line.msg === 'request completed'), 5_000, 'the request line');
  expect(lines.at(-1)).toMatchObject({ reqId: res.headers['x-request-id'] });
});

test('health probes are not logged; a request cut off before its answer is, as aborted', async () => {
  const { app, lines } = loggedApp();
  await request(app).get('/healthz');
  await expect(request(app).get('/cut')).rejects.toThrow();
  // The probe's response closed before its client had it: a line of its own would be there before the cut one.
  await waitUntil(() => lines.some((line) => line.msg === 'request aborted'), 5_000, 'the aborted line');
  expect(lines).toEqual([
    expect.objectContaining({
      level: 40,
      msg: 'request aborted',
      req: expect.objectContaining({ path: '/cut' }),
    }),
  ]);
});

test('requestLog: one child per request, made at its first line and kept; the logger itself for a request never logged', () => {
  const logger = createLogger('info', logSink().stream);
  const seen = { id: 'trace-2' } as IncomingMessage;
  const child = requestLog(seen, logger);
  expect(child).not.toBe(logger);
  expect(child.bindings()).toEqual({ reqId: 'trace-2' });
  expect(requestLog(seen, logger)).toBe(child);
  expect(requestLog({} as IncomingMessage, logger)).toBe(logger);
});
