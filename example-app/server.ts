// Starts the reference app: `npm start`. Settings come from the environment (example-app/README.md lists them).
import { createServer } from 'node:http';
import { ConfigError, readConfig } from './config';
import { createExampleApp } from './app';
import { startTracing } from './tracing';

async function main(): Promise<void> {
  const config = readConfig();
  // Before the app, so that its first request is traced (OTEL_EXPORTER_OTLP_ENDPOINT; tracing.ts).
  const stopTracing = startTracing();
  if (!config.rateLimits)
    console.warn(
      'WARNING: RATE_LIMITS=off: the OAuth endpoints have no rate limits. Use this for load tests only.',
    );
  if (config.cimdAllowLoopback)
    console.warn(
      'WARNING: CIMD_ALLOW_LOOPBACK=1: client metadata documents and JWKS may be fetched from loopback addresses. ' +
        'Use this for tests only, never in production.',
    );
  const { listener, close, description, metrics } = await createExampleApp(config);
  const server = createServer(listener);
  // A port already taken (EADDRINUSE) or not allowed (EACCES): one clear line and a non-zero exit.
  const cannotListen = (error: Error) => {
    console.error(startupFailure(error, process.env.DEBUG === '1'));
    process.exit(1);
  };
  server.once('error', cannotListen);
  server.listen(config.port, () => {
    server.off('error', cannotListen);
    console.log(`Business service MCP server on ${config.baseUrl}/mcp (${description})`);
    if (metrics) console.log(`Prometheus metrics on ${metrics.url}`);
  });
  const stop = () =>
    server.close(() => {
      void close()
        .then(stopTracing)
        .finally(() => process.exit(0));
    });
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/**
 * Why the app could not start, in one line: a setting to fix (ConfigError, or an option the library refused), or what
 * failed (a database it cannot reach, a file it cannot open), with the system's error code. The stack is for
 * DEBUG=1: whoever reads this line is running the app, not debugging it.
 */
export function startupFailure(error: unknown, debug = false): string {
  const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
  const text = typeof message === 'string' && message ? message : String(error);
  const line = `Cannot start: ${text.split('\n')[0]}${typeof code === 'string' && !text.includes(code) ? ` (${code})` : ''}`;
  return debug && error instanceof Error && !(error instanceof ConfigError)
    ? `${line}\n${error.stack}`
    : line;
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(startupFailure(error, process.env.DEBUG === '1'));
    process.exit(1);
  });
}
