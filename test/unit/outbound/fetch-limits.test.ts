// The bound on outbound fetches at once: per host, in all, and the waiting line; a waiter leaves at its deadline.
// Deterministic: deadlines are AbortControllers the test aborts, and "still waiting" is read after the pending
// promise callbacks have run.
import { createFetchLimiter, DEFAULT_FETCH_LIMITS } from '../../../lib/outbound/fetch-limits';

/** Lets every callback already due run (promise jobs and immediates), without waiting on the clock. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** An acquire whose outcome the test can read at any time. */
function track(promise: Promise<(() => void) | undefined>) {
  const state: { done: boolean; release: (() => void) | undefined } = { done: false, release: undefined };
  void promise.then((release) => {
    state.done = true;
    state.release = release;
  });
  return state;
}

const never = () => new AbortController().signal;

describe('fetch limits', () => {
  test('the defaults are 4 per host, 32 in all', () => {
    expect(DEFAULT_FETCH_LIMITS).toEqual({ perHost: 4, total: 32, maxWaiting: 64 });
  });

  test('a fifth fetch to one host waits for a slot of that host; another host goes ahead', async () => {
    const limiter = createFetchLimiter();
    const first = Array.from({ length: 4 }, () => track(limiter.acquire('slow.example', never())));
    const fifth = track(limiter.acquire('slow.example', never()));
    const other = track(limiter.acquire('other.example', never()));
    await settle();
    expect(first.every((slot) => slot.release)).toBe(true);
    expect(fifth.done).toBe(false);
    expect(other.release).toBeDefined();
    first[0]!.release!();
    await settle();
    expect(fifth.release).toBeDefined();
  });

  test('the 33rd fetch in all waits, whatever its host, until one ends', async () => {
    const limiter = createFetchLimiter();
    const running = Array.from({ length: 32 }, (_, i) => track(limiter.acquire(`h${i}.example`, never())));
    const last = track(limiter.acquire('h32.example', never()));
    await settle();
    expect(running.every((slot) => slot.release)).toBe(true);
    expect(last.done).toBe(false);
    running[7]!.release!();
    await settle();
    expect(last.release).toBeDefined();
  });

  // Counted apart, each spelling of a host got slots of its own: 4 per spelling instead of 4 per host.
  test.each([
    ['with a trailing dot (an absolute name)', 'victim.test.'],
    ['in capitals', 'VICTIM.TEST'],
    ['in capitals with a trailing dot', 'Victim.Test.'],
  ])('a host spelt %s shares the slots of its plain spelling', async (_name, spelling) => {
    const limiter = createFetchLimiter({ perHost: 1, total: 32, maxWaiting: 64 });
    const holder = track(limiter.acquire('victim.test', never()));
    const respelt = track(limiter.acquire(spelling, never()));
    await settle();
    expect(holder.release).toBeDefined();
    expect(respelt.done).toBe(false);
    holder.release!();
    await settle();
    expect(respelt.release).toBeDefined();
    // And the other way round: the respelt holder's release frees the plain spelling's slot.
    const plain = track(limiter.acquire('victim.test', never()));
    await settle();
    expect(plain.done).toBe(false);
    respelt.release!();
    await settle();
    expect(plain.release).toBeDefined();
  });

  test('a waiter whose deadline passes leaves the line with no slot, and the slot goes to the next one', async () => {
    const limiter = createFetchLimiter({ perHost: 1, total: 32, maxWaiting: 64 });
    const holder = track(limiter.acquire('a.example', never()));
    const deadline = new AbortController();
    const impatient = track(limiter.acquire('a.example', deadline.signal));
    const patient = track(limiter.acquire('a.example', never()));
    await settle();
    deadline.abort();
    await settle();
    expect(impatient).toEqual({ done: true, release: undefined });
    expect(patient.done).toBe(false);
    holder.release!();
    await settle();
    expect(patient.release).toBeDefined();
  });

  test('a full waiting line refuses at once; an aborted deadline gets no slot', async () => {
    const limiter = createFetchLimiter({ perHost: 1, total: 1, maxWaiting: 1 });
    const holder = track(limiter.acquire('a.example', never()));
    const waiter = track(limiter.acquire('b.example', never()));
    expect(await limiter.acquire('c.example', never())).toBeUndefined();
    const aborted = new AbortController();
    aborted.abort();
    const free = createFetchLimiter();
    expect(await free.acquire('a.example', aborted.signal)).toBeUndefined();
    await settle();
    expect(waiter.done).toBe(false);
    holder.release!();
    await settle();
    expect(waiter.release).toBeDefined();
  });

  test('releasing twice frees one slot, not two', async () => {
    const limiter = createFetchLimiter({ perHost: 1, total: 1, maxWaiting: 8 });
    const holder = track(limiter.acquire('a.example', never()));
    const second = track(limiter.acquire('a.example', never()));
    const third = track(limiter.acquire('a.example', never()));
    await settle();
    holder.release!();
    holder.release!();
    await settle();
    expect(second.release).toBeDefined();
    expect(third.done).toBe(false);
  });
});
