// What changes in the edit loop (`npm run test:fast`, which sets TEST_FAST_LOOP in test/helpers/fast-loop.js) and
// nowhere else: `npm test` runs every test as written.

/** True in `npm run test:fast`. */
export const inEditLoop = process.env.TEST_FAST_LOOP === '1';

/**
 * `test` for a test that waits on real time: a stall held to a deadline, a growing delay, a slot freed only when a
 * timer fires. Such a test spends a second or more doing nothing, and is the first to flake on a loaded machine, so
 * the edit loop skips it (it is listed as skipped) and `npm test` runs it.
 */
export const stallTest: jest.It = inEditLoop ? test.skip : test;
