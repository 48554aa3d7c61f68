// Record builders, shipped with the package (express-mcp-oauth/testing) and shared by the tests.
export { clientRecord, codeRecord, grantRecord, newRefreshToken } from '../../lib/testing/fixtures';
