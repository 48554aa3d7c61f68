// The token endpoint, refusal by refusal: what the grants table offers, and for each refusal of the code and refresh
// grants its code, its description (the client's only clue to what to fix) and its event. The happy paths and the
// attacks live in token.test.ts and the flows; this file pins the words and the events, and the store's race outcomes.
import jwt from 'jsonwebtoken';
import request from 'supertest';
import type { OAuthEvent } from '../../lib/events';
import type { OAuthRouterOptions } from '../../lib/options';
import {
  authorizeInBrowser,
  createTestServer,
  ISSUER,
  registerClient,
  RESOURCE,
  tokenRequest,
  USER,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';
import { DAY, SECOND } from '../helpers/clock';

const OTHER_RESOURCE = `${ISSUER}/other`;
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

let server: TestServer;
let events: OAuthEvent[];
function start(options: Partial<OAuthRouterOptions> = {}) {
  events = [];
  server = createTestServer({
    resources: [RESOURCE, OTHER_RESOURCE],
    onEvent: (event) => void events.push(event),
    ...options,
  });
}
beforeEach(() => start());
afterEach(() => server.close());

const eventsOf = (type: OAuthEvent['type']) => events.filter((event) => event.type === type);

async function codeRequest(client: RegisteredClient, overrides: Record<string, string | undefined> = {}) {
  const { code, pkce } = await authorizeInBrowser(server.app, client, overrides);
  return {
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: client.redirect_uris[0]!,
    code_verifier: pkce.verifier,
  };
}

async function publicClient(metadata: Record<string, unknown> = {}) {
  return registerClient(server.app, { token_endpoint_auth_method: 'none', ...metadata });
}

/** A public client holding fresh tokens (and the grant's id). */
async function withTokens() {
  const client = await publicClient();
  const res = await tokenRequest(server.app, client, await codeRequest(client));
  expect(res.status).toBe(200);
  const { grant_id: grantId } = jwt.decode(res.body.access_token) as { grant_id: string };
  return { client, refreshToken: res.body.refresh_token as string, grantId };
}

describe('the grants table', () => {
  test.each([
    ['without enterprise IdPs', {}, 'authorization_code, refresh_token or client_credentials'],
    [
      'with enterprise IdPs',
      { enterpriseIdps: { issuers: ['https://idp.example'], findUser: () => null } },
      `authorization_code, refresh_token, client_credentials or ${JWT_BEARER}`,
    ],
  ])('%s: an unknown grant_type is told the ones offered', async (_name, options, offered) => {
    server.close();
    start(options);
    const client = await publicClient();
    const res = await tokenRequest(server.app, client, { grant_type: 'password' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'unsupported_grant_type',
      error_description: `Use grant_type ${offered}.`,
    });
    // Not one of the grant types: the event does not repeat what the stranger sent.
    expect(eventsOf('token.refused')).toEqual([
      expect.not.objectContaining({ grantType: expect.anything() }),
    ]);
    // And metadata lists the same grants, from the same table (RFC 8414 §2).
    const metadata = await request(server.app).get('/.well-known/oauth-authorization-server');
    expect(metadata.body.grant_types_supported).toEqual(offered.replace(' or ', ', ').split(', '));
  });

  test('jwt-bearer is not offered without enterprise IdPs, though it is a grant type events know', async () => {
    const client = await publicClient();
    const res = await tokenRequest(server.app, client, { grant_type: JWT_BEARER, assertion: 'x' });
    expect(res.body.error).toBe('unsupported_grant_type');
    expect(eventsOf('token.refused')).toEqual([
      expect.objectContaining({ reason: 'unsupported_grant_type', grantType: JWT_BEARER }),
    ]);
  });

  test('a grant the client did not register is unauthorized_client, named', async () => {
    const client = await publicClient();
    const res = await tokenRequest(server.app, client, { grant_type: 'client_credentials' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'unauthorized_client',
      error_description: 'This client did not register the client_credentials grant type.',
    });
    expect(eventsOf('token.refused')).toEqual([
      expect.objectContaining({ reason: 'unauthorized_client', grantType: 'client_credentials' }),
    ]);
  });

  test('a failure that is not an OAuth refusal (the store down) is no token.refused event', async () => {
    const client = await publicClient();
    const body = await codeRequest(client);
    jest.spyOn(server.store, 'findAuthorizationCode').mockImplementation(() => {
      throw new Error('disk on fire');
    });
    const res = await tokenRequest(server.app, client, body);
    expect(res.status).toBe(500);
    expect(eventsOf('token.refused')).toEqual([]);
  });
});

describe('authorization_code: each refusal, its words and its event', () => {
  test.each([
    [
      'a code_verifier of the wrong shape',
      (body: Record<string, string>) => ({ ...body, code_verifier: 'short' }),
      'invalid_request',
      'code_verifier must be 43 to 128 characters of [A-Z a-z 0-9 - . _ ~].',
    ],
    [
      'a code never issued',
      (body: Record<string, string>) => ({ ...body, code: 'never-issued' }),
      'invalid_grant',
      'The authorization code is invalid or has expired.',
    ],
    [
      // A leading dot names no DPoP key (authorize/handlers.ts writes "<jkt>.<secret>"): not a DPoP refusal.
      'a code that starts with a dot',
      (body: Record<string, string>) => ({ ...body, code: `.${body.code}` }),
      'invalid_grant',
      'The authorization code is invalid or has expired.',
    ],
    [
      'another redirect_uri',
      (body: Record<string, string>) => ({ ...body, redirect_uri: 'https://client.example/other' }),
      'invalid_grant',
      'redirect_uri differs from the one in the authorization request.',
    ],
    [
      'another resource than the one authorized',
      (body: Record<string, string>) => ({ ...body, resource: OTHER_RESOURCE }),
      'invalid_target',
      'The resource differs from the one authorized.',
    ],
  ])('%s', async (_name, change, error, description) => {
    const client = await publicClient();
    const res = await tokenRequest(server.app, client, change(await codeRequest(client)));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error, error_description: description });
    expect(eventsOf('token.refused')).toEqual([
      expect.objectContaining({ reason: error, grantType: 'authorization_code' }),
    ]);
    expect(eventsOf('code.replayed')).toEqual([]);
  });

  test("another client's code", async () => {
    const owner = await publicClient();
    const thief = await publicClient();
    const res = await tokenRequest(server.app, thief, await codeRequest(owner));
    expect(res.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The authorization code was issued to another client.',
    });
  });

  test('a wrong verifier burns the code and revokes the grant: code.replayed, reason pkce_mismatch', async () => {
    const client = await publicClient();
    const body = await codeRequest(client);
    const res = await tokenRequest(server.app, client, { ...body, code_verifier: 'x'.repeat(43) });
    expect(res.body).toEqual({
      error: 'invalid_grant',
      error_description: 'code_verifier does not match the code_challenge.',
    });
    expect(eventsOf('code.replayed')).toEqual([
      expect.objectContaining({
        clientId: client.client_id,
        userId: USER.id,
        grantId: expect.any(String),
        reason: 'pkce_mismatch',
      }),
    ]);
    const again = await tokenRequest(server.app, client, body);
    expect(again.body.error).toBe('invalid_grant');
  });

  test('a code used twice: code.replayed, reason replay, with the ids of the code', async () => {
    const client = await publicClient();
    const body = await codeRequest(client);
    const first = await tokenRequest(server.app, client, body);
    const { grant_id: grantId } = jwt.decode(first.body.access_token) as { grant_id: string };
    const res = await tokenRequest(server.app, client, body);
    expect(res.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The authorization code was already used; the tokens issued from it are revoked.',
    });
    expect(eventsOf('code.replayed')).toEqual([
      expect.objectContaining({ clientId: client.client_id, userId: USER.id, grantId, reason: 'replay' }),
    ]);
    const [redeemed] = eventsOf('code.redeemed');
    expect(redeemed).toMatchObject({ clientId: client.client_id, userId: USER.id, grantId });
    // A bearer token's redemption names no key.
    expect('jkt' in redeemed!).toBe(false);
  });

  test.each([
    [
      'the code gone (expired, or spent by a parallel request)',
      { status: 'not_found' },
      'The authorization code is invalid or has expired.',
    ],
    [
      'the grant revoked as the code was spent',
      { status: 'consumed', grant: null },
      'The authorization was revoked.',
    ],
  ] as const)('the store says %s', async (_name, outcome, description) => {
    const client = await publicClient();
    const body = await codeRequest(client);
    jest.spyOn(server.store, 'consumeAuthorizationCode').mockResolvedValueOnce(outcome as never);
    const res = await tokenRequest(server.app, client, body);
    expect(res.body).toEqual({ error: 'invalid_grant', error_description: description });
  });

  test('a code authorized for the second resource needs no resource parameter, and its token is for it', async () => {
    const client = await publicClient();
    const res = await tokenRequest(
      server.app,
      client,
      await codeRequest(client, { resource: OTHER_RESOURCE }),
    );
    expect(res.status).toBe(200);
    expect(jwt.decode(res.body.access_token)).toMatchObject({ aud: OTHER_RESOURCE });
  });

  test('a code authorized without a resource gives a token for the default one (RFC 8707 §2)', async () => {
    const client = await publicClient();
    const res = await tokenRequest(server.app, client, await codeRequest(client, { resource: undefined }));
    expect(res.status).toBe(200);
    expect(jwt.decode(res.body.access_token)).toMatchObject({ aud: RESOURCE });
  });
});

