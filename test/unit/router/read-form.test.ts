// The plain-form reader of the API endpoints against body-parser, which it stands in for: for the bodies it takes it
// must give the same req.body, and every request it does not take must be left to body-parser.
import express from 'express';
import request from 'supertest';
import { createFormReader, isPlainForm } from '../../../lib/router/read-form';
import { createBodyParsers } from '../../../lib/router/body-parsers';
import { listenOnLoopback, stall } from '../../helpers/raw-http';

/** An app answering with the body its parser read, and which parser read it. */
function echo(parser: express.RequestHandler) {
  const app = express();
  app.post('/', parser, (req, res) => res.json({ body: req.body, plain: isPlainForm(req, 16 * 1024) }));
  app.use(((error, _req, res, _next) => {
    res.status(error.status ?? 500).json({ error: error.message });
  }) as express.ErrorRequestHandler);
  return app;
}
const ours = echo(createBodyParsers().formOrJson);
const theirs = echo(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 }));

test.each([
  ['a token request', 'grant_type=refresh_token&client_id=abc&refresh_token=x.y-z_~'],
  ['percent-encoding and +', 'redirect_uri=https%3A%2F%2Fa.example%2Fcb%3Fq%3D1&scope=a+b%20c'],
  ['a repeated name becomes an array', 'scope=a&scope=b&scope=c'],
  ['empty values and a bare name', 'a=&b&c=1'],
  ['UTF-8', `name=${encodeURIComponent('Čačak ĐŽ 💡')}`],
  ['__proto__ is a parameter like any other', '__proto__=x&constructor=y&toString=z'],
  ['an empty body', ''],
  ['exactly 50 parameters', Array.from({ length: 50 }, (_, i) => `p${i}=${i}`).join('&')],
])('%s: the same req.body as body-parser', async (_name, body) => {
  const [a, b] = (await Promise.all(
    [ours, theirs].map((app) =>
      request(app).post('/').set('Content-Type', 'application/x-www-form-urlencoded').send(body),
    ),
  )) as [request.Response, request.Response];
  expect(a.status).toBe(200);
  expect(a.body.plain).toBe(true);
  expect(a.body.body).toEqual(b.body.body);
});

test('more than 50 parameters is 413, as body-parser answers', async () => {
  const body = Array.from({ length: 51 }, (_, i) => `p${i}=${i}`).join('&');
  const res = await request(ours)
    .post('/')
    .set('Content-Type', 'application/x-www-form-urlencoded')
    .send(body);
  expect(res.status).toBe(413);
});

test.each([
  ['application/x-www-form-urlencoded', true],
  ['Application/X-WWW-Form-Urlencoded', true],
  ['application/x-www-form-urlencoded; charset=utf-8', true],
  ['application/x-www-form-urlencoded;charset="UTF-8"', true],
  ['application/x-www-form-urlencoded; charset=iso-8859-1', false],
  ['application/x-www-form-urlencoded; a=b', false],
  ['application/x-www-form-urlencoded\xa0', false],
  ['application/x-www-form-urlencodedx', false],
  ['text/plain', false],
  ['application/json', false],
])('Content-Type %j is read here: %s (anything else goes to body-parser)', (type, plain) => {
  const req = { headers: { 'content-type': type, 'content-length': '10' } } as never;
  expect(isPlainForm(req, 16 * 1024)).toBe(plain);
});

test.each([
  ['no Content-Length (chunked)', { 'transfer-encoding': 'chunked' }],
  ['a compressed body', { 'content-length': '10', 'content-encoding': 'gzip' }],
  ['a body over the limit', { 'content-length': String(16 * 1024 + 1) }],
  ['a Content-Length that is not a number', { 'content-length': '1e3' }],
])('%s goes to body-parser', (_name, headers) => {
  const req = { headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } } as never;
  expect(isPlainForm(req, 16 * 1024)).toBe(false);
});

test('a body a parser in front already read is left as it is', async () => {
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  app.post('/', createFormReader(50), (req, res) => res.json(req.body));
  const res = await request(app).post('/').type('form').send('a=1');
  expect(res.body).toEqual({ a: '1' });
});

test('a body cut off before its end is refused with 400, not left waiting', async () => {
  let refused!: (status: number) => void;
  const seen = new Promise<number>((resolve) => (refused = resolve));
  let received!: () => void;
  const partRead = new Promise<void>((resolve) => (received = resolve));
  const app = express();
  app.post(
    '/',
    (req, _res, next) => {
      req.once('data', () => received());
      next();
    },
    createFormReader(50),
    (_req, res) => res.json({}),
  );
  app.use(((error, _req, res, _next) => {
    refused(error.status);
    res.status(error.status).end();
  }) as express.ErrorRequestHandler);
  const host = await listenOnLoopback(app);
  try {
    const head =
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n';
    const cut = stall(host.port, head, 'a=1');
    // Once the server has read the part, the client goes away.
    await partRead;
    cut.socket.destroy();
    expect(await seen).toBe(400);
  } finally {
    host.close();
  }
});
