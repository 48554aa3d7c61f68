// A GitHub-shaped upstream for the upstream sign-in tests: a plain OAuth 2 server on loopback (node:http) that
// behaves like a GitHub OAuth app's flow, quirks included: no `iss` in the redirect, token errors as HTTP 200 with
// `bad_verification_code`, a form-encoded token response unless JSON is asked for, granted scopes joined by commas,
// `token <t>` as well as `Bearer <t>`, and a user whose email is null unless /user/emails is read.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GithubDouble {
  /** http://127.0.0.1:PORT; authorize at /login/oauth/authorize, tokens at /login/oauth/access_token. */
  url: string;
  clientId: string;
  clientSecret: string;
  /** Requests seen (live counters): the token endpoint (any outcome), GET /user, GET /user/emails. */
  requests: { token: number; user: number; emails: number };
  close(): Promise<void>;
}

interface GithubUser {
  id: number;
  login: string;
  name: string;
  email: string | null;
  emails: Array<{ email: string; verified: boolean; primary: boolean; visibility: string | null }>;
}

/** `octo` has a public, verified primary email; `nomail` has no public email and one unverified address. */
const GITHUB_USERS: GithubUser[] = [
  {
    id: 1,
    login: 'octo',
    name: 'Octo Cat',
    email: 'octo@github.test',
    emails: [{ email: 'octo@github.test', verified: true, primary: true, visibility: 'public' }],
  },
  {
    id: 2,
    login: 'nomail',
    name: 'No Mail',
    email: null,
    emails: [{ email: 'nomail@github.test', verified: false, primary: true, visibility: null }],
  },
];

