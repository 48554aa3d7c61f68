// The rooms of lib/ and which way imports may run: storage and crypto know nothing of HTTP; middleware is what is
// mounted as middleware and knows no endpoint; endpoints (handlers/ for JSON, authorize/ for the browser) know no
// other room's endpoints; only the router wires them. A new import against these lines fails here.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const LIB = join(__dirname, '../../lib');

/** The room of a file of lib/: its folder, or its own name for a file at the root. */
const roomOf = (file: string) => relative(LIB, file).split('/')[0]!.replace(/\.ts$/, '');

// The entry points other than the root: each its own product, which the authorization server never loads.
const ENTRIES = ['mcp', 'postgres', 'check', 'testing', 'experimental'];
const HTTP = ['handlers', 'authorize', 'middleware', 'router', 'context', 'pages', 'index', ...ENTRIES];
// Rooms that run inside a request's work but mount nothing: they may read the request's context (its services).
const ENDPOINTS = HTTP.filter((room) => room !== 'context');
// The features: each whole in its own folder, knowing only the shared machinery below it.
const FEATURES = [
  'clients',
  'grants',
  'id-jag',
  'dpop',
  'upstream',
  'cimd',
  'token-exchange',
  'workload',
  'device',
];
const FORBIDDEN: Record<string, string[]> = {
  errors: [...HTTP, ...FEATURES, 'options'],
  paths: [...HTTP, ...FEATURES, 'options'],
  events: [...HTTP, ...FEATURES, 'options', 'store', 'crypto', 'keys'],
  // Spans through @opentelemetry/api: what a request is, never anything of the server's own.
  telemetry: [
    ...HTTP,
    ...FEATURES,
    'options',
    'store',
    'crypto',
    'keys',
    'events',
    'errors',
    'util',
    'outbound',
  ],
  util: [...HTTP, ...FEATURES, 'options'],
  store: [...HTTP, ...FEATURES, 'options', 'keys'],
  crypto: [...HTTP, ...FEATURES, 'options', 'keys'],
  // The one JWT verifier's steps: what every kind of JWT from outside shares, none of any kind's own rules.
  jwt: [...HTTP, ...FEATURES, 'options', 'store', 'crypto', 'keys', 'outbound', 'events'],
  // The SSRF-safe fetcher knows nothing of the server: what it fetches, and why, is its callers' business.
  outbound: [...HTTP, ...FEATURES, 'options', 'store', 'crypto', 'keys', 'util', 'events', 'errors', 'paths'],
  // The pages' words and the language negotiation: text only, nothing of the server.
  i18n: [...HTTP, ...FEATURES, 'options', 'store', 'crypto', 'keys', 'outbound'],
  keys: [...HTTP, ...FEATURES, 'options'],
  // Who a client is (authentication, its metadata, what a token it presents is): no grant, no feature.
  clients: [...ENDPOINTS, 'cimd', 'options', 'grants', 'id-jag', 'dpop', 'upstream', 'keys'],
  // DPoP (RFC 9449): proofs, nonces, and the binding of what the token endpoint issues to a proof's key.
  dpop: [...ENDPOINTS, 'cimd', 'options', 'grants', 'id-jag', 'upstream', 'keys', 'clients', 'outbound'],
  // ID-JAG (the jwt-bearer grant with enterprise IdPs): its assertion, its issuers' keys, its options and its grant.
  'id-jag': [...ENDPOINTS, 'cimd', 'options', 'upstream', 'dpop', 'keys'],
  // Token exchange (RFC 8693): its options, the exchange shared by its grant and router.downstreamToken.
  'token-exchange': [
    ...ENDPOINTS,
    'cimd',
    'options',
    'upstream',
    'dpop',
    'keys',
    'id-jag',
    'workload',
    'clients',
  ],
  // Workload identity federation (SEP-1933): a workload's JWT as a jwt-bearer grant with no client authentication.
  workload: [...ENDPOINTS, 'cimd', 'options', 'upstream', 'keys', 'token-exchange'],
  // The device grant's options and user codes (RFC 8628): nothing of the grants or the pages that use them.
  device: [
    ...ENDPOINTS,
    'cimd',
    'options',
    'grants',
    'id-jag',
    'upstream',
    'dpop',
    'keys',
    'clients',
    'outbound',
  ],
  // A grant type says whether the parsed options offer it (grants/grant-type.ts: enabled(config)).
  grants: [...ENDPOINTS, 'cimd', 'upstream', 'keys'],
  // Client ID Metadata Documents: who a client is, from a URL it names.
  cimd: [...HTTP, 'grants', 'id-jag', 'dpop', 'upstream'],
  // Upstream sign-in's client side and the users' kept tokens: no endpoint, which authorize/upstream.ts is.
  upstream: [...HTTP, 'cimd', 'grants', 'id-jag', 'dpop', 'clients'],
  // The deployment check speaks to a server from outside, over HTTP, as a client does: it uses nothing of the server.
  check: [
    ...HTTP,
    ...FEATURES,
    'options',
    'store',
    'crypto',
    'keys',
    'util',
    'events',
    'errors',
    'paths',
    'outbound',
  ],
  options: HTTP,
  'rate-limit-options': HTTP,
  middleware: ['handlers', 'authorize', 'router', 'index', ...ENTRIES],
  handlers: ['authorize', 'middleware', 'router', 'index', ...ENTRIES],
  authorize: ['handlers', 'middleware', 'router', 'index', ...ENTRIES],
  router: ['index', ...ENTRIES],
  context: ['index', ...ENTRIES],
  pages: ['index', ...ENTRIES],
  // Tool-aware consent: what /mcp registers and the consent page reads; it knows neither side's workings.
  'consent-tools': [...HTTP, ...FEATURES, 'options', 'store', 'crypto', 'keys', 'outbound'],
  // The PostgreSQL store (express-mcp-oauth/postgres): a store like the others, on the contract's rows.
  postgres: [...HTTP, ...FEATURES, 'options', 'keys'],
  // The MCP layer sits on the bearer check's result (req.auth), not on the server's endpoints.
  mcp: ['handlers', 'authorize', 'router', 'index', 'postgres', 'check', 'testing', 'experimental'],
  // The store contract suite drives the refresh rotation (grants/rotation.ts) as the token endpoint does.
  testing: [...HTTP, ...FEATURES.filter((room) => room !== 'grants')],
  // The performance bypass runs the router's own steps: it may reach into the router, and nothing reaches into it.
  experimental: ['index', 'mcp', 'postgres', 'check', 'testing'],
};

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

