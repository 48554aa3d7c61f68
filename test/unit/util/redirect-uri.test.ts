// The redirect-URI rules on their own (RFC 6749 §3.1.2, RFC 8252 §7, RFC 9700 §4.1): what may be registered, how a
// requested URI is matched (exact, but for the port of an http loopback URI), and the redirect built back to it.
import {
  clientRedirect,
  formActionSource,
  isLoopbackRedirect,
  matchRedirectUri,
  redirectUriProblem,
} from '../../../lib/util/redirect-uri';

/** An https URI of exactly `length` characters. */
const httpsOfLength = (length: number) => {
  const head = 'https://a.example/';
  return head + 'x'.repeat(length - head.length);
};

describe('registration refuses a redirect URI that could leak the code or run script', () => {
  test.each([
    ['not a string', 42, 'each redirect URI must be a non-empty string'],
    ['an empty string', '', 'each redirect URI must be a non-empty string'],
    ['padding past 2000 characters', httpsOfLength(2001), 'a redirect URI may have at most 2000 characters'],
    ['a relative URI', '/callback', '"/callback" is not an absolute URI'],
    [
      'a fragment (the code would reach other scripts)',
      'https://a.example/cb#x',
      'a redirect URI must not contain a fragment',
    ],
    ['an empty fragment', 'https://a.example/cb#', 'a redirect URI must not contain a fragment'],
    ['plain http to a public host', 'http://a.example/cb', /allowed only on a loopback host/],
    ['plain http to a look-alike of loopback', 'http://127.0.0.2/cb', /allowed only on a loopback host/],
    [
      'plain http to a host under localhost',
      'http://localhost.evil.example/cb',
      /allowed only on a loopback host/,
    ],
    ['a user name on https', 'https://user@a.example/cb', 'a redirect URI must not carry credentials'],
    ['a password on https', 'https://:secret@a.example/cb', 'a redirect URI must not carry credentials'],
    ['a user name on loopback http', 'http://user@127.0.0.1/cb', 'a redirect URI must not carry credentials'],
    [
      'a password on loopback http',
      'http://:secret@localhost/cb',
      'a redirect URI must not carry credentials',
    ],
  ])('%s', (_name, value, problem) => {
    if (typeof problem === 'string') expect(redirectUriProblem(value)).toBe(problem);
    else expect(redirectUriProblem(value)).toMatch(problem);
  });

  test('an unparseable URI is quoted in the message, cut at 100 characters', () => {
    const value = `not a uri ${'y'.repeat(200)}`;
    expect(redirectUriProblem(value)).toBe(`"${value.slice(0, 100)}" is not an absolute URI`);
  });

  test.each([
    ['a space', 'https://a.example/a b'],
    ['a tab', 'https://a.example/a\tb'],
    ['a double quote', 'https://a.example/a"b'],
    ['a single quote', "https://a.example/a'b"],
    ['an angle bracket <', 'https://a.example/<script>'],
    ['an angle bracket >', 'https://a.example/a>b'],
    ['a backslash (a slash to browsers, not to the registry)', 'https://a.example\\@evil.example/cb'],
    ['a caret', 'https://a.example/a^b'],
    ['a backtick', 'https://a.example/a`b'],
    ['a brace {', 'https://a.example/a{b'],
    ['a pipe', 'https://a.example/a|b'],
    ['a brace }', 'https://a.example/a}b'],
    ['a control character', 'https://a.example/a\u0001b'],
    ['DEL', 'https://a.example/a\u007fb'],
  ])('markup or header injection: %s', (_name, value) => {
    expect(redirectUriProblem(value)).toBe(
      'a redirect URI must not contain spaces, quotes or angle brackets',
    );
  });

  test.each([
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:text/html,hi'],
    ['file:', 'file:///etc/passwd'],
    ['vbscript:', 'vbscript:msgbox(1)'],
    ['blob:', 'blob:https://a.example/0f2b'],
    ['about:', 'about:blank'],
    ['filesystem:', 'filesystem:https://a.example/temporary/x'],
    ['ftp:', 'ftp://a.example/cb'],
    ['ws:', 'ws://127.0.0.1/cb'],
    ['wss:', 'wss://a.example/cb'],
    ['mailto:', 'mailto:a@a.example'],
    ['tel:', 'tel:+15550100'],
  ])('a scheme that is not a redirect target: %s', (scheme, value) => {
    expect(redirectUriProblem(value)).toBe(`the ${scheme} scheme is not allowed in a redirect URI`);
  });

  test.each([
    ['https', 'https://a.example/cb'],
    ['https of exactly 2000 characters', httpsOfLength(2000)],
    ['http on 127.0.0.1', 'http://127.0.0.1:33418/cb'],
    ['http on [::1]', 'http://[::1]:33418/cb'],
    ['http on localhost', 'http://localhost/cb'],
    ['a private-use scheme (RFC 8252 §7.1)', 'cursor://anysphere.cursor-retrieval/oauth/callback'],
    ['a reverse-domain private-use scheme', 'com.example.app:/oauth2redirect'],
  ])('accepts %s', (_name, value) => {
    expect(redirectUriProblem(value)).toBeNull();
  });
});

