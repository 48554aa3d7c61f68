// The workloadIdentity option fails at start with a message that says how to fix it.
import { parseWorkloadIdentity, type WorkloadIdentityOptions } from '../../../lib/workload/options';

const fail = (message: string): never => {
  throw new TypeError(message);
};
const ISSUER = 'https://oidc.cluster.example';
const parse = (given: unknown) =>
  parseWorkloadIdentity(
    given as WorkloadIdentityOptions,
    'https://as.example',
    new Set(['a:read', 'b:read']),
    fail,
  );
const rule = { issuer: ISSUER, subject: 'system:serviceaccount:billing:exporter', clientId: 'exporter' };

test('absent: off', () => {
  expect(parse(undefined)).toBeUndefined();
});

test('rules by issuer and exact subject; defaults: the client’s scopes, no further claims, one hour', () => {
  expect(parse({ issuers: [ISSUER], workloads: [rule] })).toEqual({
    issuers: [ISSUER],
    rules: new Map([[ISSUER, new Map([[rule.subject, { ...rule, scopes: undefined, claims: {} }]])]]),
    maxLifetimeSeconds: 3600,
  });
  const parsed = parse({
    issuers: [ISSUER],
    workloads: [{ ...rule, scopes: ['a:read'], claims: { namespace: 'billing' } }],
    maxLifetimeSeconds: 600,
  })!;
  expect(parsed.rules.get(ISSUER)!.get(rule.subject)).toEqual({
    ...rule,
    scopes: ['a:read'],
    claims: { namespace: 'billing' },
  });
  expect(parsed.maxLifetimeSeconds).toBe(600);
});

test.each([10, 86_400])('a lifetime of %i seconds, a bound, is accepted', (seconds) => {
  expect(
    parse({ issuers: [ISSUER], workloads: [rule], maxLifetimeSeconds: seconds })?.maxLifetimeSeconds,
  ).toBe(seconds);
});

test('a message shows what to write', () => {
  expect(() => parse(7)).toThrow(
    "workloadIdentity must be an object, e.g. { issuers: ['https://oidc.eks.eu-west-1.amazonaws.com/id/ABC'], " +
      "workloads: [{ issuer: 'https://oidc.eks.eu-west-1.amazonaws.com/id/ABC', subject: " +
      "'system:serviceaccount:billing:exporter', clientId: exporter.clientId }] }.",
  );
});

const REGISTERED = ['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti'];

test.each(REGISTERED)('a rule cannot pin the registered claim %s (the grant checks it)', (name) => {
  expect(() =>
    parse({ issuers: [ISSUER], workloads: [{ ...rule, claims: { tenant: 'acme', [name]: 'x' } }] }),
  ).toThrow(/claims must map other claim names/);
});

