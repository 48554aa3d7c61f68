// The lean transport: the SDK's public Transport interface, answering a stateless request with JSON written straight
// to the Node response. The SDK's StreamableHTTPServerTransport turns every Node request into a Web Request and its
// answer back (through @hono/node-server, built per request) to answer one JSON message with one JSON message; this
// transport takes the message the handler already read and checked, hands it to the pooled server, and writes the
// answers it collects. One per pooled server, connected once and reused: a stateless exchange needs no stream, no
// session and no per-request object beyond the exchange itself.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the SDK's Protocol passes with each incoming message (MessageExtraInfo). */
interface MessageExtra {
  authInfo?: unknown;
  requestInfo?: { headers: Record<string, string | string[] | undefined>; url?: URL };
}

/** The SDK's Transport, as Protocol.connect drives it. */
export interface LeanTransport {
  onmessage?: (message: unknown, extra?: MessageExtra) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly sessionId: undefined;
  start(): Promise<void>;
  send(message: unknown, options?: unknown): Promise<void>;
  close(): Promise<void>;
  /** Whether a server is connected to it now. */
  readonly connected: boolean;
  /**
   * Serves one request's messages: dispatches them to the connected server and resolves once the answer is written
   * to `res` (200 with the responses, or 202 when the messages hold no request). `answer` may rewrite a response
   * before it is written (the tools/list filter).
   */
  exchange(
    messages: readonly unknown[],
    req: IncomingMessage,
    res: ServerResponse,
    authInfo: unknown,
    answer?: (response: Response) => Response,
  ): Promise<void>;
}

/** A JSON-RPC response as the SDK sends it: an id and a result or an error. */
export interface Response {
  jsonrpc: '2.0';
  id: string | number;
  result?: unknown;
  error?: unknown;
}

interface Exchange {
  /** Where each pending request's answer goes, in the order of the requests. */
  slots: Map<unknown, number>;
  answers: unknown[];
  remaining: number;
  res: ServerResponse;
  answer?: (response: Response) => Response;
  done(): void;
  fail(error: Error): void;
}

/** Why a stateless server cannot ask the client anything. */
export const NO_REQUESTS_TO_CLIENT =
  'This stateless MCP endpoint cannot send requests to the client (sampling, elicitation, roots): the answer ' +
  'would come back on another HTTP request, to another server.';

/** Whether a JSON-RPC message is a request: a method and an id. */
export const isRequest = (message: unknown) => {
  const { id, method } = message as { id?: unknown; method?: unknown };
  return method !== undefined && id !== undefined;
};

/**
 * What the SDK's transport tells handlers of the request (extra.requestInfo), built when a handler reads it: the
 * headers as a Web Headers object lists them (lowercase names in order, repeated ones joined with ', ') and the URL
 * with the scheme of the connection.
 */
function requestInfo(req: IncomingMessage): MessageExtra['requestInfo'] {
  let headers: Record<string, string> | undefined;
  let url: URL | undefined;
  return {
    get headers() {
      if (headers === undefined) {
        const joined = new Map<string, string>();
        const raw = req.rawHeaders;
        for (let i = 0; i < raw.length; i += 2) {
          const name = raw[i]!.toLowerCase();
          const previous = joined.get(name);
          joined.set(name, previous === undefined ? raw[i + 1]! : `${previous}, ${raw[i + 1]!}`);
        }
        headers = Object.fromEntries([...joined].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      }
      return headers;
    },
    get url() {
      const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
      url ??= new URL(req.url ?? '/', `${scheme}://${req.headers.host ?? 'localhost'}`);
      return url;
    },
  };
}

export function createLeanTransport(): LeanTransport {
  let current: Exchange | undefined;
  let connected = false;

  const transport: LeanTransport = {
    sessionId: undefined,
    get connected() {
      return connected;
    },
    start() {
      connected = true;
      return Promise.resolve();
    },
    send(message) {
      const response = message as Response & { method?: unknown };
      if (response.method === undefined && response.id !== undefined) {
        const exchange = current;
        const slot = exchange?.slots.get(response.id);
        // An answer to no request of this exchange has nowhere to go (the SDK's transport throws the same way).
        if (exchange === undefined || slot === undefined)
          return Promise.reject(new Error(`No request ${String(response.id)} is waiting for this answer.`));
        exchange.slots.delete(response.id);
        exchange.answers[slot] = exchange.answer ? exchange.answer(response) : response;
        exchange.remaining -= 1;
        if (exchange.remaining === 0) {
          current = undefined;
          exchange.done();
        }
        return Promise.resolve();
      }
      // A server-to-client request (sampling, elicitation, roots) is answered at once with an error, so the tool
      // fails fast: the client's answer would come on another HTTP request, to another pooled server, and never reach
      // the tool. Answered through the server's own message handling, so that it forgets the request (a rejected
      // send would leave its response handler behind on a server that stays connected).
      if (isRequest(message)) {
        const { id } = message as { id: string | number };
        const deliver = transport.onmessage;
        queueMicrotask(() =>
          deliver?.({ jsonrpc: '2.0', id, error: { code: -32601, message: NO_REQUESTS_TO_CLIENT } }),
        );
        return Promise.resolve();
      }
      // A notification (progress, logging) has no place in a JSON answer, which holds responses only
      // (the Streamable HTTP transport's JSON mode drops them too).
      return Promise.resolve();
    },
    close() {
      const exchange = current;
      current = undefined;
      const wasConnected = connected;
      connected = false;
      exchange?.fail(new Error('The MCP server closed before it answered.'));
      if (wasConnected) {
        const onclose = transport.onclose;
        // Protocol.connect wraps these each time: cleared, so that the next connect does not wrap them again.
        transport.onmessage = transport.onclose = transport.onerror = undefined;
        onclose?.();
      }
      return Promise.resolve();
    },
    exchange(messages, req, res, authInfo, answer) {
      const deliver = transport.onmessage;
      if (!connected || deliver === undefined)
        return Promise.reject(new Error('The lean transport is not connected to a server.'));
      if (current !== undefined)
        return Promise.reject(new Error('The lean transport serves one request at a time.'));
      const extra = { authInfo, requestInfo: requestInfo(req) };
      const slots = new Map<unknown, number>();
      for (const message of messages)
        if (isRequest(message)) slots.set((message as { id: unknown }).id, slots.size);
      if (slots.size === 0) {
        // Notifications and responses only: accepted with 202 and no body (MCP Streamable HTTP, sending messages).
        for (const message of messages) deliver(message, extra);
        res.statusCode = 202;
        res.end();
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => {
        const answers: unknown[] = new Array(slots.size);
        current = {
          slots,
          answers,
          remaining: slots.size,
          res,
          answer,
          done() {
            // One request, one object; several, an array in the order of the requests (as the SDK's transport).
            const body = JSON.stringify(answers.length === 1 ? answers[0] : answers);
            res.statusCode = 200;
            res.setHeader('Content-Type', 'application/json');
            res.end(body);
            resolve();
          },
          fail: reject,
        };
        try {
          for (const message of messages) deliver(message, extra);
        } catch (error) {
          current = undefined;
          reject(error);
        }
      });
    },
  };
  return transport;
}
