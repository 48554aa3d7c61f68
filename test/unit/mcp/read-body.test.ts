// Reading an MCP request's body, alone: the Content-Type rule, the limits, and what a parser that ran before leaves.
import { Readable } from 'node:stream';
import type { Request } from 'express';
import { contentTypeProblem, McpRequestError, readJsonBody } from '../../../lib/mcp/read-body';

const LIMITS = { maxBytes: 64, timeoutMs: 1000 };

/** A request whose body is `chunks`, with these raw headers (name, value pairs). */
function fakeRequest(
  chunks: Array<string | Buffer> | 'never ends',
  rawHeaders: string[] = ['Content-Type', 'application/json'],
  extra: Record<string, unknown> = {},
): Request {
  const stream =
    chunks === 'never ends'
      ? new Readable({ read() {} })
      : Readable.from(
          chunks.map((chunk) => Buffer.from(chunk)),
          { objectMode: false },
        );
  const headers: Record<string, string> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) headers[rawHeaders[i]!.toLowerCase()] = rawHeaders[i + 1]!;
  return Object.assign(stream, { rawHeaders, headers }, extra) as unknown as Request;
}

const failure = async (work: Promise<unknown>) => {
  const error = (await work.then(
    () => undefined,
    (caught: unknown) => caught,
  )) as McpRequestError;
  expect(error).toBeInstanceOf(McpRequestError);
  expect(error.name).toBe('McpRequestError');
  return { status: error.status, code: error.code, message: error.message, close: error.closeConnection };
};

describe('contentTypeProblem', () => {
  test.each([
    ['application/json', undefined],
    ['APPLICATION/JSON', undefined],
    [' \tapplication/json \t', undefined],
    ['application/json; charset=utf-8', undefined],
    ['application/json;charset=UTF-8', undefined],
    ['application/json; charset="utf-8"', undefined],
    ['application/json; charset=utf8', undefined],
    // A quoted ";" is legal (RFC 9110 §5.6.4) but no MCP client sends one: refused, on the safe side.
    ['application/json; a=b; c="d;e"', 'the Content-Type parameters are malformed'],
    ['application/json; a="x\\"y"', undefined],
    ['application/json\xa0', 'Content-Type must be application/json'],
    ['\xa0application/json', 'Content-Type must be application/json'],
    ['application/jsonx', 'Content-Type must be application/json'],
    ['xapplication/json', 'Content-Type must be application/json'],
    ['text/plain', 'Content-Type must be application/json'],
    ['', 'Content-Type must be application/json'],
    ['application/json; charset=latin1', 'the charset must be UTF-8'],
    ['application/json; CHARSET="UTF-16"', 'the charset must be UTF-8'],
    ['application/json; charset', 'the Content-Type parameters are malformed'],
    ['application/json; charset=', 'the Content-Type parameters are malformed'],
    ['application/json;', 'the Content-Type parameters are malformed'],
    ['application/json; a=b c', 'the Content-Type parameters are malformed'],
    ['application/json; a="unclosed', 'the Content-Type parameters are malformed'],
    ['application/json; a=b\xa0', 'the Content-Type parameters are malformed'],
    ['application/json; =b', 'the Content-Type parameters are malformed'],
  ])('%j: %s', (header, problem) => {
    expect(contentTypeProblem(fakeRequest([], ['Content-Type', header]))).toBe(problem);
  });

  test.each([
    [['Accept', 'application/json'], 'Content-Type must be application/json'],
    [
      ['content-type', 'application/json', 'CONTENT-TYPE', 'application/json'],
      'Content-Type must be sent once',
    ],
    [['Host', 'x', 'content-TYPE', 'application/json'], undefined],
  ])('raw headers %j: %s', (raw, problem) => {
    expect(contentTypeProblem(fakeRequest([], raw))).toBe(problem);
  });
});

