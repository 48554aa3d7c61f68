// The attack suites of the grants once more, every request served by http.createServer(fastPath(oauth, app)) instead
// of the app (see test/http/fast-path-endpoints.test.ts): replays, reuse, races and DPoP proofs meet the same rules
// whichever of the two dispatches them.
import { runThroughFastPath } from '../helpers/fast-path';

jest.mock('supertest', () =>
  (require('../helpers/fast-path') as typeof import('../helpers/fast-path')).fastSupertest(),
);

const counts = runThroughFastPath();
// Each suite in a describe of its own, so that its top-level hooks (a server per test) stay its own.
describe('refresh-attacks', () => void require('./refresh-attacks.test'));
describe('grant-attacks', () => void require('./grant-attacks.test'));
describe('dpop-attacks', () => void require('./dpop-attacks.test'));
describe('refresh-scenarios', () => void require('./refresh-scenarios.test'));

afterAll(() => {
  expect(counts.requests - counts.toExpress).toBeGreaterThan(100);
});
