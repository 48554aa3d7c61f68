// OpenTelemetry traces (lib/telemetry/spans.ts): with an SDK registered, as a host app registers one, every OAuth
// endpoint and every MCP request gets a span whose attributes say what happened (endpoint, grant type, client, error
// code, tool) and never carry a token, a code, a secret or an email; audit events carry the request's trace id. The
// spans go to the SDK's own in-memory exporter.
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import express from 'express';
import request from 'supertest';
import type { OAuthEvent } from '../../lib';
import { createMcpEndpoint } from '../../lib/mcp';
import { createTestServer, obtainTokens, tokenRequest, USER, type TestServer } from '../helpers/oauth-app';

const exporter = new InMemorySpanExporter();
const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
});
afterAll(() => {
  trace.disable();
  context.disable();
});

let server: TestServer;
let events: OAuthEvent[];
beforeEach(() => {
  exporter.reset();
  events = [];
  server = createTestServer({ onEvent: (event) => void events.push(event) });
});
afterEach(() => server.close());

const spansNamed = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
const attributesOf = (span: ReadableSpan) => ({ ...span.attributes });

test('a token request is a span with its grant type, client and status; its events carry its trace id', async () => {
  const { client, tokens } = await obtainTokens(server);
  exporter.reset();
  const refreshed = await tokenRequest(server.app, client, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
  });
  expect(refreshed.status).toBe(200);
  const [span] = spansNamed('oauth token');
  expect(attributesOf(span!)).toMatchObject({
    'oauth.endpoint': 'token',
    'oauth.grant_type': 'refresh_token',
    'oauth.client_id': client.client_id,
    'http.request.method': 'POST',
    'http.response.status_code': 200,
  });
  const event = events.find((one) => one.type === 'token.refreshed')!;
  expect(event.traceId).toBe(span!.spanContext().traceId);
});

test('a refused request carries its OAuth error code', async () => {
  const { client } = await obtainTokens(server);
  exporter.reset();
  const refused = await tokenRequest(server.app, client, {
    grant_type: 'refresh_token',
    refresh_token: 'nope',
  });
  expect(refused.status).toBe(400);
  expect(attributesOf(spansNamed('oauth token')[0]!)).toMatchObject({
    'oauth.error': 'invalid_grant',
    'http.response.status_code': 400,
  });
});

test('the whole flow: a span per endpoint, none holding a token, a code, a secret or an email', async () => {
  const { client, tokens } = await obtainTokens(server);
  await tokenRequest(server.app, client, { token: tokens.refresh_token }, '/v1/oauth/revoke');
  const names = new Set(exporter.getFinishedSpans().map((span) => span.name));
  for (const name of [
    'oauth registration',
    'oauth authorization',
    'oauth sign_in',
    'oauth decision',
    'oauth token',
    'oauth revocation',
  ])
    expect([name, names.has(name)]).toEqual([name, true]);
  const everything = JSON.stringify(exporter.getFinishedSpans().map(attributesOf));
  for (const secret of [
    tokens.access_token,
    tokens.refresh_token,
    client.client_secret!,
    USER.email,
    USER.password,
  ])
    expect(everything).not.toContain(secret);
});

test('a tool call is a span named for its method, with the tool’s name only when the server’s table has it', async () => {
  const mcp = () => {
    const built = new McpServer({ name: 'notes', version: '1.0.0' });
    built.registerTool('list_invoices', {}, async () => ({ content: [] }));
    return built;
  };
  const app = express();
  app.use(server.oauth);
  app.post(
    '/tools',
    server.oauth.requireBearer(),
    createMcpEndpoint({ createServer: mcp, toolScopes: { list_invoices: ['fakture:read'] } }),
  );
  const { tokens } = await obtainTokens(server, {}, { scope: 'fakture:read' });
  exporter.reset();
  const call = (name: string) =>
    request(app)
      .post('/tools')
      .set('Authorization', `Bearer ${tokens.access_token}`)
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });
  expect((await call('list_invoices')).status).toBe(200);
  await call('a-name-made-up-by-the-client');
  await request(app)
    .post('/tools')
    .set('Authorization', `Bearer ${tokens.access_token}`)
    .set('Accept', 'application/json, text/event-stream')
    .send({ jsonrpc: '2.0', id: 2, method: 'made/up-by-the-client', params: {} });
  // A method MCP does not define names no span.
  expect(spansNamed('mcp made/up-by-the-client')).toEqual([]);
  expect(attributesOf(spansNamed('mcp other')[0]!)).toMatchObject({ 'mcp.method.name': 'other' });
  const spans = spansNamed('mcp tools/call').map(attributesOf);
  expect(spans).toMatchObject([
    { 'mcp.method.name': 'tools/call', 'mcp.tool.name': 'list_invoices', 'http.response.status_code': 200 },
    { 'mcp.tool.name': '(unlisted)' },
  ]);
});