describe('refresh_token: each refusal, its words and its event', () => {
  const refresh = (client: RegisteredClient, refreshToken: string, extra: Record<string, string> = {}) =>
    tokenRequest(server.app, client, { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra });

  test('a revoked grant: without a scope the token is unknown, with one the grant is said revoked', async () => {
    const { client, refreshToken, grantId } = await withTokens();
    await server.oauth.revokeGrant(grantId);
    expect((await refresh(client, refreshToken)).body).toEqual({
      error: 'invalid_grant',
      error_description: 'The refresh token is invalid or has expired.',
    });
    expect((await refresh(client, refreshToken, { scope: 'fakture:read' })).body).toEqual({
      error: 'invalid_grant',
      error_description: 'The authorization was revoked.',
    });
  });

  test.each([
    ['a scope of only spaces', { scope: '   ' }, 'invalid_scope'],
    ['a wider scope', { scope: 'fakture:read fakture:write' }, 'invalid_scope'],
    ['another resource', { resource: OTHER_RESOURCE }, 'invalid_target'],
    ['a resource not served', { resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
  ])('%s is refused, and the token is not used up', async (_name, extra, error) => {
    const { client, refreshToken } = await withTokens();
    const res = await refresh(client, refreshToken, extra);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    expect(res.body.error_description).toEqual(expect.stringMatching(/\S/));
    expect(eventsOf('token.refused')).toEqual([
      expect.objectContaining({ reason: error, grantType: 'refresh_token' }),
    ]);
    // Refused before the rotation: the same token still works, once.
    expect((await refresh(client, refreshToken)).status).toBe(200);
    expect(eventsOf('refresh_token.reused')).toEqual([]);
  });

  test('a scope of only spaces names no scope: refused as empty', async () => {
    const { client, refreshToken } = await withTokens();
    expect((await refresh(client, refreshToken, { scope: '   ' })).body).toEqual({
      error: 'invalid_scope',
      error_description: 'The scope must not be empty.',
    });
  });

  test('an empty scope is as if omitted (RFC 6749 §3.1): the whole scope; another resource is named', async () => {
    const { client, refreshToken } = await withTokens();
    expect((await refresh(client, refreshToken, { resource: OTHER_RESOURCE })).body).toEqual({
      error: 'invalid_target',
      error_description: 'The resource differs from the one authorized.',
    });
    const res = await refresh(client, refreshToken, { scope: '' });
    expect(res.body.scope).toBe('fakture:read clients:read');
  });

  test.each([
    ['a scope', { scope: 'fakture:read' }],
    ['a resource', { resource: RESOURCE }],
  ])('a token never issued, with %s: invalid_grant, not a failure', async (_name, extra) => {
    const client = await publicClient();
    expect((await refresh(client, 'never.issued', extra)).body).toEqual({
      error: 'invalid_grant',
      error_description: 'The refresh token is invalid or has expired.',
    });
  });

  test("a grant for the second resource refreshes with a scope alone: the resource is the grant's", async () => {
    const client = await publicClient();
    const issued = await tokenRequest(
      server.app,
      client,
      await codeRequest(client, { resource: OTHER_RESOURCE }),
    );
    const res = await refresh(client, issued.body.refresh_token, { scope: 'fakture:read' });
    expect(res.status).toBe(200);
    expect(jwt.decode(res.body.access_token)).toMatchObject({ aud: OTHER_RESOURCE, scope: 'fakture:read' });
  });

  test("another client's token, with a scope: unknown, and not used up", async () => {
    const { client, refreshToken } = await withTokens();
    const other = await publicClient();
    expect((await refresh(other, refreshToken, { scope: 'fakture:read' })).body).toEqual({
      error: 'invalid_grant',
      error_description: 'The refresh token is invalid or has expired.',
    });
    expect((await refresh(client, refreshToken)).status).toBe(200);
  });

  test('token.refreshed names the narrowed scope; a second use within the window says when the first was', async () => {
    const { client, refreshToken, grantId } = await withTokens();
    const first = await refresh(client, refreshToken, { scope: 'fakture:read' });
    expect(first.body.scope).toBe('fakture:read');
    server.clock.advance(2 * SECOND);
    const again = await refresh(client, refreshToken);
    expect(again.body.refresh_token).toBe(first.body.refresh_token);
    const [narrowed, repeated] = eventsOf('token.refreshed');
    expect(narrowed).toMatchObject({
      clientId: client.client_id,
      userId: USER.id,
      grantId,
      scopes: ['fakture:read'],
    });
    expect('firstUsedAt' in narrowed!).toBe(false);
    expect('jkt' in narrowed!).toBe(false);
    expect(repeated).toMatchObject({
      grantId,
      scopes: ['fakture:read', 'clients:read'],
      firstUsedAt: expect.any(Number),
    });
  });

  test('reuse past the rule: refresh_token.reused with the grant, the reason and when it was first used', async () => {
    const { client, refreshToken, grantId } = await withTokens();
    const successor = (await refresh(client, refreshToken)).body.refresh_token as string;
    expect((await refresh(client, successor)).status).toBe(200);
    // Its successor used, and past the default window (twice the access-token lifetime): the first token is reuse.
    server.clock.advance(DAY);
    const res = await refresh(client, refreshToken);
    expect(res.body).toEqual({
      error: 'invalid_grant',
      error_description: 'The refresh token was already used; the authorization is revoked.',
    });
    expect(eventsOf('refresh_token.reused')).toEqual([
      expect.objectContaining({
        clientId: client.client_id,
        grantId,
        reason: expect.any(String),
        firstUsedAt: expect.any(Number),
      }),
    ]);
  });

  test('a well-formed token never issued, with a scope or a resource, is unknown: invalid_grant', async () => {
    const { client, refreshToken } = await withTokens();
    // The same grant id, another secret: the lookup finds nothing.
    const forged = refreshToken.slice(0, -1) + (refreshToken.endsWith('A') ? 'B' : 'A');
    for (const extra of [{ scope: 'fakture:read' }, { resource: RESOURCE }] as Record<string, string>[])
      expect((await refresh(client, forged, extra)).body).toEqual({
        error: 'invalid_grant',
        error_description: 'The refresh token is invalid or has expired.',
      });
  });

  test("naming the grant's own resource again is no change", async () => {
    const { client, refreshToken } = await withTokens();
    const res = await refresh(client, refreshToken, { resource: RESOURCE });
    expect(res.status).toBe(200);
    expect(jwt.decode(res.body.access_token)).toMatchObject({ aud: RESOURCE });
  });

  test('a grant with less than a second left gives no access token: it would outlive nothing', async () => {
    const { client, refreshToken } = await withTokens();
    // The grant lives as long as its refresh tokens (30 days by default); here 0.5 s remain.
    server.clock.advance(30 * DAY - SECOND / 2);
    expect((await refresh(client, refreshToken)).body).toEqual({
      error: 'invalid_grant',
      error_description: 'The authorization has expired.',
    });
  });

  test('the last access token expires with its grant', async () => {
    const { client, refreshToken } = await withTokens();
    server.clock.advance(30 * DAY - 100 * SECOND);
    const res = await refresh(client, refreshToken);
    expect(res.status).toBe(200);
    expect(res.body.expires_in).toBe(100);
  });
});
