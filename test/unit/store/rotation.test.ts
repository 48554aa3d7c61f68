// The rotation rule on its own: every case of a token against its grant's latest-token pointer.
import { decideRotation } from '../../../lib/store/rotation';

const WINDOW = 60_000;
const NOW = 1_000_000;

test.each([
  ['a first token while nothing was used', { token_hash: 'a', parent_hash: null }, {}, 'first-use'],
  ['a successor of the latest token', { token_hash: 'b', parent_hash: 'a' }, { latest: 'a' }, 'first-use'],
  [
    'the latest token again within the window',
    { token_hash: 'a', parent_hash: null },
    { latest: 'a' },
    'retry',
  ],
  [
    'the latest token again at the edge of the window',
    { token_hash: 'a', parent_hash: null },
    { latest: 'a', usedAt: NOW - WINDOW },
    'retry',
  ],
  [
    'the latest token again after the window',
    { token_hash: 'a', parent_hash: null },
    { latest: 'a', usedAt: NOW - WINDOW - 1 },
    'reuse',
  ],
  ['a token older than the latest', { token_hash: 'a', parent_hash: null }, { latest: 'b' }, 'reuse'],
  ['a sibling of the latest token', { token_hash: 'c', parent_hash: 'a' }, { latest: 'b' }, 'reuse'],
  [
    'a second first token once one was used',
    { token_hash: 'z', parent_hash: null },
    { latest: 'a' },
    'reuse',
  ],
] as const)('%s', (_name, token, pointer, expected) => {
  const grant = {
    latest_token_hash: 'latest' in pointer ? pointer.latest : null,
    latest_used_at: 'usedAt' in pointer ? pointer.usedAt : NOW - 1_000,
  };
  expect(decideRotation(token, grant, NOW, WINDOW)).toBe(expected);
});
