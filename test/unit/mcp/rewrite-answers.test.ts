// Rewriting the JSON-RPC responses of an SDK 2.x answer: one JSON document, or an event stream read chunk by chunk.
import fc from 'fast-check';
import {
  createEventStreamRewriter,
  rewriteJson,
  UnreadableAnswerError,
  type RpcAnswer,
} from '../../../lib/mcp/rewrite-answers';

/** Replaces the result of the response with id 1: the others pass as they are. */
const markOne = (answer: RpcAnswer): RpcAnswer =>
  answer.id === 1 ? { ...answer, result: 'rewritten' } : answer;

describe('rewriteJson', () => {
  test.each([
    ['one response', '{"jsonrpc":"2.0","id":1,"result":{}}', '{"jsonrpc":"2.0","id":1,"result":"rewritten"}'],
    ['another response', '{"jsonrpc":"2.0","id":2,"result":{}}', '{"jsonrpc":"2.0","id":2,"result":{}}'],
    [
      'a batch',
      '[{"jsonrpc":"2.0","id":2,"result":1},{"jsonrpc":"2.0","id":1,"result":1}]',
      '[{"jsonrpc":"2.0","id":2,"result":1},{"jsonrpc":"2.0","id":1,"result":"rewritten"}]',
    ],
    [
      'a request is not an answer',
      '{"jsonrpc":"2.0","id":1,"method":"x"}',
      '{"jsonrpc":"2.0","id":1,"method":"x"}',
    ],
    ['no id', '{"jsonrpc":"2.0","result":1}', '{"jsonrpc":"2.0","result":1}'],
    ['not an object', '"text"', '"text"'],
    ['null', 'null', 'null'],
    [
      'a batch with null in it',
      '[null,{"jsonrpc":"2.0","id":1,"result":1}]',
      '[null,{"jsonrpc":"2.0","id":1,"result":"rewritten"}]',
    ],
  ])('%s', (_name, text, expected) => {
    expect(rewriteJson(text, markOne)).toBe(expected);
  });

  test('JSON that does not parse is refused', () => {
    expect(() => rewriteJson('{"id":1', markOne)).toThrow(UnreadableAnswerError);
    expect(() => rewriteJson('{"id":1', markOne)).toThrow(
      'The MCP server answered with JSON that does not parse.',
    );
  });
});

/** All of `chunks` through one rewriter. */
const through = (chunks: string[]) => {
  const rewriter = createEventStreamRewriter(markOne);
  return chunks.map((chunk) => rewriter.push(chunk)).join('') + rewriter.end();
};

describe('createEventStreamRewriter', () => {
  test.each([
    [
      'an answer to rewrite, its other fields kept',
      'event: message\nid: 7\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
      'event: message\nid: 7\ndata: {"jsonrpc":"2.0","id":1,"result":"rewritten"}\n\n',
    ],
    [
      'an answer left as it is passes byte for byte',
      'event: message\r\ndata:{"jsonrpc":"2.0","id":2,"result":{}}\r\n\r\n',
      'event: message\r\ndata:{"jsonrpc":"2.0","id":2,"result":{}}\r\n\r\n',
    ],
    [
      'data over several lines, joined with LF',
      'data: {"jsonrpc":"2.0",\ndata: "id":1,"result":{}}\n\n',
      'data: {"jsonrpc":"2.0","id":1,"result":"rewritten"}\n\n',
    ],
    [
      'CR line ends',
      'data: {"jsonrpc":"2.0","id":1,"result":{}}\r\r',
      'data: {"jsonrpc":"2.0","id":1,"result":"rewritten"}\r\r',
    ],
    [
      'data with no space after the colon, rewritten',
      'data:{"jsonrpc":"2.0","id":1,"result":{}}\n\n',
      'data: {"jsonrpc":"2.0","id":1,"result":"rewritten"}\n\n',
    ],
    [
      'a bare data line is an empty line of data',
      'data: {"jsonrpc":"2.0","id":1,\ndata\ndata: "result":{}}\n\n',
      'data: {"jsonrpc":"2.0","id":1,"result":"rewritten"}\n\n',
    ],
    [
      'only the one space after the colon is dropped',
      'data:  {"jsonrpc":"2.0","id":1,"result":{}} \n\n',
      'data: {"jsonrpc":"2.0","id":1,"result":"rewritten"}\n\n',
    ],
    ['a comment (keep-alive) passes', ': keep-alive\n\n', ': keep-alive\n\n'],
    [
      'a notification passes',
      'data: {"jsonrpc":"2.0","method":"n"}\n\n',
      'data: {"jsonrpc":"2.0","method":"n"}\n\n',
    ],
    ['an event cut off at the end is not sent', 'data: {"jsonrpc":"2.0","id":1,"result":{}}\n', ''],
    ['blank lines at the end stay', '\n', '\n'],
  ])('%s', (_name, stream, expected) => {
    expect(through([stream])).toBe(expected);
  });

  test('an event whose data is not JSON is refused', () => {
    expect(() => through(['data: {"jsonrpc"\n\n'])).toThrow(UnreadableAnswerError);
    expect(() => through(['data: {"jsonrpc"\n\n'])).toThrow(
      'The MCP server sent an event whose data is not JSON.',
    );
  });

  test('a message that is not an answer is never handed to the rewrite', () => {
    const seen: unknown[] = [];
    const rewriter = createEventStreamRewriter((answer) => {
      seen.push(answer);
      return { ...answer, result: 'x' };
    });
    const stream = 'data: {"jsonrpc":"2.0","method":"n","id":3}\n\ndata: "text"\n\n';
    expect(rewriter.push(stream) + rewriter.end()).toBe(stream);
    expect(seen).toEqual([]);
  });

  test('its error is an UnreadableAnswerError by name', () => {
    expect(new UnreadableAnswerError('x').name).toBe('UnreadableAnswerError');
  });

  test('however the stream is cut into chunks, the output is the same (a CR LF split between two chunks too)', () => {
    const stream =
      'event: message\r\ndata: {"jsonrpc":"2.0","id":2,"result":{}}\r\n\r\n' +
      ': ping\r\r' +
      'data: {"jsonrpc":"2.0","id":2,"result":[]}\r\r' +
      ': ping\n\n' +
      'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n\n';
    const whole = through([stream]);
    expect(whole).toContain('"result":"rewritten"');
    expect(whole).not.toContain('"tools"');
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 8 }),
        (cuts) => {
          const at = [0, ...cuts.sort((a, b) => a - b), stream.length];
          const chunks = at.slice(1).map((end, i) => stream.slice(at[i], end));
          expect(through(chunks)).toBe(whole);
        },
      ),
      { seed: 20261128, numRuns: 300 },
    );
  });
});