test.each([
  ['not an object', 7, /workloadIdentity must be an object/],
  ['issuers that are a string', { issuers: ISSUER, workloads: [rule] }, /issuers must list/],
  ['workloads that are a string', { issuers: [ISSUER], workloads: 'x' }, /workloads must list/],
  ['a rule that is a string', { issuers: [ISSUER], workloads: ['x'] }, /workloads\[0\] must be an object/],
  [
    'an issuer that is no string in a rule',
    { issuers: [ISSUER], workloads: [{ ...rule, issuer: 5 }] },
    /issuer must be one of/,
  ],
  ['a subject that is no string', { issuers: [ISSUER], workloads: [{ ...rule, subject: 5 }] }, /exact sub/],
  [
    'a question mark in a subject',
    { issuers: [ISSUER], workloads: [{ ...rule, subject: 'sa-?' }] },
    /no wildcard/,
  ],
  [
    'a client id that is no string',
    { issuers: [ISSUER], workloads: [{ ...rule, clientId: 5 }] },
    /clientId must name/,
  ],
  [
    'one unknown scope among known ones',
    { issuers: [ISSUER], workloads: [{ ...rule, scopes: ['a:read', 'z'] }] },
    /scopes must list/,
  ],
  [
    'scopes that are a string',
    { issuers: [ISSUER], workloads: [{ ...rule, scopes: 'a:read' }] },
    /scopes must list/,
  ],
  [
    'claims that are a string',
    { issuers: [ISSUER], workloads: [{ ...rule, claims: 'tenant' }] },
    /claims must map/,
  ],
  ['claims that are null', { issuers: [ISSUER], workloads: [{ ...rule, claims: null }] }, /claims must map/],
  [
    'one claim that is no string among strings',
    { issuers: [ISSUER], workloads: [{ ...rule, claims: { a: 'x', b: 1 } }] },
    /claims must map/,
  ],
  ['a user name alone', { issuers: ['https://u@oidc.example'], workloads: [rule] }, /credentials/],
  ['a password alone', { issuers: ['https://:p@oidc.example'], workloads: [rule] }, /credentials/],
  ['a fragment', { issuers: [`${ISSUER}#x`], workloads: [rule] }, /query or fragment/],
  ['no issuers', { workloads: [rule] }, /issuers must list/],
  ['an issuer that is no string', { issuers: [1], workloads: [rule] }, /is not a string/],
  ['a relative issuer', { issuers: ['cluster'], workloads: [rule] }, /is not an absolute URL/],
  ['an http issuer', { issuers: ['http://oidc.cluster.example'], workloads: [rule] }, /must use https/],
  ['a spiffe issuer', { issuers: ['spiffe://example.org'], workloads: [rule] }, /must use https/],
  ['a query', { issuers: [`${ISSUER}?x`], workloads: [rule] }, /query or fragment/],
  ['credentials', { issuers: ['https://u:p@oidc.example'], workloads: [rule] }, /credentials/],
  ['this server itself', { issuers: ['https://as.example'], workloads: [rule] }, /names this server itself/],
  ['an issuer twice', { issuers: [ISSUER, ISSUER], workloads: [rule] }, /listed twice/],
  ['no workloads', { issuers: [ISSUER] }, /workloads must list/],
  ['a rule that is no object', { issuers: [ISSUER], workloads: [null] }, /workloads\[0\] must be an object/],
  [
    'a rule of an untrusted issuer',
    { issuers: [ISSUER], workloads: [{ ...rule, issuer: 'https://x.example' }] },
    /issuer must be one of/,
  ],
  [
    'a wildcard subject',
    { issuers: [ISSUER], workloads: [{ ...rule, subject: 'system:serviceaccount:*' }] },
    /no wildcard/,
  ],
  ['an empty subject', { issuers: [ISSUER], workloads: [{ ...rule, subject: '' }] }, /exact sub/],
  ['no client', { issuers: [ISSUER], workloads: [{ ...rule, clientId: '' }] }, /clientId must name/],
  ['an unknown scope', { issuers: [ISSUER], workloads: [{ ...rule, scopes: ['z'] }] }, /scopes must list/],
  ['no scope', { issuers: [ISSUER], workloads: [{ ...rule, scopes: [] }] }, /scopes must list/],
  [
    'a claim that is no string',
    { issuers: [ISSUER], workloads: [{ ...rule, claims: { n: 1 } }] },
    /claims must map/,
  ],
  [
    'a registered claim among claims',
    { issuers: [ISSUER], workloads: [{ ...rule, claims: { aud: 'x' } }] },
    /claims must map/,
  ],
  [
    'claims that are a list',
    { issuers: [ISSUER], workloads: [{ ...rule, claims: ['x'] }] },
    /claims must map/,
  ],
  [
    'a workload twice',
    { issuers: [ISSUER], workloads: [rule, { ...rule, clientId: 'other' }] },
    /has a rule already/,
  ],
  [
    'a lifetime under 10 s',
    { issuers: [ISSUER], workloads: [rule], maxLifetimeSeconds: 9 },
    /from 10 to 86400/,
  ],
  [
    'a lifetime over a day',
    { issuers: [ISSUER], workloads: [rule], maxLifetimeSeconds: 86_401 },
    /from 10 to 86400/,
  ],
])('refuses %s', (_name, given, message) => {
  expect(() => parse(given)).toThrow(message);
});