describe('matching a requested redirect URI', () => {
  const registered = ['https://client.example/cb', 'http://127.0.0.1:33418/cb', 'http://[::1]/cb'];

  test.each([
    ['the registered https URI', 'https://client.example/cb', 'https://client.example/cb'],
    ['the registered loopback URI', 'http://127.0.0.1:33418/cb', 'http://127.0.0.1:33418/cb'],
    [
      'a loopback URI on another port (RFC 8252 §7.3)',
      'http://127.0.0.1:50123/cb',
      'http://127.0.0.1:33418/cb',
    ],
    ['a loopback URI without a port', 'http://127.0.0.1/cb', 'http://127.0.0.1:33418/cb'],
    ['an IPv6 loopback URI on a port', 'http://[::1]:50123/cb', 'http://[::1]/cb'],
  ])('%s matches', (_name, requested, match) => {
    expect(matchRedirectUri(requested, registered)).toBe(match);
  });

  test.each([
    ['open redirect: another host', 'https://evil.example/cb'],
    ['open redirect: another port on https', 'https://client.example:8443/cb'],
    ['open redirect: another path on loopback', 'http://127.0.0.1:50123/other'],
    ['open redirect: another loopback name', 'http://localhost:33418/cb'],
    ['open redirect: a query added on loopback', 'http://127.0.0.1:50123/cb?x=1'],
    ['code leak: a fragment on loopback', 'http://127.0.0.1:50123/cb#x'],
    ['code leak: an empty fragment on loopback', 'http://127.0.0.1:33418/cb#'],
    ['normalisation: a dot segment on loopback', 'http://127.0.0.1:50123/x/../cb'],
    ['normalisation: an upper-case loopback name', 'http://LOCALHOST:50123/cb'],
    ['https on a loopback host', 'https://127.0.0.1:33418/cb'],
    ['not a URI', 'not a uri'],
  ])('%s does not match', (_name, requested) => {
    expect(matchRedirectUri(requested, registered)).toBeUndefined();
  });

  test.each([
    ['localhost', 'http://localhost/cb', 'http://localhost:50123/cb'],
    ['127.0.0.1', 'http://127.0.0.1/cb', 'http://127.0.0.1:50123/cb'],
    ['[::1]', 'http://[::1]:1/cb', 'http://[::1]:50123/cb'],
  ])('the port of a %s URI may vary, and only the port', (_name, known, requested) => {
    expect(matchRedirectUri(requested, [known])).toBe(known);
    expect(matchRedirectUri(requested.replace('/cb', '/cb2'), [known])).toBeUndefined();
  });

  test('a registered loopback URI that normalises to the request is not matched on another port', () => {
    expect(matchRedirectUri('http://127.0.0.1:50123/cb', ['http://127.0.0.1/x/../cb'])).toBeUndefined();
  });

  test('an https URI is matched exactly, even on a loopback host', () => {
    expect(matchRedirectUri('https://127.0.0.1:50123/cb', ['https://127.0.0.1/cb'])).toBeUndefined();
    expect(matchRedirectUri('https://127.0.0.1/cb', ['https://127.0.0.1/cb'])).toBe('https://127.0.0.1/cb');
  });
});

describe('isLoopbackRedirect', () => {
  test.each([
    ['http://127.0.0.1:5000/cb', true],
    ['http://[::1]/cb', true],
    ['http://localhost/cb', true],
    ['https://127.0.0.1/cb', false],
    ['http://a.example/cb', false],
    ['cursor://localhost/cb', false],
    ['not a uri', false],
  ])('%s: %s', (uri, loopback) => {
    expect(isLoopbackRedirect(uri)).toBe(loopback);
  });
});

describe('formActionSource', () => {
  test.each([
    ['https://client.example:8443/cb?x=1', 'https://client.example:8443'],
    ['http://127.0.0.1:33418/cb', 'http://127.0.0.1:33418'],
    ['cursor://anysphere.cursor-retrieval/cb', 'cursor:'],
  ])('%s: %s', (uri, source) => {
    expect(formActionSource(uri)).toBe(source);
  });
});

describe('the redirect back to the client', () => {
  const issuer = 'https://as.example';

  test.each([
    ['without state', undefined, 'https://client.example/cb?x=1&code=c1&iss=https%3A%2F%2Fas.example'],
    ['with an empty state', '', 'https://client.example/cb?x=1&code=c1&state=&iss=https%3A%2F%2Fas.example'],
    ['with state', 's1', 'https://client.example/cb?x=1&code=c1&state=s1&iss=https%3A%2F%2Fas.example'],
  ])('%s', (_name, state, href) => {
    const target = { redirectUri: 'https://client.example/cb?x=1', state, trusted: false };
    expect(clientRedirect(issuer, target, { code: 'c1' })).toBe(href);
  });

  test('mix-up: parameters planted in the registered URI are replaced, never doubled', () => {
    const target = {
      redirectUri: 'https://client.example/cb?code=planted&state=planted&iss=https%3A%2F%2Fevil.example',
      state: 's1',
      trusted: false,
    };
    const url = new URL(clientRedirect(issuer, target, { code: 'c1' }));
    expect(url.searchParams.getAll('code')).toEqual(['c1']);
    expect(url.searchParams.getAll('state')).toEqual(['s1']);
    expect(url.searchParams.getAll('iss')).toEqual([issuer]);
  });
});
