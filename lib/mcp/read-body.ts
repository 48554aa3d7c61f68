// The body of an MCP request, read once, here, whatever ran before: the scope gate and the SDK must judge the same
// message. A JSON parser that skips a request (a Content-Type it does not recognise, such as `application/json`
// followed by a non-breaking space) leaves the stream unread, and the SDK's transport, given no parsed body, reads
// and parses it itself: the gate would see nothing while the tool runs. So the body is read and parsed here, and
// the SDK is always handed the parsed value; what cannot be read as UTF-8 JSON under an unambiguous
// `application/json` is refused before any server is taken.
import type { Request } from 'express';

/** A request refused before it reaches the SDK: an HTTP status and a JSON-RPC error (JSON-RPC 2.0 §5.1). */
export class McpRequestError extends Error {
  override readonly name = 'McpRequestError';
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    /** Whether the connection must close: the rest of the body was not read, so it cannot carry another request. */
    readonly closeConnection = false,
  ) {
    super(message);
  }
}

export interface BodyLimits {
  /** The largest body, in bytes. */
  maxBytes: number;
  /** How long the whole body may take to arrive, in milliseconds. */
  timeoutMs: number;
}

// RFC 9110 §5.6.2 token and §5.6.4 quoted-string; §5.6.3 optional white space is SP and HTAB only (String#trim would
// also drop U+00A0, the byte that one JSON parser skips and another trims).
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const PARAMETER = new RegExp(
  `^[ \\t]*(${TOKEN})=(${TOKEN}|"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\t \\x21-\\x7e])*")[ \\t]*$`,
);
const JSON_TYPE = /^[ \t]*application\/json[ \t]*$/i;

/**
 * Why a Content-Type is not one this handler reads, or undefined when it is: exactly one header, media type
 * application/json (any case), well-formed parameters, and a charset, if any, of UTF-8 (RFC 8259 §8.1).
 */
export function contentTypeProblem(req: Request): string | undefined {
  const raw = req.rawHeaders;
  let header: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'content-type') continue;
    if (header !== undefined) return 'Content-Type must be sent once';
    header = raw[i + 1]!;
  }
  if (header === undefined) return 'Content-Type must be application/json';
  const [type, ...parameters] = header.split(';');
  if (!JSON_TYPE.test(type!)) return 'Content-Type must be application/json';
  for (const parameter of parameters) {
    const match = PARAMETER.exec(parameter);
    if (!match) return 'the Content-Type parameters are malformed';
    // Stryker disable next-line Regex: equivalent, a quoted value holds no bare quote (PARAMETER wants it escaped)
    const value = match[2]!.replace(/^"|"$/g, '').toLowerCase();
    if (match[1]!.toLowerCase() === 'charset' && value !== 'utf-8' && value !== 'utf8')
      return 'the charset must be UTF-8';
  }
  return undefined;
}

/** Reads the raw body: at most `maxBytes`, within `timeoutMs`, identity encoding only. */
function readRaw(req: Request, { maxBytes, timeoutMs }: BodyLimits): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity')
    return Promise.reject(new McpRequestError(415, -32000, 'Content-Encoding is not supported.', true));
  const tooLarge = () =>
    new McpRequestError(413, -32000, `The request body is larger than ${maxBytes} bytes.`, true);
  if (Number(req.headers['content-length']) > maxBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: McpRequestError | undefined) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (!error) return resolve(Buffer.concat(chunks, size));
      // What is left of the body is not read: pause, so that nothing more is buffered for it.
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return finish(tooLarge());
      chunks.push(chunk);
    };
    const onEnd = () => finish(undefined);
    const onAborted = () => finish(new McpRequestError(400, -32000, 'The request was aborted.', true));
    const onError = onAborted;
    // Node's own request timeout is 300 s; a body that trickles in would hold the request that long.
    const timer = setTimeout(
      () =>
        finish(
          new McpRequestError(408, -32000, `The request body did not arrive within ${timeoutMs} ms.`, true),
        ),
      timeoutMs,
    );
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
    req.resume();
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses UTF-8 JSON as the SDK's own reader would (TextDecoder drops one leading BOM); invalid UTF-8 is refused. */
function parseJson(bytes: Buffer | string): unknown {
  try {
    return JSON.parse(typeof bytes === 'string' ? bytes.replace(/^\uFEFF/, '') : utf8.decode(bytes));
  } catch {
    throw new McpRequestError(400, -32700, 'Parse error: the body is not UTF-8 JSON.');
  }
}

/**
 * The request's JSON value. The body is read here unless a parser ran before this handler: then a JSON parser's
 * object or array is taken as it is (it read these same bytes as JSON), a raw or text parser's bytes are parsed
 * here, and anything else is refused rather than guessed at.
 */
export async function readJsonBody(req: Request, limits: BodyLimits): Promise<unknown> {
  const problem = contentTypeProblem(req);
  if (problem) throw new McpRequestError(415, -32000, `Unsupported Media Type: ${problem}.`);
  const parsedBefore = (req as { _body?: unknown })._body === true || req.readableEnded;
  if (!parsedBefore) return parseJson(await readRaw(req, limits));
  const { body } = req as { body?: unknown };
  if (Buffer.isBuffer(body) || typeof body === 'string') return parseJson(body);
  const plain = typeof body === 'object' && body !== null && Object.getPrototypeOf(body) === Object.prototype;
  if (plain || Array.isArray(body)) return body;
  throw new McpRequestError(
    400,
    -32700,
    'Parse error: the body was read by a parser before this handler, and not as JSON. Mount createMcpEndpoint ' +
      'without a body parser in front of it.',
  );
}
