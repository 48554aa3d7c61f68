// Step-up (the MCP authorization spec): a client that authorizes again for more scopes gets tokens that carry what the
// user allowed it before too, never less than it had; what it asks for again is the user's to decide again; a denial
// leaves the earlier grant as it was.
import fc from 'fast-check';
import request from 'supertest';
import { inEditLoop } from '../helpers/edit-loop';
import {
  authorizeInBrowser,
  createTestServer,
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
  ticked?: string[],
): Promise<{ access_token: string; scope: string; refresh_token: string } | { error: string | null }> {
  const { code, pkce, location } = await authorizeInBrowser(server.app, client, overrides, decision, ticked);
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
  const unticked = await authorize(client, { scope: 'fakture:read clients:read' }, 'allow', ['clients:read']);
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

test('property: no sequence of consents, denials, refreshes and revocations gives a scope the person did not allow', async () => {
  const client = fc.integer({ min: 0, max: 1 });
  // Consents mostly allowed, and more of them than anything else, so that most runs hold tokens to check.
  const step: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('consent' as const),
        client,
        asked: fc.subarray(SCOPES, { minLength: 1 }),
        ticked: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
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
  const runs = inEditLoop ? 10 : 30;
  let tokensSeen = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
      server.close();
      server = createTestServer({ resources: [RESOURCE, `${RESOURCE}/files`] });
      const clients = [await registerClient(server.app), await registerClient(server.app)];
      // What the person ever allowed each client: every token must stay within it.
      const allowed = [new Set<string>(), new Set<string>()];
      const latest: ({ access_token: string; refresh_token: string } | undefined)[] = [undefined, undefined];
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
      }
    }),
    { numRuns: runs },
  );
  // Not a property of refusals alone: most runs hold tokens.
  expect(tokensSeen).toBeGreaterThan(runs / 2);
});
