// The rooms of lib/ and which way imports may run: storage and crypto know nothing of HTTP; middleware is what is
// mounted as middleware and knows no endpoint; endpoints (handlers/ for JSON, authorize/ for the browser) know no
// other room's endpoints; only the router wires them. A new import against these lines fails here.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const LIB = join(__dirname, '../../lib');

/** The room of a file of lib/: its folder, or its own name for a file at the root. */
const roomOf = (file: string) => relative(LIB, file).split('/')[0]!.replace(/\.ts$/, '');

const HTTP = ['handlers', 'authorize', 'middleware', 'mcp', 'router', 'context', 'pages', 'testing', 'index'];
const FORBIDDEN: Record<string, string[]> = {
  errors: [...HTTP, 'cimd', 'options'],
  paths: [...HTTP, 'cimd', 'options'],
  events: [...HTTP, 'cimd', 'options', 'store', 'crypto', 'grants'],
  util: [...HTTP, 'cimd', 'options'],
  store: [...HTTP, 'cimd', 'options', 'grants', 'keys'],
  crypto: [...HTTP, 'cimd', 'options', 'grants', 'keys'],
  // DPoP proofs (RFC 9449) are checked like client assertions: by crypto alone, whatever endpoint they come to.
  dpop: [...HTTP, 'cimd', 'options', 'grants', 'keys'],
  // The pages' words and the language negotiation: text only, nothing of the server.
  i18n: [...HTTP, 'cimd', 'options', 'store', 'crypto', 'grants', 'keys', 'dpop'],
  grants: [...HTTP, 'cimd', 'options'],
  keys: [...HTTP, 'cimd', 'options', 'grants'],
  cimd: HTTP,
  // Upstream sign-in's client side and the users' kept tokens: no endpoint, which authorize/upstream.ts is.
  upstream: [...HTTP, 'cimd', 'grants', 'dpop'],
  // The deployment check speaks to a server from outside, over HTTP, as a client does: it uses nothing of the server.
  check: [
    ...HTTP,
    'cimd',
    'options',
    'store',
    'crypto',
    'grants',
    'keys',
    'util',
    'events',
    'errors',
    'paths',
  ],
  options: HTTP,
  'rate-limit-options': HTTP,
  middleware: ['handlers', 'authorize', 'mcp', 'router', 'testing', 'index'],
  handlers: ['authorize', 'middleware', 'mcp', 'router', 'testing', 'index'],
  authorize: ['handlers', 'middleware', 'mcp', 'router', 'testing', 'index'],
  mcp: ['handlers', 'authorize', 'router', 'testing', 'index'],
  testing: ['handlers', 'authorize', 'middleware', 'mcp', 'router', 'context', 'pages', 'cimd', 'index'],
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
  const against = edges.filter((edge) => FORBIDDEN[edge.from]?.includes(edge.to));
  expect(against).toEqual([]);
});

test('every room of lib/ has its rule, so a new one is placed on purpose', () => {
  const rooms = new Set(edges.map((edge) => edge.from));
  const free = ['router', 'index', 'context', 'pages'];
  expect([...rooms].filter((room) => !(room in FORBIDDEN) && !free.includes(room))).toEqual([]);
});
