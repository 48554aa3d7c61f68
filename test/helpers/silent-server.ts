// A TCP server on 127.0.0.1 that accepts connections and never says a word: to an https client, a TLS handshake
// that never ends (the ClientHello goes unanswered). It counts connections, those open at once, and tells a test
// when the n-th one arrives or closes, so a test waits on events, not on the clock.
import { createServer, type AddressInfo, type Socket } from 'node:net';

export interface SilentServer {
  port: number;
  /** Every connection accepted so far, in order. */
  readonly sockets: readonly Socket[];
  /** The most connections that were open at the same time. */
  readonly maxOpen: number;
  /** Resolves once `count` connections have been accepted in all. */
  connections(count: number): Promise<void>;
  /** Resolves once the accepted socket at `index` has closed (from either side). */
  closed(index: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const sockets: Socket[] = [];
  const closes: Array<Promise<void>> = [];
  const waiting: Array<{ count: number; resolve(): void }> = [];
  let open = 0;
  let maxOpen = 0;
  const server = createServer((socket) => {
    sockets.push(socket);
    open += 1;
    maxOpen = Math.max(maxOpen, open);
    socket.on('error', () => undefined);
    // Read (and drop) what the client sends, the ClientHello included, so that its hanging up is seen at once.
    socket.resume();
    closes.push(new Promise((resolve) => socket.once('close', () => resolve())));
    socket.once('close', () => (open -= 1));
    for (const waiter of waiting.filter((entry) => sockets.length >= entry.count)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    sockets,
    get maxOpen() {
      return maxOpen;
    },
    connections: (count) =>
      sockets.length >= count
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ count, resolve })),
    closed: (index) => closes[index]!,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
