// Step-up (the MCP authorization spec): a client that authorizes again for more scopes gets tokens that carry what the
// user allowed it before too, never less than it had. The consent page shows what was allowed before as such and asks
// only about what is new; the earlier grant ends when the new code is redeemed, so one grant carries the union; a
// denial, or a code never redeemed, leaves the earlier grant as it was.
import fc from 'fast-check';
import request from 'supertest';
import { inEditLoop } from '../helpers/edit-loop';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  formOf,
  registerClient,
  RESOURCE,
  tokenRequest,
  USER,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';
import { claimsOf } from '../helpers/dpop';
import type { OAuthEvent } from '../../lib';

let server: TestServer;
beforeEach(() => {
  server = createTestServer({ resources: [RESOURCE, `${RESOURCE}/files`] });
});
afterEach(() => server.close());

let events: OAuthEvent[];
beforeEach(() => {
  events = [];
  server.close();
  server = createTestServer({
    resources: [RESOURCE, `${RESOURCE}/files`],
    onEvent: (event) => void events.push(event),
  });
});

type Tokens = { access_token: string; scope: string; refresh_token: string };

async function authorize(
  client: RegisteredClient,
  overrides: Record<string, string | undefined>,
  decision: 'allow' | 'deny' = 'allow',
  ticked?: string[],
): Promise<Tokens | { error: string | null }> {
  const { code, pkce, location } = await authorizeInBrowser(server.app, client, overrides, decision, ticked);
  if (!code) return { error: location.searchParams.get('error') };
  const res = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: pkce.verifier,
  });
  return res.body as Tokens;
}

/** The scopes a consent page asks about (its checkboxes) and shows as allowed before. */
function pageScopes(page: string): { asked: string[]; allowed: string[] } {
  const asked = [...page.matchAll(/<input type="checkbox"[^>]* name="scope" value="([^"]+)"/g)].map(
    (m) => m[1]!,
  );
  const kept = /<ul class="scopes allowed">([\s\S]*?)<\/ul>\s*<p class="muted">/.exec(page)?.[1] ?? '';
  const allowed = [...kept.matchAll(/<li><span title="([^"]+)">/g)].map((m) => m[1]!);
  return { asked, allowed };
}

const grantIdOf = (token: object) => claimsOf((token as Tokens).access_token).grant_id as string;

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

test('the page shows what was allowed before as such, and asks only about what is new', async () => {
  const client = await registerClient(server.app);
  await authorize(client, { scope: 'fakture:read' });
  // As the MCP SDK 1.x client asks after a 403: the challenge's scope, the token's and the tool's together.
  const { page } = await authorizeInBrowser(
    server.app,
    client,
    { scope: 'fakture:read clients:read' },
    'deny',
  );
  expect(pageScopes(page)).toEqual({ asked: ['clients:read'], allowed: ['fakture:read'] });
  expect(page).toContain('It can already:');
  expect(page).toContain('It now also asks to:');
  // A first consent asks about everything, as before.
  const other = await registerClient(server.app);
  const first = await authorizeInBrowser(server.app, other, { scope: 'fakture:read clients:read' }, 'deny');
  expect(pageScopes(first.page)).toEqual({ asked: ['fakture:read', 'clients:read'], allowed: [] });
  expect(first.page).not.toContain('It can already:');
});

test('what was allowed before is kept, whatever the form sends: it is not the page’s question', async () => {
  const client = await registerClient(server.app);
  await authorize(client, { scope: 'fakture:read' });
  // A form that sends only the new scope, or none of the old.
  const stepped = await authorize(client, { scope: 'fakture:read clients:read' }, 'allow', ['clients:read']);
  expect(scopesOf(stepped)).toEqual(['clients:read', 'fakture:read']);
  // Nothing new ticked: the same access again, not a denial.
  const again = await authorize(client, { scope: 'fakture:read company:read' }, 'allow', []);
  expect(scopesOf(again)).toEqual(['clients:read', 'fakture:read']);
});

