// The tokenExchange option fails at start with a message that says how to fix it.
import { parseTokenExchange, type TokenExchangeOptions } from '../../../lib/token-exchange/options';

const fail = (message: string): never => {
  throw new TypeError(message);
};
const OWN = ['https://as.example/mcp'];
const SCOPES = new Set(['a:read', 'b:read']);
const parse = (given: unknown) => parseTokenExchange(given as TokenExchangeOptions, OWN, SCOPES, fail);

test('absent: the grant is off', () => {
  expect(parse(undefined)).toBeUndefined();
});

test('resources are normalised as the URL parser writes them, each with its ceiling or none', () => {
  const policy = () => true;
  expect(
    parse({
      resources: [
        'https://Renderer.Example/api//',
        { resource: 'http://127.0.0.1:9000', scopes: ['a:read'] },
      ],
      policy,
      maxLifetimeSeconds: 10,
    }),
  ).toEqual({
    resources: new Map([
      ['https://renderer.example/api', undefined],
      ['http://127.0.0.1:9000', new Set(['a:read'])],
    ]),
    policy,
    maxLifetimeSeconds: 10,
  });
});

test.each([
  [
    'not an object',
    'yes',
    "tokenExchange must be an object, e.g. { resources: ['https://renderer.example.com'] }.",
  ],
  ['null', null, /tokenExchange must be an object/],
  ['no resources', {}, /tokenExchange.resources must list/],
  ['an empty list', { resources: [] }, /tokenExchange.resources must list/],
  ['a resource that is no string', { resources: [5] }, /resources\[0\] must be a URL/],
  ['a relative URL', { resources: ['/api'] }, /resources\[0\] "\/api" is not an absolute URL/],
  ['a query', { resources: ['https://r.example/?x=1'] }, /must not have a query or fragment/],
  ['an empty fragment', { resources: ['https://r.example/#'] }, /must not have a query or fragment/],
  ['an empty query', { resources: ['https://r.example/?'] }, /must not have a query or fragment/],
  ['credentials', { resources: ['https://u:p@r.example'] }, /must not carry credentials/],
  ['a user name alone', { resources: ['https://u@r.example'] }, /must not carry credentials/],
  ['a password alone', { resources: ['https://:p@r.example'] }, /must not carry credentials/],
  ['ftp, even on loopback', { resources: ['ftp://localhost/x'] }, /must use https/],
  ['http off loopback', { resources: ['http://r.example'] }, /must use https/],
  [
    'the server’s own resource',
    { resources: ['https://as.example/mcp/'] },
    /one of the router's own resources/,
  ],
  ['a resource twice', { resources: ['https://r.example', 'https://r.example/'] }, /listed twice/],
  ['an empty ceiling', { resources: [{ resource: 'https://r.example', scopes: [] }] }, /scopes must list/],
  [
    'a scope not in the catalogue',
    { resources: [{ resource: 'https://r.example', scopes: ['z'] }] },
    /names "z"/,
  ],
  [
    'a policy that is no function',
    { resources: ['https://r.example'], policy: true },
    /policy must be a function/,
  ],
  ['a lifetime under 10 s', { resources: ['https://r.example'], maxLifetimeSeconds: 9 }, /from 10 to 86400/],
  [
    'a lifetime over a day',
    { resources: ['https://r.example'], maxLifetimeSeconds: 86_401 },
    /from 10 to 86400/,
  ],
  [
    'a fractional lifetime',
    { resources: ['https://r.example'], maxLifetimeSeconds: 10.5 },
    /from 10 to 86400/,
  ],
])('refuses %s', (_name, given, message) => {
  expect(() => parse(given)).toThrow(message);
});

test.each([86_400, 10])('a lifetime of %i seconds, a bound, is accepted', (seconds) => {
  expect(parse({ resources: ['https://r.example'], maxLifetimeSeconds: seconds })?.maxLifetimeSeconds).toBe(
    seconds,
  );
});

test.each(['http://localhost:8080', 'http://[::1]:8080'])(
  'http on the loopback host %s is accepted',
  (url) => {
    expect(parse({ resources: [url] })?.resources.has(url)).toBe(true);
  },
);
