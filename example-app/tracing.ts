// OpenTelemetry for the reference app: when OTEL_EXPORTER_OTLP_ENDPOINT is set, the Node SDK is started before the
// app, and the library's spans (one per OAuth endpoint and MCP request, through @opentelemetry/api) go to that OTLP
// endpoint over HTTP, with the SDK's other settings from its usual variables (OTEL_SERVICE_NAME, ...). Unset, nothing
// is loaded and the library's calls are the API's no-ops. Resource detectors stay off: the cloud ones would ask
// metadata servers over the network at start.

/** Starts the SDK when the environment asks for it; resolves with its shutdown (a no-op otherwise). */
export function startTracing(env: NodeJS.ProcessEnv = process.env): () => Promise<void> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT) return async () => undefined;
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || 'express-mcp-oauth-example',
    traceExporter: new OTLPTraceExporter(),
    resourceDetectors: [],
  });
  sdk.start();
  return () => sdk.shutdown();
}
