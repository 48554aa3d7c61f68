// The API endpoints' suites once more, every request served by http.createServer(fastPath(oauth, app)) instead of the
// app: what the router promises at the token, revocation and introspection endpoints, the fast path keeps. Requests
// it does not take (other paths, JSON bodies) reach Express as before, and are counted, so that a fast path that
// quietly took nothing would fail here.
import { runThroughFastPath } from '../helpers/fast-path';

jest.mock('supertest', () =>
  (require('../helpers/fast-path') as typeof import('../helpers/fast-path')).fastSupertest(),
);

const counts = runThroughFastPath();
// Each suite in a describe of its own, so that its top-level hooks (a server per test) stay its own.
describe('token', () => void require('./token.test'));
describe('revoke', () => void require('./revoke.test'));
describe('introspect', () => void require('./introspect.test'));
describe('introspection-rules', () => void require('./introspection-rules.test'));
describe('dpop', () => void require('./dpop.test'));
describe('client-credentials', () => void require('./client-credentials.test'));
describe('jwt-bearer', () => void require('./jwt-bearer.test'));
describe('events', () => void require('./events.test'));

afterAll(() => {
  expect(counts.requests - counts.toExpress).toBeGreaterThan(300);
  expect(counts.toExpress).toBeGreaterThan(0);
});