describe('readJsonBody reading the stream itself', () => {
  test('JSON in several chunks, with multi-byte characters split between them', async () => {
    const bytes = Buffer.from('{"name":"café ☕"}');
    const req = fakeRequest([bytes.subarray(0, 13), bytes.subarray(13)]);
    await expect(readJsonBody(req, LIMITS)).resolves.toEqual({ name: 'café ☕' });
  });

  test('one leading UTF-8 byte order mark is dropped, as the SDK reader does', async () => {
    await expect(readJsonBody(fakeRequest(['\ufeff[1]']), LIMITS)).resolves.toEqual([1]);
  });

  test.each([
    [
      '415 for a Content-Type it does not read',
      ['x'],
      ['Content-Type', 'text/plain'],
      {
        status: 415,
        code: -32000,
        message: 'Unsupported Media Type: Content-Type must be application/json.',
        close: false,
      },
    ],
    [
      'a compressed body',
      ['x'],
      ['Content-Type', 'application/json', 'Content-Encoding', 'gzip'],
      { status: 415, code: -32000, message: 'Content-Encoding is not supported.', close: true },
    ],
    [
      'a declared length over the limit, before reading',
      ['x'],
      ['Content-Type', 'application/json', 'Content-Length', '65'],
      { status: 413, code: -32000, message: 'The request body is larger than 64 bytes.', close: true },
    ],
    [
      'an undeclared body over the limit',
      ['x'.repeat(40), 'y'.repeat(25)],
      ['Content-Type', 'application/json'],
      { status: 413, code: -32000, message: 'The request body is larger than 64 bytes.', close: true },
    ],
    [
      'invalid UTF-8 inside a JSON string',
      [Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d])],
      ['Content-Type', 'application/json'],
      { status: 400, code: -32700, message: 'Parse error: the body is not UTF-8 JSON.', close: false },
    ],
    [
      'not JSON',
      ['{"a":'],
      ['Content-Type', 'application/json'],
      { status: 400, code: -32700, message: 'Parse error: the body is not UTF-8 JSON.', close: false },
    ],
    [
      'an empty body',
      [],
      ['Content-Type', 'application/json'],
      { status: 400, code: -32700, message: 'Parse error: the body is not UTF-8 JSON.', close: false },
    ],
  ])('%s', async (_name, chunks, raw, expected) => {
    expect(await failure(readJsonBody(fakeRequest(chunks as string[], raw as string[]), LIMITS))).toEqual(
      expected,
    );
  });

  test('a body read in full leaves no listener behind', async () => {
    const req = fakeRequest(['{}']);
    await expect(readJsonBody(req, LIMITS)).resolves.toEqual({});
    for (const event of ['data', 'end', 'error', 'aborted']) expect(req.listenerCount(event)).toBe(0);
  });

  test('exactly the limit is read', async () => {
    const body = `"${'x'.repeat(62)}"`;
    await expect(readJsonBody(fakeRequest([body]), LIMITS)).resolves.toBe('x'.repeat(62));
    const declared = fakeRequest([body], ['Content-Type', 'application/json', 'Content-Length', '64']);
    await expect(readJsonBody(declared, LIMITS)).resolves.toBe('x'.repeat(62));
  });

  test('identity encoding is read, in any case and spacing', async () => {
    const req = fakeRequest(['{}'], ['Content-Type', 'application/json', 'Content-Encoding', ' Identity ']);
    await expect(readJsonBody(req, LIMITS)).resolves.toEqual({});
  });

  describe('on a fake clock', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    test('a body that does not arrive within the timeout is 408, and the stream is left paused', async () => {
      const req = fakeRequest('never ends');
      const reading = failure(readJsonBody(req, LIMITS));
      req.push(Buffer.from('{"a":'));
      jest.advanceTimersByTime(999);
      await Promise.resolve();
      jest.advanceTimersByTime(1);
      expect(await reading).toEqual({
        status: 408,
        code: -32000,
        message: 'The request body did not arrive within 1000 ms.',
        close: true,
      });
      expect(req.isPaused()).toBe(true);
      expect(req.listenerCount('data')).toBe(0);
    });

    test('a body that arrives in time clears its timer', async () => {
      const req = fakeRequest('never ends');
      const reading = readJsonBody(req, LIMITS);
      req.push(Buffer.from('[1]'));
      req.push(null);
      await expect(reading).resolves.toEqual([1]);
      expect(jest.getTimerCount()).toBe(0);
    });

    test.each(['aborted', 'error'])(
      'a request that emits %s is refused and its listeners removed',
      async (event) => {
        const req = fakeRequest('never ends');
        req.on('error', () => undefined);
        const reading = failure(readJsonBody(req, LIMITS));
        req.emit(event, new Error('gone'));
        expect(await reading).toEqual({
          status: 400,
          code: -32000,
          message: 'The request was aborted.',
          close: true,
        });
        expect(req.listenerCount('end')).toBe(0);
        expect(jest.getTimerCount()).toBe(0);
      },
    );
  });
});

describe('readJsonBody after a parser that ran before', () => {
  const consumed = (body: unknown, flags: Record<string, unknown> = { _body: true }) => {
    const req = fakeRequest('never ends', ['Content-Type', 'application/json'], { body, ...flags });
    return req;
  };

  test.each([
    ["a JSON parser's object", { a: 1 }, { a: 1 }],
    ["a JSON parser's array", [1, 2], [1, 2]],
    ["a raw parser's bytes", Buffer.from('{"b":2}'), { b: 2 }],
    ["a text parser's string", '\ufeff{"c":3}', { c: 3 }],
    ["a text parser's string with a BOM inside a value (kept)", '["\ufeff"]', ['\ufeff']],
  ])('%s is taken', async (_name, body, expected) => {
    await expect(readJsonBody(consumed(body), LIMITS)).resolves.toEqual(expected);
  });

  test('a stream that ended without the body-parser flag counts as read too', async () => {
    const req = fakeRequest(['ignored'], ['Content-Type', 'application/json'], { body: { d: 4 } });
    req.resume();
    await new Promise((resolve) => req.once('end', resolve));
    await expect(readJsonBody(req, LIMITS)).resolves.toEqual({ d: 4 });
  });

  test.each([
    ['nothing', undefined],
    ['null', null],
    ['a number', 5],
    ["a null-prototype object (a query-string parser's)", Object.assign(Object.create(null), { a: '1' })],
    ['a class instance', new Map()],
  ])('%s is refused rather than guessed at', async (_name, body) => {
    expect(await failure(readJsonBody(consumed(body), LIMITS))).toEqual({
      status: 400,
      code: -32700,
      message:
        'Parse error: the body was read by a parser before this handler, and not as JSON. Mount createMcpEndpoint ' +
        'without a body parser in front of it.',
      close: false,
    });
  });

  test("a text parser's string that is not JSON is a parse error", async () => {
    expect(await failure(readJsonBody(consumed('{'), LIMITS))).toMatchObject({
      status: 400,
      code: -32700,
      message: 'Parse error: the body is not UTF-8 JSON.',
    });
  });

  test('the Content-Type is checked first, whatever a parser did', async () => {
    const req = fakeRequest('never ends', ['Content-Type', 'text/plain'], { body: { a: 1 }, _body: true });
    expect(await failure(readJsonBody(req, LIMITS))).toMatchObject({ status: 415 });
  });
});
