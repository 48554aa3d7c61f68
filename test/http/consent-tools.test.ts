// Tool-aware consent: the consent page names, under each scope it asks for, the tools that scope unlocks, from
// createMcpEndpoint's toolScopes with no other configuration: their titles as the MCP server gives them (SDK 1.x and
// 2.x), the language's own titles when the pages speak one, the name of an untitled tool, and which change data.
import request from 'supertest';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { createMcpEndpoint } from '../../lib/mcp';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  registerClient,
  type TestServer,
} from '../helpers/oauth-app';

const noop = async () => ({ content: [] });

// Registered once for the file, as a host's endpoints are at start: the 1.x pool's server, and a 2.x handler.
createMcpEndpoint({
  createServer: () => {
    const server = new McpServerV1({ name: 'v1', version: '1' });
    server.registerTool(
      'list_invoices',
      { title: 'List invoices', annotations: { readOnlyHint: true } },
      noop,
    );
    server.registerTool('delete_invoice', { title: 'Delete <b>an</b> invoice' }, noop);
    server.registerTool('list_clients', { annotations: { readOnlyHint: true } }, noop);
    server.registerTool(
      'company_report',
      { title: 'Company report', annotations: { readOnlyHint: true } },
      noop,
    );
    server.registerTool('whoami', { title: 'Who am I' }, noop);
    return server;
  },
  toolScopes: {
    list_invoices: ['fakture:read'],
    delete_invoice: ['fakture:write', 'fakture:read'],
    list_clients: ['clients:read'],
    company_report: ['company:read'],
  },
});
createMcpEndpoint({
  handler: createMcpHandler(() => {
    const server = new McpServer({ name: 'v2', version: '1' });
    server.registerTool(
      'list_products',
      { title: 'List products', annotations: { readOnlyHint: true } },
      noop,
    );
    return server;
  }),
  toolScopes: { list_products: ['products:read'] },
});
// A 2.x handler that cannot list its tools: they are shown by name, taken to change data.
createMcpEndpoint({
  handler: { fetch: async () => new Response('down', { status: 503 }) },
  toolScopes: { archive_products: ['products:read'] },
});

let server: TestServer;
afterEach(() => server?.close());

/** The consent page for `scope`, in `language`: each scope's name with the tools listed under it. */
async function consent(scope: string, language?: string) {
  const client = await registerClient(server.app, { scope });
  // Signed in by a first request, denied, so that no grant makes a scope "already allowed".
  const { browser } = await authorizeInBrowser(server.app, client, { scope }, 'deny');
  const get = browser.get(`/v1/oauth/authorize?${authorizeQuery(client, { scope }).query}`);
  const page = await (language ? get.set('Accept-Language', language) : get);
  const scopes: Record<string, Array<[string, string, string]>> = {};
  for (const item of page.text.split(/<li><input type="checkbox"/).slice(1)) {
    const name = /value="([^"]+)"/.exec(item)![1]!;
    scopes[name] = [...item.matchAll(/<li class="([^"]*)" title="([^"]+)">([\s\S]*?)<\/li>/g)].map((m) => [
      m[2]!,
      m[3]!.replace(/\s+/g, ' ').trim(),
      m[1]!,
    ]);
  }
  return { page, scopes };
}

test('each scope lists the tools it unlocks, under the first scope each needs, marked when they change data', async () => {
  server = createTestServer();
  const { scopes } = await consent('fakture:read fakture:write clients:read');
  expect(scopes).toEqual({
    'fakture:read': [['list_invoices', 'List invoices', 'needs-0']],
    // Escaped: a title is the server's text, never markup. Its classes: the two checkboxes it needs.
    'fakture:write': [
      [
        'delete_invoice',
        'Delete &lt;b&gt;an&lt;/b&gt; invoice <span class="tag">changes data</span>',
        'needs-1 needs-0',
      ],
    ],
    // Untitled: by its name.
    'clients:read': [['list_clients', 'list_clients', 'needs-2']],
  });
});

test('a tool whose scopes are not all asked for is not listed; nor one no scope gates', async () => {
  server = createTestServer();
  const { scopes, page } = await consent('fakture:write');
  expect(scopes).toEqual({ 'fakture:write': [] });
  expect(page.text).not.toMatch(/company_report|whoami|Who am I/);
  expect(page.text).not.toContain('class="tools"');
});

test('SDK 2.x: the handler is asked with a tools/list of its own; one that cannot answer shows names', async () => {
  server = createTestServer();
  const { scopes } = await consent('products:read');
  expect(scopes['products:read']).toEqual([
    ['list_products', 'List products', 'needs-0'],
    ['archive_products', 'archive_products <span class="tag">changes data</span>', 'needs-0'],
  ]);
});

test('in the page’s language: the catalogue’s tool titles and words', async () => {
  server = createTestServer({
    pages: {
      languages: {
        de: {
          messages: { 'consent.tools': 'Werkzeuge:', 'consent.changesData': 'ändert Daten' },
          tools: { delete_invoice: 'Rechnung löschen' },
        },
      },
    },
  });
  const { scopes, page } = await consent('fakture:read fakture:write', 'de');
  expect(page.text).toContain('Werkzeuge:');
  expect(scopes['fakture:write']).toEqual([
    ['delete_invoice', 'Rechnung löschen <span class="tag">ändert Daten</span>', 'needs-1 needs-0'],
  ]);
  // A tool the catalogue does not name keeps the server's title.
  expect(scopes['fakture:read']![0]![1]).toBe('List invoices');
});

test('unticking a scope hides the tools that need it: a rule per checkbox, in the page’s nonce’d style', async () => {
  server = createTestServer();
  const { page } = await consent('fakture:read fakture:write');
  const nonce = /<style nonce="([^"]+)">/.exec(page.text)![1]!;
  expect(page.headers['content-security-policy']).toContain(`'nonce-${nonce}'`);
  expect(page.text).toContain('form:has(#scope-0:not(:checked)) .needs-0 { display: none; }');
  expect(page.text).toContain('form:has(#scope-1:not(:checked)) .needs-1 { display: none; }');
  expect(page.text).not.toContain('<script');
});

test('a language catalogue’s tools must be text', () => {
  expect(() => createTestServer({ pages: { languages: { de: { tools: { list_invoices: '' } } } } })).toThrow(
    'pages.languages.de.tools["list_invoices"] must be a non-empty string.',
  );
});