test('one grant carries the union: the earlier one ends when the new code is redeemed', async () => {
  const client = await registerClient(server.app);
  const first = (await authorize(client, { scope: 'fakture:read' })) as Tokens;
  const stepped = await authorize(client, { scope: 'clients:read' });
  const active = await server.store.listActiveGrants(USER.id);
  expect(active.map((grant) => grant.grantId)).toEqual([grantIdOf(stepped)]);
  expect(active[0]!.scopes.sort()).toEqual(['clients:read', 'fakture:read']);
  // The earlier refresh chain is over; its access token is refused at once.
  const old = await tokenRequest(server.app, client, {
    grant_type: 'refresh_token',
    refresh_token: first.refresh_token,
  });
  expect(old.body.error).toBe('invalid_grant');
  const call = await request(server.app).post('/mcp').set('Authorization', `Bearer ${first.access_token}`);
  expect(call.status).toBe(401);
  expect(events.filter((event) => event.type === 'grant.revoked')).toEqual([
    expect.objectContaining({
      grantId: grantIdOf(first),
      by: 'replaced',
      clientId: client.client_id,
      userId: USER.id,
    }),
  ]);
});

test('a grant revoked while the page is open gives nothing: the form is judged on the grants of that moment', async () => {
  const client = await registerClient(server.app);
  const first = await authorize(client, { scope: 'fakture:read' });
  const { browser } = await authorizeInBrowser(server.app, client, { scope: 'clients:read' }, 'deny');
  const { query, pkce } = authorizeQuery(client, { scope: 'clients:read' });
  const page = await browser.get(`/v1/oauth/authorize?${query}`);
  expect(pageScopes(page.text)).toEqual({ asked: ['clients:read'], allowed: ['fakture:read'] });
  await server.oauth.revokeGrant(grantIdOf(first));
  const form = formOf(page.text);
  const decided = await browser
    .post(form.action)
    .type('form')
    .send({ ...form.fields, decision: 'allow' });
  const code = new URL(decided.headers.location!).searchParams.get('code')!;
  const tokens = await tokenRequest(server.app, client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: pkce.verifier,
  });
  expect(scopesOf(tokens.body)).toEqual(['clients:read']);
});

test('a code never redeemed leaves the earlier grant as it was', async () => {
  const client = await registerClient(server.app);
  const first = (await authorize(client, { scope: 'fakture:read' })) as Tokens;
  const { code } = await authorizeInBrowser(server.app, client, { scope: 'clients:read' });
  expect(code).toBeDefined();
  const refreshed = await tokenRequest(server.app, client, {
    grant_type: 'refresh_token',
    refresh_token: first.refresh_token,
  });
  expect(refreshed.status).toBe(200);
  expect(events.some((event) => event.type === 'grant.revoked')).toBe(false);
});

