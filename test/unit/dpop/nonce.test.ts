// Server nonces (RFC 9449 §8): the current one and the one before are accepted, nothing else; instances that share
// the secret agree; another secret's nonces are refused.
import { createDpopNonces, NONCE_PERIOD_MS } from '../../../lib/dpop/nonce';

const SECRET = Buffer.alloc(32, 7);
const START = 1_800_000_000_000 - (1_800_000_000_000 % NONCE_PERIOD_MS);

function clock(at = START) {
  const state = { now: at };
  return { state, now: () => state.now };
}

test('a nonce is accepted in its period and the next one, and refused after', () => {
  const { state, now } = clock();
  const nonces = createDpopNonces(SECRET, now);
  const first = nonces.current();
  expect(nonces.accepts(first)).toBe(true);
  state.now += NONCE_PERIOD_MS - 1;
  expect(nonces.current()).toBe(first);
  state.now += 1;
  const second = nonces.current();
  expect(second).not.toBe(first);
  expect(nonces.accepts(first)).toBe(true);
  expect(nonces.accepts(second)).toBe(true);
  state.now += NONCE_PERIOD_MS;
  expect(nonces.accepts(first)).toBe(false);
  expect(nonces.accepts(second)).toBe(true);
});

test('instances with one secret agree; another secret’s nonce is refused', () => {
  const { now } = clock();
  const one = createDpopNonces(SECRET, now);
  const two = createDpopNonces(Buffer.from(SECRET), now);
  const other = createDpopNonces(Buffer.alloc(32, 8), now);
  expect(two.accepts(one.current())).toBe(true);
  expect(other.accepts(one.current())).toBe(false);
});

test.each([[undefined], [null], [42], [''], [['a']], ['not-a-nonce']])('refused: %p', (value) => {
  const nonces = createDpopNonces(SECRET, clock().now);
  expect(nonces.accepts(value)).toBe(false);
});

test('a nonce from the future (a period not begun) is refused', () => {
  const { state, now } = clock();
  const nonces = createDpopNonces(SECRET, now);
  state.now += NONCE_PERIOD_MS;
  const later = nonces.current();
  state.now -= NONCE_PERIOD_MS;
  expect(nonces.accepts(later)).toBe(false);
});
