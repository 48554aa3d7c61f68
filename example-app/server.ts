// Starts the reference app: `npm start`. Settings come from the environment (README.md, "The reference app").
import { ConfigError, readConfig } from './config';
import { createExampleApp } from './app';

async function main(): Promise<void> {
  const config = readConfig();
  if (!config.rateLimits)
    console.warn(
      'WARNING: RATE_LIMITS=off: the OAuth endpoints have no rate limits. Use this for load tests only.',
    );
  if (config.cimdAllowLoopback)
    console.warn(
      'WARNING: CIMD_ALLOW_LOOPBACK=1: client metadata documents and JWKS may be fetched from loopback addresses. ' +
        'Use this for tests only, never in production.',
    );
  const { app, close, description } = await createExampleApp(config);
  const server = app.listen(config.port, () => {
    console.log(`Business service MCP server on ${config.baseUrl}/mcp (${description})`);
  });
  const stop = () =>
    server.close(() => {
      void close().finally(() => process.exit(0));
    });
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(
    `Cannot start: ${error instanceof ConfigError ? error.message : String((error as Error)?.stack ?? error)}`,
  );
  process.exit(1);
});