const AUTHORIZE = '/login/oauth/authorize';
const PARAMS = ['client_id', 'redirect_uri', 'state', 'scope', 'code_challenge', 'code_challenge_method'];

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
const same = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body><main><h1>${title}</h1>${body}</main></body></html>`;

const authorizePage = (params: URLSearchParams, error?: string) =>
  page(
    'Authorize application',
    `${error ? `<p role="alert">${escape(error)}</p>` : ''}<form method="post" action="${AUTHORIZE}">` +
      PARAMS.filter((name) => params.has(name))
        .map((name) => `<input type="hidden" name="${name}" value="${escape(params.get(name)!)}">`)
        .join('') +
      '<label for="login">Username</label><input id="login" name="login" autocomplete="username" required>' +
      '<button type="submit">Authorize</button></form>',
  );

const readBody = async (req: IncomingMessage) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
};

export async function startGithubDouble(options: { redirectUris: string[] }): Promise<GithubDouble> {
  const clientId = `Iv1.${randomBytes(8).toString('hex')}`;
  const clientSecret = randomBytes(20).toString('hex');
  const requests = { token: 0, user: 0, emails: 0 };
  const codes = new Map<
    string,
    { login: string; redirectUri: string; scope: string; challenge?: string; expires: number }
  >();
  const tokens = new Map<string, { login: string; scope: string }>();

  const send = (res: ServerResponse, status: number, type: string, body: string, headers = {}) => {
    res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers });
    res.end(body);
  };
  const json = (res: ServerResponse, status: number, value: unknown) =>
    send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
  const html = (res: ServerResponse, status: number, body: string) =>
    send(res, status, 'text/html; charset=utf-8', body);

  /** The authorization request's client and redirect URI, or the reason to refuse it (a 400 page, no redirect). */
  const checkClient = (params: URLSearchParams) => {
    if (params.get('client_id') !== clientId) return { problem: 'The client_id is not registered.' };
    const redirectUri = params.get('redirect_uri') ?? options.redirectUris[0]!;
    if (!options.redirectUris.includes(redirectUri))
      return { problem: 'The redirect_uri is not associated with this application.' };
    return { redirectUri };
  };

  const redirect = (res: ServerResponse, redirectUri: string, values: Record<string, string | null>) => {
    const target = new URL(redirectUri);
    for (const [name, value] of Object.entries(values))
      if (value !== null) target.searchParams.set(name, value);
    send(res, 302, 'text/html; charset=utf-8', '', { Location: target.href });
  };

  const tokenResponse = (req: IncomingMessage, res: ServerResponse, value: Record<string, string>) => {
    if (/application\/json/.test(req.headers.accept ?? '')) return json(res, 200, value);
    send(res, 200, 'application/x-www-form-urlencoded; charset=utf-8', new URLSearchParams(value).toString());
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === AUTHORIZE) {
      const { problem } = checkClient(url.searchParams);
      if (problem) return html(res, 400, page('Bad request', `<p role="alert">${escape(problem)}</p>`));
      return html(res, 200, authorizePage(url.searchParams));
    }
    if (req.method === 'POST' && url.pathname === AUTHORIZE) {
      const params = await readBody(req);
      const { problem, redirectUri } = checkClient(params);
      if (problem) return html(res, 400, page('Bad request', `<p role="alert">${escape(problem)}</p>`));
      const state = params.get('state');
      const login = params.get('login') ?? '';
      if (login === 'refuse')
        return redirect(res, redirectUri!, {
          error: 'access_denied',
          error_description: 'The user has denied your application access.',
          error_uri:
            'https://docs.github.com/apps/troubleshooting-authorization-request-errors/#access-denied',
          state,
        });
      if (!GITHUB_USERS.some((user) => user.login === login))
        return html(res, 401, authorizePage(params, 'Incorrect username.'));
      const challenge = params.get('code_challenge') ?? undefined;
      if (challenge && params.get('code_challenge_method') !== 'S256')
        return redirect(res, redirectUri!, {
          error: 'invalid_request',
          error_description: 'code_challenge_method must be S256.',
          state,
        });
      const code = randomBytes(10).toString('hex');
      const scope = (params.get('scope') ?? '').split(/[ ,]+/).filter(Boolean).join(',');
      codes.set(code, { login, redirectUri: redirectUri!, scope, challenge, expires: Date.now() + 600_000 });
      return redirect(res, redirectUri!, { code, state });
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      requests.token += 1;
      const body = await readBody(req);
      let id = body.get('client_id');
      let secret = body.get('client_secret');
      const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
      if (basic) {
        const decoded = Buffer.from(basic[1]!, 'base64').toString();
        const colon = decoded.indexOf(':');
        id = decodeURIComponent(decoded.slice(0, colon));
        secret = decodeURIComponent(decoded.slice(colon + 1));
      }
      if (id !== clientId || !secret || !same(secret, clientSecret))
        return tokenResponse(req, res, {
          error: 'incorrect_client_credentials',
          error_description: 'The client_id and/or client_secret passed are incorrect.',
        });
      const code = codes.get(body.get('code') ?? '');
      codes.delete(body.get('code') ?? '');
      const verifier = body.get('code_verifier');
      const badCode = (description: string) =>
        tokenResponse(req, res, { error: 'bad_verification_code', error_description: description });
      if (!code || code.expires < Date.now()) return badCode('The code passed is incorrect or expired.');
      const redirectUri = body.get('redirect_uri');
      if (redirectUri !== null && redirectUri !== code.redirectUri)
        return tokenResponse(req, res, {
          error: 'redirect_uri_mismatch',
          error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
        });
      if (code.challenge ? !verifier || sha256(verifier) !== code.challenge : verifier)
        return badCode('The code_verifier does not match the code_challenge.');
      const accessToken = `gho_${randomBytes(18).toString('base64url')}`;
      tokens.set(accessToken, { login: code.login, scope: code.scope });
      return tokenResponse(req, res, { access_token: accessToken, token_type: 'bearer', scope: code.scope });
    }
    if (req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) {
      if (url.pathname === '/user') requests.user += 1;
      else requests.emails += 1;
      const token = /^(?:Bearer|token) (\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
      const grant = token ? tokens.get(token) : undefined;
      const user = GITHUB_USERS.find((candidate) => candidate.login === grant?.login);
      if (!user)
        return json(res, 401, {
          message: 'Bad credentials',
          documentation_url: 'https://docs.github.com/rest',
        });
      if (url.pathname === '/user/emails') return json(res, 200, user.emails);
      return json(res, 200, { id: user.id, login: user.login, name: user.name, email: user.email });
    }
    json(res, 404, { message: 'Not Found' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) json(res, 500, { message: error.message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    clientId,
    clientSecret,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** Opens the authorization URL, submits `login` on the form, returns the redirect Location (code or error). */
export async function signInGithubWithFetch(authorizationUrl: string, login: string): Promise<string> {
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  const html = await page.text();
  if (page.status !== 200) throw new Error(`GitHub double refused the authorization request: ${html}`);
  const fields: Array<[string, string]> = [
    ...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g),
  ].map((m) => [m[1]!, m[2]!.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)))]);
  const res = await fetch(new URL(AUTHORIZE, authorizationUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams([...fields, ['login', login]]),
  });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location)
    throw new Error(`GitHub double did not redirect (${res.status}): ${await res.text()}`);
  return location;
}
