// Polls a condition that something asynchronous (a socket event, another process) makes true, with a deadline so a
// test that waits for the wrong thing fails instead of hanging. The deadline is also how a test states a bound ("the
// other instance sees it within a second"): the wait fails, naming what it waited for, once the bound has passed.
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  what = 'the condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`waitUntil: ${what} still false after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
