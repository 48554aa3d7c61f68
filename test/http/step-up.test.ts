// Step-up (the MCP authorization spec): a client that authorizes again for more scopes gets tokens that carry what the
// user allowed it before too, never less than it had; what it asks for again is the user's to decide again; a denial
// leaves the earlier grant as it was.
import request from 'supertest';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  formOf,
  USER,
  registerClient,
  RESOURCE,
  tokenRequest,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';
import { claimsOf } from '../helpers/dpop';

let server: TestServer;
beforeEach(() => {
  server = createTestServer({ resources: [RESOURCE, `${RESOURCE}/files`] });
});
afterEach(() => server.close());

async function authorize(
  client: RegisteredClient,
  overrides: Record<string, string | undefined>,
  decision: 'allow' | 'deny' = 'allow',
): Promise<{ access_token: string; scope: string; refresh_token: string } | { error: string | null }> {
  const { code, pkce, location } = await authorizeInBrowser(server.app, client, overrides, decision);
  if (!code) return { error: location.searchParams.get('error') };
  const res = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: pkce.verifier,
  });
  return res.body as { access_token: string; scope: string; refresh_token: string };
}

const scopesOf = (token: object) => (token as { scope: string }).scope.split(' ').sort();

test('authorizing again for more gives tokens with all of it: what was allowed before, and what is new', async () => {
  const client = await registerClient(server.app);
  await authorize(client, { scope: 'fakture:read' });
  const stepped = await authorize(client, { scope: 'clients:read' });
  expect(scopesOf(stepped)).toEqual(['clients:read', 'fakture:read']);
  expect(
    (claimsOf((stepped as { access_token: string }).access_token).scope as string).split(' ').sort(),
  ).toEqual(['clients:read', 'fakture:read']);
  // A refresh keeps all of it.
  const refreshed = await tokenRequest(server.app, client, {
    grant_type: 'refresh_token',
    refresh_token: (stepped as { refresh_token: string }).refresh_token,
  });
  expect(scopesOf(refreshed.body)).toEqual(['clients:read', 'fakture:read']);
});

test('a scope asked for again and unticked now stays out: the user’s latest word', async () => {
  const client = await registerClient(server.app);
  await authorize(client, { scope: 'fakture:read' });
  // The consent page is asked for both; the user leaves fakture:read unticked.
  const unticked = await authorizeUnticking(client, 'fakture:read clients:read', ['clients:read']);
  expect(scopesOf(unticked)).toEqual(['clients:read']);
});

test('a denial leaves the earlier grant as it was', async () => {
  const client = await registerClient(server.app);
  const first = await authorize(client, { scope: 'fakture:read' });
  const denied = await authorize(client, { scope: 'clients:read' }, 'deny');
  expect(denied).toEqual({ error: 'access_denied' });
  const call = await request(server.app)
    .post('/mcp')
    .set('Authorization', `Bearer ${(first as { access_token: string }).access_token}`);
  expect(call.status).toBe(200);
});

test('only the same client, for the same resource, in grants still active', async () => {
  const client = await registerClient(server.app);
  const other = await registerClient(server.app);
  await authorize(other, { scope: 'products:read' });
  await authorize(client, { scope: 'fakture:read', resource: `${RESOURCE}/files` });
  const revoked = await authorize(client, { scope: 'company:read' });
  await server.oauth.revokeGrant(
    claimsOf((revoked as { access_token: string }).access_token).grant_id as string,
  );
  const fresh = await authorize(client, { scope: 'clients:read' });
  expect(scopesOf(fresh)).toEqual(['clients:read']);
});

/** The consent page with only `ticked` left ticked, as a person unticking boxes would send it. */
async function authorizeUnticking(client: RegisteredClient, scope: string, ticked: string[]) {
  const browser = request.agent(server.app);
  const { query, pkce } = authorizeQuery(client, { scope });
  const login = await browser.get(`/v1/oauth/authorize?${query}`);
  const signIn = formOf(login.text);
  const signedIn = await browser
    .post(signIn.action)
    .type('form')
    .send({ ...signIn.fields, email: USER.email, password: USER.password });
  const next = new URL(signedIn.headers.location!);
  const consent = await browser.get(next.pathname + next.search);
  const form = formOf(consent.text);
  const decided = await browser
    .post(form.action)
    .type('form')
    .send({ ...form.fields, scope: ticked, decision: 'allow' });
  const code = new URL(decided.headers.location!).searchParams.get('code')!;
  const res = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: pkce.verifier,
  });
  return res.body as { scope: string };
}
