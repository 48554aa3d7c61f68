// Rewrites the JSON-RPC responses in an HTTP answer of the MCP SDK 2.x, whose handler hands back a Web Response: one
// JSON document, or an event stream (the SDK's stateless 2025-era leg always streams, and its 2026-07-28 leg streams
// once a tool sends a notification). Used to filter tools/list answers to a token's tools. It fails closed: an
// answer that should carry a rewritten response but cannot be read is not passed on as it is.

/** A JSON-RPC response with an id, as rewrite functions receive and return it. */
export interface RpcAnswer {
  jsonrpc: '2.0';
  id: string | number;
  result?: unknown;
  error?: unknown;
}

/** Given a JSON-RPC value of the answer: the value to send instead (itself when nothing changes). */
export type Rewrite = (answer: RpcAnswer) => RpcAnswer;

/** The answer could not be read to apply a rewrite it needs: it is not sent. */
export class UnreadableAnswerError extends Error {
  override readonly name = 'UnreadableAnswerError';
}

const isAnswer = (value: unknown): value is RpcAnswer =>
  typeof value === 'object' && value !== null && 'id' in value && !('method' in value);

/** Applies `rewrite` to a JSON document: one response or a batch of them. */
export function rewriteJson(text: string, rewrite: Rewrite): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UnreadableAnswerError('The MCP server answered with JSON that does not parse.');
  }
  const one = (item: unknown) => (isAnswer(item) ? rewrite(item) : item);
  return JSON.stringify(Array.isArray(value) ? value.map(one) : one(value));
}

/**
 * An event stream's rewriter: `push` takes the next chunk of text and returns what can be sent of it so far (every
 * event completed by it), `end` returns the rest. Events follow the HTML event-stream format: lines end with CRLF,
 * LF or CR, a blank line ends an event, and an event's data is its `data:` lines joined with LF. An event whose
 * data is a JSON-RPC response is written back with one `data:` line after its other fields; any other event is
 * passed on byte for byte.
 */
export function createEventStreamRewriter(rewrite: Rewrite): { push(text: string): string; end(): string } {
  let buffer = '';
  // A line end; a CR last in the buffer may be the first half of a CR LF still to come, so it ends no line yet.
  const BLANK_LINE = /(?:\r\n|\r(?!\n|$)|\n)(?:\r\n|\r(?!\n|$)|\n)/;
  // At the end of the stream, it does.
  const LAST_BLANK_LINE = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)/;

  function rewriteEvent(event: string): string {
    const lines = event.split(/\r\n|\r|\n/);
    const data: string[] = [];
    const others: string[] = [];
    for (const line of lines) {
      if (line === 'data' || line.startsWith('data:')) {
        const value = line.slice(5);
        data.push(value.startsWith(' ') ? value.slice(1) : value);
      } else others.push(line);
    }
    if (data.length === 0) return event;
    let value: unknown;
    try {
      value = JSON.parse(data.join('\n'));
    } catch {
      throw new UnreadableAnswerError('The MCP server sent an event whose data is not JSON.');
    }
    if (!isAnswer(value)) return event;
    const rewritten = rewrite(value);
    if (rewritten === value) return event;
    return [...others, `data: ${JSON.stringify(rewritten)}`].join('\n');
  }

  /** Every event the buffer completes, rewritten, with the blank line that ends it. */
  function take(blankLine: RegExp): string {
    let out = '';
    for (let match = blankLine.exec(buffer); match; match = blankLine.exec(buffer)) {
      const end = match.index + match[0].length;
      out += rewriteEvent(buffer.slice(0, match.index)) + buffer.slice(match.index, end);
      buffer = buffer.slice(end);
    }
    return out;
  }

  return {
    push(text) {
      buffer += text;
      return take(BLANK_LINE);
    },
    end() {
      const out = take(LAST_BLANK_LINE);
      // A stream cut off mid-event: that event was never dispatched to the client, and is not now.
      const rest = buffer;
      buffer = '';
      return out + (rest.trim() === '' ? rest : '');
    },
  };
}
