// test:fast runs without services: the tests that need PostgreSQL or Redis skip (with their message), whatever the
// shell has set. CI never uses this file.
delete process.env.DATABASE_URL;
delete process.env.REDIS_URL;
delete process.env.MCP_CONFORMANCE_DIR;
delete process.env.CI;
