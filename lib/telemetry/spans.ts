// OpenTelemetry traces through @opentelemetry/api alone: without an SDK registered by the host app every call here is
// the API's no-op, and with one (the reference app wires the Node SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set) each
// OAuth endpoint and each MCP request gets a span. Attributes are bounded and never secret: an endpoint's name, a
// grant type, a client id, an error code, a tool name from the server's own table; never a token, a code, a secret or
// an email.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

const tracer = trace.getTracer('express-mcp-oauth');

/** A client id, as a span may carry it: ids are random or URLs, but a made-up one could be anything, so bounded. */
const bounded = (value: string) => (value.length > 200 ? `${value.slice(0, 200)}…` : value);

/**
 * Runs `next` inside a new server span named `name` (`oauth token`, `mcp tools/call`), ended when the response
 * is finished or the connection closes, with the response's status; a 5xx marks it as an error.
 */
export function withRequestSpan(
  name: string,
  req: IncomingMessage,
  res: ServerResponse,
  next: () => void,
  attributes: Attributes = {},
): void {
  const span = tracer.startSpan(name, {
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': req.method ?? 'GET', ...attributes },
  });
  // No SDK, or one that samples this request out: nothing to end, bind or annotate (the hot path of /mcp pays one
  // no-op object).
  if (!span.isRecording()) return next();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  res.once('finish', end);
  res.once('close', end);
  const active = trace.setSpan(context.active(), span);
  // Body parsers call the next step from the request stream's own events, which run outside this call: bound, their
  // listeners run in the span's context too (the API's no-op context manager leaves both as they are).
  context.bind(active, req);
  context.bind(active, res);
  context.with(active, next);
}

/** The span of the request being served, when an SDK records one. */
const activeSpan = (): Span | undefined => {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span : undefined;
};

/** What an audit event says that a span may carry too: its client and grant type. */
export function annotateSpan(fields: { clientId?: string; grantType?: string }): void {
  const span = activeSpan();
  if (!span) return;
  if (fields.clientId !== undefined) span.setAttribute('oauth.client_id', bounded(fields.clientId));
  if (fields.grantType !== undefined) span.setAttribute('oauth.grant_type', fields.grantType);
}

/** The OAuth error code a request was answered with (RFC 6749 §5.2, RFC 6750 §3.1). */
export function recordOAuthError(code: string): void {
  activeSpan()?.setAttribute('oauth.error', code);
}

/** The trace id of the request being served, for its audit events; undefined when nothing is traced. */
export function activeTraceId(): string | undefined {
  const span = trace.getActiveSpan();
  const id = span?.spanContext().traceId;
  return id && /[^0]/.test(id) ? id : undefined;
}

/** The JSON-RPC methods of the MCP specification a span may be named for. */
const MCP_METHODS = new Set([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

/**
 * What an MCP request asks, on its span: the JSON-RPC method (`mcp tools/call`), and for a tool call the tool's name
 * when the server's own table names it (`known`), so that a client spraying made-up names adds no values.
 */
export function annotateMcpRequest(body: unknown, known: (tool: string) => boolean): void {
  const span = activeSpan();
  if (!span) return;
  const messages = Array.isArray(body) ? body : [body];
  const first = messages[0] as { method?: unknown; params?: { name?: unknown } } | undefined;
  const asked = messages.length === 1 && typeof first?.method === 'string' ? first.method : 'batch';
  // Only MCP's own methods name a span: a client's made-up ones would add names and values at will.
  const method = asked === 'batch' || MCP_METHODS.has(asked) ? asked : 'other';
  span.updateName(`mcp ${method}`);
  span.setAttribute('mcp.method.name', method);
  if (method === 'tools/call') {
    const tool = first?.params?.name;
    span.setAttribute('mcp.tool.name', typeof tool === 'string' && known(tool) ? tool : '(unlisted)');
  }
}
