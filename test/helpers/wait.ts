// Polls a condition that something asynchronous (a socket event, another process) makes true, with a deadline so a
// test that waits for the wrong thing fails instead of hanging.
export async function waitUntil(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waitUntil: still false after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
