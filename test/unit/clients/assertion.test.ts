// The audiences a client assertion may carry (draft-ietf-oauth-rfc7523bis-11 §4): the issuer first, its spelling with
// a trailing slash only where that is the same URL, and the token endpoint; never another endpoint's URL.
import { assertionAudiences } from '../../../lib/clients/assertion';

test.each([
  [
    'an issuer at the root of its host',
    'https://api.example',
    'https://api.example/v1/oauth/token',
    ['https://api.example', 'https://api.example/', 'https://api.example/v1/oauth/token'],
  ],
  [
    'an issuer with a path: "/tenant/" is another URL than "/tenant" (RFC 3986 §6.2.3), so only the exact one',
    'https://api.example/tenant',
    'https://api.example/tenant/v1/oauth/token',
    ['https://api.example/tenant', 'https://api.example/tenant/v1/oauth/token'],
  ],
  [
    'a loopback issuer on a port',
    'http://127.0.0.1:4000',
    'http://127.0.0.1:4000/token',
    ['http://127.0.0.1:4000', 'http://127.0.0.1:4000/', 'http://127.0.0.1:4000/token'],
  ],
])('%s', (_name, issuer, tokenEndpoint, audiences) => {
  expect(assertionAudiences(issuer, tokenEndpoint)).toEqual(audiences);
});