test('of two step-ups, the later consent’s grant stays, whichever code comes first', async () => {
  const client = await registerClient(server.app);
  await authorize(client, { scope: 'fakture:read' });
  const earlier = await authorizeInBrowser(server.app, client, { scope: 'clients:read' });
  server.clock.advance(1000);
  const later = await authorizeInBrowser(server.app, client, { scope: 'company:read' });
  const redeem = (flow: typeof earlier) =>
    tokenRequest(server.app, client, {
      grant_type: 'authorization_code',
      code: flow.code!,
      redirect_uri: client.redirect_uris[0]!,
      code_verifier: flow.pkce.verifier,
    });
  // The earlier consent's code first: it ends the first grant, never the later consent's, whose code still waits.
  const earlierAnswer = await redeem(earlier);
  expect(earlierAnswer.status).toBe(200);
  const laterTokens = (await redeem(later)).body;
  const active = (await server.store.listActiveGrants(USER.id)).map((grant) => grant.grantId);
  expect(active).toEqual([grantIdOf(laterTokens)]);
  expect(scopesOf(laterTokens)).toEqual(['clients:read', 'company:read', 'fakture:read']);
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

test('a scope taken out of the catalogue since the earlier consent is not given again', async () => {
  const client = await registerClient(server.app);
  const first = await authorize(client, { scope: 'fakture:read' });
  const grant = await server.store.findGrant(
    claimsOf((first as { access_token: string }).access_token).grant_id as string,
  );
  // As a store written by an older release with a scope the catalogue no longer has.
  await server.store.createGrant({
    ...grant!,
    grantId: `${grant!.grantId}-old`,
    scopes: ['retired:scope', 'company:read'],
  });
  const stepped = await authorize(client, { scope: 'clients:read' });
  expect(scopesOf(stepped)).toEqual(['clients:read', 'company:read', 'fakture:read']);
});

const SCOPES = ['fakture:read', 'clients:read', 'products:read', 'company:read'];
type Step =
  | { kind: 'consent'; client: number; asked: string[]; ticked: boolean[]; allow: boolean }
  | { kind: 'refresh'; client: number; narrow: string[] | null }
  | { kind: 'revoke'; client: number };

test('property: no sequence of consents, denials, refreshes and revocations gives a scope the person did not allow, nor leaves two grants', async () => {
  const client = fc.integer({ min: 0, max: 1 });
  // Consents mostly allowed, and more of them than anything else, so that most runs hold tokens to check.
  const step: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('consent' as const),
        client,
        asked: fc.subarray(SCOPES, { minLength: 1 }),
        // The first box stays ticked, so that an allowed consent gives tokens to check (allowing nothing is a denial,
        // which authorize.test.ts covers); the others at random.
        ticked: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }).map((rest) => [true, ...rest]),
        allow: fc.constantFrom(true, true, false),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('refresh' as const),
        client,
        narrow: fc.option(fc.subarray(SCOPES, { minLength: 1 }), { nil: null }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), client }) },
  );
  // Every run starts with an allowed consent, so none is vacuous; what follows is random.
  const opening = fc.record({
    kind: fc.constant('consent' as const),
    client,
    asked: fc.subarray(SCOPES, { minLength: 1 }),
    ticked: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }).map((rest) => [true, ...rest]),
    allow: fc.constant(true),
  });
  const runs = inEditLoop ? 10 : 30;
  let tokensSeen = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.tuple(opening, fc.array(step, { maxLength: 5 })).map(([first, rest]): Step[] => [first, ...rest]),
      async (steps) => {
        server.close();
        server = createTestServer({ resources: [RESOURCE, `${RESOURCE}/files`] });
        const clients = [await registerClient(server.app), await registerClient(server.app)];
        // What the person ever allowed each client: every token must stay within it.
        const allowed = [new Set<string>(), new Set<string>()];
        const latest: ({ access_token: string; refresh_token: string } | undefined)[] = [
          undefined,
          undefined,
        ];
        const check = (index: number, token: { scope?: string; access_token?: string }) => {
          if (!token.access_token) return;
          tokensSeen += 1;
          for (const scope of token.scope!.split(' ')) expect(allowed[index]!.has(scope)).toBe(true);
        };
        for (const one of steps) {
          const target = clients[one.client]!;
          if (one.kind === 'consent') {
            const ticked = one.asked.filter((_, position) => one.ticked[position]);
            const answer = await authorize(
              target,
              { scope: one.asked.join(' ') },
              one.allow ? 'allow' : 'deny',
              ticked,
            );
            if (one.allow) for (const scope of ticked) allowed[one.client]!.add(scope);
            if ('access_token' in answer) {
              check(one.client, answer);
              latest[one.client] = answer;
            }
          } else if (one.kind === 'refresh' && latest[one.client]) {
            const res = await tokenRequest(server.app, target, {
              grant_type: 'refresh_token',
              refresh_token: latest[one.client]!.refresh_token,
              ...(one.narrow ? { scope: one.narrow.join(' ') } : {}),
            });
            check(one.client, res.body);
            if (res.body.refresh_token) latest[one.client] = res.body;
          } else if (one.kind === 'revoke' && latest[one.client]) {
            await server.oauth.revokeGrant(claimsOf(latest[one.client]!.access_token).grant_id as string);
          }
          // One grant per client: a step-up's replaced the one before it.
          const active = await server.store.listActiveGrants(USER.id);
          for (const each of clients)
            expect(active.filter((grant) => grant.clientId === each.client_id).length).toBeLessThanOrEqual(1);
        }
      },
    ),
    { numRuns: runs },
  );
  // Not a property of refusals alone: every run held tokens to check.
  expect(tokensSeen).toBeGreaterThanOrEqual(runs);
});
