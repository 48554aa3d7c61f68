// Record builders, shipped with the package (express-mcp-oauth/testing) and shared by the tests.
export {
  clientRecord,
  codeRecord,
  grantRecord,
  newRefreshToken,
  newSecret,
} from '../../lib/testing/fixtures';
