// The fake clock and time units, shipped with the package (express-mcp-oauth/testing) and shared by the tests.
export { createFakeClock, DAY, HOUR, MINUTE, SECOND, type FakeClock } from '../../lib/testing/clock';
