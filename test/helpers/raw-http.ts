// Raw HTTP/1.1 on loopback: the bytes exactly as a test writes them (header bytes no HTTP client would send, a body
// that stops halfway), and the status and body as the server answered.
import { createServer, type RequestListener } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** The answer to one request, read until the server closes the connection. */
function readAnswer(socket: Socket): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0),
        headers: text.slice(0, split),
        body: text.slice(split + 4),
      });
    });
  });
}

/**
 * What two answers to the same request must share: status, body and the sorted header lines, minus the named headers
 * (lower case) that legitimately differ between two requests, such as `date`.
 */
export function comparable(answer: RawAnswer, ignored: readonly string[]) {
  return {
    status: answer.status,
    body: answer.body,
    headers: answer.headers
      .split('\r\n')
      .slice(1)
      .filter((line) => !ignored.includes(line.slice(0, line.indexOf(':')).toLowerCase()))
      .sort(),
  };
}

const bytes = (value: Buffer | string) => (typeof value === 'string' ? Buffer.from(value, 'latin1') : value);

/**
 * Sends `head` and `body` (strings as latin1 bytes) and waits for the server to close the connection (send
 * `Connection: close`). It does not half-close: Node's server destroys a response whose client sent FIN.
 */
export function exchange(
  port: number,
  head: Buffer | string,
  body: Buffer | string = '',
): Promise<RawAnswer> {
  const socket = connect(port, '127.0.0.1');
  const answer = readAnswer(socket);
  socket.write(Buffer.concat([bytes(head), bytes(body)]));
  return answer;
}

/** Sends `head` and the first part of a body, and keeps the connection open: a body that never finishes. */
export function stall(
  port: number,
  head: string,
  part: string,
): { socket: Socket; answer: Promise<RawAnswer> } {
  const socket = connect(port, '127.0.0.1');
  const answer = readAnswer(socket);
  socket.write(head + part);
  return { socket, answer };
}

/** Serves `app` on a free loopback port: its port, and how to stop it. */
export async function listenOnLoopback(app: RequestListener): Promise<{ port: number; close(): void }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}
