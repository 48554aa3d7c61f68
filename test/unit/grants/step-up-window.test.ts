// The step-up window's write budget: a token refused again and again marks its grant in the store at most once every
// 5 s from one process, so that a refusal loop is not a write loop on the grant's row.
import { createStepUpWindow } from '../../../lib/grants/step-up-window';
import { createFakeClock, SECOND } from '../../helpers/clock';

test('a process marks one grant at most once every 5 s; other grants are marked at once', async () => {
  const clock = createFakeClock(Date.now());
  const marks: string[] = [];
  const window = createStepUpWindow(
    {
      markScopeChallenge: (grantId: string) => void marks.push(grantId),
      takeScopeChallenge: () => false,
    },
    120_000,
    clock.now,
  )!;
  await window.mark('grant-a');
  await window.mark('grant-a');
  await window.mark('grant-b');
  clock.advance(4 * SECOND);
  await window.mark('grant-a');
  expect(marks).toEqual(['grant-a', 'grant-b']);
  clock.advance(1 * SECOND);
  await window.mark('grant-a');
  expect(marks).toEqual(['grant-a', 'grant-b', 'grant-a']);
});