const edges = [...sources(LIB)].flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(/^import[^;]*?from '(\.[^']+)'/gms)].map((match) => ({
    file: relative(LIB, file),
    from: roomOf(file),
    to: roomOf(resolve(dirname(file), match[1]!)),
  })),
);

test('the import graph was read', () => {
  expect(edges.length).toBeGreaterThan(100);
  expect(edges).toContainEqual({ file: 'router/endpoints.ts', from: 'router', to: 'handlers' });
});

test('no import runs against the layers', () => {
  const against = edges.filter((edge) => edge.from !== edge.to && FORBIDDEN[edge.from]?.includes(edge.to));
  expect(against).toEqual([]);
});

test('every room of lib/ has its rule, so a new one is placed on purpose', () => {
  const rooms = new Set(edges.map((edge) => edge.from));
  const free = ['index'];
  expect([...rooms].filter((room) => !(room in FORBIDDEN) && !free.includes(room))).toEqual([]);
});

// An entry point's folder is a product of its own: from outside, only its index.ts (what the package exports) is
// reached, so that its inside can move without the rest of lib/ knowing.
test('an entry point is imported from outside its folder only through its index.ts', () => {
  const inward = [...sources(LIB)].flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/^import[^;]*?from '(\.[^']+)'/gms)]
      .map((match) => relative(LIB, resolve(dirname(file), match[1]!)))
      .filter((target) => {
        const [room, ...rest] = target.split('/');
        return (
          ENTRIES.includes(room!) &&
          roomOf(file) !== room &&
          rest.join('/') !== '' &&
          rest.join('/') !== 'index'
        );
      })
      .map((target) => `${relative(LIB, file)} -> ${target}`),
  );
  expect(inward).toEqual([]);
});

// docs/architecture.md describes the rooms: its table names every room of lib/ and no other, and its entry-point
// table every entry point of package.json.
test('docs/architecture.md names every room of lib/, and every entry point of the package', () => {
  const doc = readFileSync(join(LIB, '../docs/architecture.md'), 'utf8');
  const section = (heading: string) => doc.slice(doc.indexOf(`## ${heading}`)).split('\n## ')[0]!;
  const firstCells = (text: string) =>
    [...text.matchAll(/^\| `([^`]+)` +\|/gm)].map((match) => match[1]!).sort();
  const rooms = [...new Set(readdirSync(LIB).map((name) => name.replace(/\.ts$/, '')))].sort();
  expect(firstCells(section('Rooms'))).toEqual(rooms);
  const { exports } = JSON.parse(readFileSync(join(LIB, '../package.json'), 'utf8')) as { exports: object };
  const entries = Object.keys(exports)
    .filter((key) => key !== './package.json')
    .map((key) => `express-mcp-oauth${key.slice(1)}`);
  expect(firstCells(section('Entry points'))).toEqual(entries.sort());
});
