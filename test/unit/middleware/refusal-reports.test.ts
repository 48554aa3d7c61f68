// Rate-limit refusals become events once per key and window, with a count; the memory of keys is bounded.
import { createRefusalReports } from '../../../lib/middleware/refusal-reports';
import { createFakeClock, MINUTE, SECOND } from '../../helpers/clock';

const WINDOW = 15 * MINUTE;
/** A refusal: when (milliseconds after the start) and for which key. */
type Refusal = [at: number, key: string];

test.each<[string, Refusal[], number[]]>([
  ['the first refusal of a key', [[0, 'a']], [1]],
  [
    '30 refusals in one window: one report',
    Array.from({ length: 30 }, (_, i): Refusal => [i * SECOND, 'a']),
    [1],
  ],
  [
    'each key on its own',
    [
      [0, 'a'],
      [0, 'b'],
      [1, 'a'],
      [1, 'b'],
    ],
    [1, 1],
  ],
  [
    'the next window reports again, counting what was held back',
    [
      [0, 'a'],
      [SECOND, 'a'],
      [2 * SECOND, 'a'],
      [WINDOW, 'a'],
    ],
    [1, 3],
  ],
  [
    'a window ends at its start plus its length, not before',
    [
      [0, 'a'],
      [WINDOW - 1, 'a'],
      [WINDOW, 'a'],
    ],
    [1, 2],
  ],
  [
    'a key that stopped is reported afresh later',
    [
      [0, 'a'],
      [10 * WINDOW, 'a'],
    ],
    [1, 1],
  ],
])('%s', (_name, refusals, reported) => {
  const clock = createFakeClock();
  const start = clock.now();
  const reports = createRefusalReports(WINDOW, clock.now);
  const counts: number[] = [];
  for (const [at, key] of refusals) {
    clock.set(start + at);
    const count = reports.refused(key);
    if (count !== undefined) counts.push(count);
  }
  expect(counts).toEqual(reported);
});

test('an attacker rotating addresses cannot grow the memory: the oldest key is forgotten first', () => {
  const clock = createFakeClock();
  const reports = createRefusalReports(WINDOW, clock.now, 100);
  expect(reports.refused('victim')).toBe(1);
  expect(reports.refused('victim')).toBeUndefined();
  for (let i = 0; i < 1000; i += 1) {
    expect(reports.refused(`rotated-${i}`)).toBe(1);
    expect(reports.size()).toBeLessThanOrEqual(100);
  }
  // Forgotten: reported again (its held-back count is lost with it), at most once more per window.
  expect(reports.refused('victim')).toBe(1);
  expect(reports.refused('victim')).toBeUndefined();
  expect(reports.refused('rotated-999')).toBeUndefined();
});
