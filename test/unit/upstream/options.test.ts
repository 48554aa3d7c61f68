// The `upstream` option fails fast, at start, with a message that says how to fix it.
import { parseUpstreamOptions, type UpstreamOptions } from '../../../lib/upstream/options';

const fail = (message: string): never => {
  throw new TypeError(message);
};
const oidc = { id: 'oidc', name: 'Upstream', issuer: 'https://id.example', clientId: 'c', clientSecret: 's' };
const oauth2 = {
  id: 'gh',
  name: 'GitHub',
  authorizationEndpoint: 'https://github.example/login/oauth/authorize',
  tokenEndpoint: 'https://github.example/login/oauth/access_token',
  userInfoEndpoint: 'https://api.github.example/user',
  clientId: 'c',
};
const findUser = () => null;
const parse = (options: unknown) => parseUpstreamOptions(options as UpstreamOptions, fail);

test.each<[string, unknown, RegExp]>([
  ['no providers', { providers: [], findUser }, /providers/],
  ['no findUser', { providers: [oidc] }, /findUser must be a function/],
  ['a bad id', { providers: [{ ...oidc, id: 'Has Space' }], findUser }, /id must be 1 to 32/],
  ['the same id twice', { providers: [oidc, oidc], findUser }, /used twice/],
  ['no name', { providers: [{ ...oidc, name: ' ' }], findUser }, /give a name/],
  ['no client id', { providers: [{ ...oidc, clientId: '' }], findUser }, /clientId/],
  [
    'an http issuer off loopback',
    { providers: [{ ...oidc, issuer: 'http://id.example' }], findUser },
    /https/,
  ],
  ['a relative endpoint', { providers: [{ ...oauth2, tokenEndpoint: '/token' }], findUser }, /tokenEndpoint/],
  [
    'neither issuer nor endpoints',
    { providers: [{ id: 'x', name: 'X', clientId: 'c' }], findUser },
    /issuer/,
  ],
  [
    'issuer and endpoints',
    { providers: [{ ...oauth2, issuer: 'https://id.example' }], findUser },
    /not both/,
  ],
  ['an OpenID scope without openid', { providers: [{ ...oidc, scope: 'email' }], findUser }, /openid/],
  ['a timeout out of range', { providers: [{ ...oidc, timeoutSeconds: 0 }], findUser }, /timeoutSeconds/],
  [
    'a non-string parameter',
    { providers: [{ ...oidc, authorizationParams: { a: 1 } }], findUser },
    /strings/,
  ],
])('refused: %s', (_name, options, message) => {
  expect(() => parse(options)).toThrow(message);
});

test('defaults: OpenID scope, tokens dropped, verified emails required; http allowed on loopback', () => {
  const config = parse({
    providers: [oidc, oauth2, { ...oidc, id: 'local', issuer: 'http://127.0.0.1:8080', keepTokens: true }],
    findUser,
  })!;
  expect(config.providers.get('oidc')).toMatchObject({
    kind: 'oidc',
    scope: 'openid email profile',
    keepTokens: false,
  });
  expect(config.providers.get('gh')).toMatchObject({ kind: 'oauth2', scope: '' });
  expect(config.requireVerifiedEmail).toBe(true);
  expect(config.keepsTokens).toBe(true);
  expect(parse(undefined)).toBeUndefined();
  expect(parse({ providers: [oidc], findUser, requireVerifiedEmail: false })!.requireVerifiedEmail).toBe(
    false,
  );
});
