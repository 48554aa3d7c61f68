// Which errors mean "the store cannot be reached right now" (503 temporarily_unavailable) rather than a bug (500).
import { isStoreUnavailable } from '../../lib/store/unavailable';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test.each([
  ['connection refused', withCode('ECONNREFUSED'), true],
  ['connection reset', withCode('ECONNRESET'), true],
  ['an administrator ended the connection (57P01)', withCode('57P01', 'terminating connection'), true],
  ['the database is starting up (57P03)', withCode('57P03'), true],
  ['a connection exception (08006)', withCode('08006'), true],
  ['too many connections (53300)', withCode('53300'), true],
  ['pg: the connection died', new Error('Connection terminated unexpectedly'), true],
  ['pg: no connection in time', new Error('timeout exceeded when trying to connect'), true],
  ['wrapped as a cause', new Error('query failed', { cause: withCode('ECONNREFUSED') }), true],
  ['every address refused', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]), true],
  ['SQLite busy past its timeout', withCode('SQLITE_BUSY', 'database is locked'), true],
  ['a SQLite constraint violation', withCode('SQLITE_CONSTRAINT_PRIMARYKEY'), false],
  ['a unique violation (23505)', withCode('23505', 'duplicate key'), false],
  ['a syntax error (42601)', withCode('42601'), false],
  ['a plain bug', new TypeError('x is not a function'), false],
  ['not an error', 'ECONNREFUSED', false],
  ['nothing', undefined, false],
])('%s: %s', (_name, error, unavailable) => {
  expect(isStoreUnavailable(error)).toBe(unavailable);
});
