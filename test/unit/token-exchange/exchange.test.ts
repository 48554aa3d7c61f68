// The exchange itself (lib/token-exchange/exchange.ts), on a real signer and a memory store, without HTTP: may_act
// (RFC 8693 §4.4), the actor chain's bound, the in-process exchange of router.downstreamToken, and a property: no
// exchange, whatever is asked, ever widens scope or audience, or outlives its subject token.
import fc from 'fast-check';
import { createJwtSigner, UnknownKeyError, type JwtSigner } from '../../../lib/crypto/signer';
import { MAX_ACT_DEPTH, type ActClaim } from '../../../lib/crypto/act';
import { OAuthError } from '../../../lib/errors';
import type { OAuthEvent } from '../../../lib/events';
import { parseOptions } from '../../../lib/options';
import { createMemoryStore } from '../../../lib/store/memory';
import { downstreamToken } from '../../../lib/token-exchange/downstream';
import { exchangeToken } from '../../../lib/token-exchange/exchange';
import { tokenExchangeGrant } from '../../../lib/token-exchange/grant';
import { clientRecord } from '../../../lib/testing/fixtures';
import { createFakeClock } from '../../helpers/clock';

const ISSUER = 'https://as.example';
const MCP = `${ISSUER}/mcp`;
const RENDERER = 'https://renderer.example';
const BANK = 'https://bank.example/v1';
const CATALOGUE = ['a:read', 'a:write', 'b:read', 'b:write', 'c:read'];

const clock = createFakeClock(Date.UTC(2026, 10, 29));
const signer = createJwtSigner({ now: clock.now });
const config = parseOptions({
  issuer: ISSUER,
  scopes: Object.fromEntries(CATALOGUE.map((scope) => [scope, scope])),
  authenticateUser: () => null,
  secret: 'x'.repeat(32),
  now: clock.now,
  tokenExchange: { resources: [RENDERER, { resource: BANK, scopes: ['b:read', 'c:read'] }] },
});
const store = createMemoryStore({ now: clock.now });
const events: OAuthEvent[] = [];
const ctx = (extra: Partial<{ signer: JwtSigner }> = {}) => ({
  config,
  signer,
  store,
  emit: (_req: unknown, type: OAuthEvent['type'], fields = {}) =>
    void events.push({ type, time: 0, ...fields }),
  ...extra,
});

let grantNumber = 0;
const registered = store.registerClient(clientRecord({ clientId: 'agent' }));
/** A live grant and an access token of it, as the code grant would issue. */
async function subjectToken(
  scopes: string[],
  options: { aud?: string; act?: ActClaim; expiresIn?: number } = {},
) {
  const grantId = `grant-${++grantNumber}`;
  await registered;
  await store.createGrant({
    grantId,
    clientId: 'agent',
    userId: 'user-1',
    scopes,
    resource: null,
    createdAt: clock.now(),
    expiresAt: clock.now() + 86_400_000,
    lastUsedAt: null,
    revokedAt: null,
  });
  return signer.signAccessToken({
    issuer: ISSUER,
    subject: 'user-1',
    audience: options.aud ?? MCP,
    clientId: 'agent',
    scope: scopes.join(' '),
    grantId,
    expiresIn: options.expiresIn ?? 3600,
    ...(options.act ? { act: options.act } : {}),
  }).token;
}

const gateway = clientRecord({ clientId: 'gateway', scope: CATALOGUE.join(' ') });
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => (error instanceof OAuthError ? error.code : `not an OAuthError: ${String(error)}`),
  );
const claims = (token: string) => signer.verifyAccessToken(token, { issuer: ISSUER, audience: RENDERER });

describe('may_act (RFC 8693 §4.4)', () => {
  // Our signer writes no may_act: a host's own signer might, and the exchange must honour it.
  const withMayAct = (mayAct: unknown): JwtSigner => ({
    ...signer,
    verifyAccessToken: (token, expected) =>
      ({ ...signer.verifyAccessToken(token, expected), may_act: mayAct }) as never,
  });

  test.each([
    ['names the actor: allowed', { sub: 'gateway' }, undefined],
    ['names another actor: invalid_grant', { sub: 'someone-else' }, 'invalid_grant'],
    ['is not an object: invalid_grant (it meant to restrict)', 'gateway', 'invalid_grant'],
    ['has no sub: invalid_grant', { iss: ISSUER }, 'invalid_grant'],
    ['is an array: invalid_grant', [{ sub: 'gateway' }], 'invalid_grant'],
    ['is null: invalid_grant', null, 'invalid_grant'],
    ['has a sub that is no string: invalid_grant', { sub: 7 }, 'invalid_grant'],
  ])('a may_act that %s', async (_name, mayAct, expected) => {
    if (expected === 'invalid_grant') {
      const token = await subjectToken(['a:read']);
      expect(await failure(exchange(token, { signer: withMayAct(mayAct) }))).toMatchObject({
        description: 'The subject_token names who may act for it (may_act), and that is not this actor.',
      });
    }
    const token = await subjectToken(['a:read']);
    const outcome = await refusal(
      exchangeToken(ctx({ signer: withMayAct(mayAct) }), undefined, {
        subjectToken: token,
        client: gateway,
        resource: RENDERER,
        scope: undefined,
        jkt: undefined,
      }),
    );
    expect(outcome).toBe(expected);
  });
});

const exchange = (token: string, extra: Partial<{ signer: JwtSigner }> = {}) =>
  exchangeToken(ctx(extra), undefined, {
    subjectToken: token,
    client: gateway,
    resource: RENDERER,
    scope: undefined,
    jkt: undefined,
  });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('the subject token', () => {
  test.each([
    // Refused before the signature is checked: the audience is read from the token, so only the list decides.
    ['for an audience neither ours nor downstream', { audience: 'https://elsewhere.example' }, undefined],
    ['of another issuer, signed with our key', { issuer: 'https://other.example' }, 'invalid_token'],
  ])('%s: invalid_grant', async (_name, change, cause) => {
    await registered;
    const token = signer.signAccessToken({
      issuer: ISSUER,
      subject: 'user-1',
      audience: MCP,
      clientId: 'agent',
      scope: 'a:read',
      grantId: `grant-${++grantNumber}`,
      expiresIn: 600,
      ...change,
    }).token;
    expect(await failure(exchange(token))).toMatchObject({
      code: 'invalid_grant',
      description: 'The subject_token is not a live access token of this server.',
      ...(cause === undefined ? {} : { cause: expect.objectContaining({ code: cause }) }),
    });
  });

  test('signed with a key another instance rotated in: read again, then exchanged', async () => {
    const token = await subjectToken(['a:read']);
    const unknown = new OAuthError('invalid_token', 'unknown key', { cause: new UnknownKeyError('k2') });
    const rotated: JwtSigner = {
      ...signer,
      verifyAccessToken: () => {
        throw unknown;
      },
      verifyAccessTokenFresh: async (presented, expected) => signer.verifyAccessToken(presented, expected),
    };
    expect((await exchange(token, { signer: rotated })).scope).toBe('a:read');
    // Without a way to read the keys again, the unknown key is the end of it.
    const single: JwtSigner = { ...rotated, verifyAccessTokenFresh: undefined };
    expect(await failure(exchange(token, { signer: single }))).toMatchObject({ code: 'invalid_grant' });
    // Another failure is not retried.
    const other: JwtSigner = {
      ...rotated,
      verifyAccessToken: () => {
        throw new OAuthError('invalid_token', 'expired');
      },
      verifyAccessTokenFresh: async () => {
        throw new Error('must not be asked');
      },
    };
    expect(await failure(exchange(token, { signer: other }))).toMatchObject({ code: 'invalid_grant' });
  });

  test('an unexpected failure of the signer is not dressed up as invalid_grant', async () => {
    const token = await subjectToken(['a:read']);
    const broken: JwtSigner = {
      ...signer,
      verifyAccessToken: () => {
        throw new TypeError('broken');
      },
    };
    expect(await failure(exchange(token, { signer: broken }))).toBeInstanceOf(TypeError);
  });

  test('a resource not listed is named in the refusal, cut to 200 characters', async () => {
    const token = await subjectToken(['a:read']);
    const long = `https://elsewhere.example/${'a'.repeat(400)}`;
    const error = await failure(
      exchangeToken(ctx(), undefined, {
        subjectToken: token,
        client: gateway,
        resource: long,
        scope: undefined,
        jkt: undefined,
      }),
    );
    expect(error).toMatchObject({
      code: 'invalid_target',
      description: `Tokens cannot be exchanged for "${long.slice(0, 200)}": it is not a downstream resource of this server.`,
    });
  });

  test('no scope left after narrowing: invalid_scope, saying so', async () => {
    const token = await subjectToken(['a:write']);
    const error = await failure(
      exchangeToken(ctx(), undefined, {
        subjectToken: token,
        client: gateway,
        resource: BANK,
        scope: undefined,
        jkt: undefined,
      }),
    );
    expect(error).toMatchObject({
      code: 'invalid_scope',
      description: 'No scope of the subject_token may be given to that resource.',
    });
  });
});

describe('the actor chain', () => {
  const chain = (depth: number): ActClaim | undefined =>
    depth === 0 ? undefined : { sub: `actor-${depth}`, ...(depth > 1 ? { act: chain(depth - 1)! } : {}) };

  test(`a subject token with ${MAX_ACT_DEPTH - 1} actors gets one more, outermost`, async () => {
    const token = await subjectToken(['a:read'], { aud: BANK, act: chain(MAX_ACT_DEPTH - 1) });
    const answer = await exchangeToken(ctx(), undefined, {
      subjectToken: token,
      client: clientRecord({ clientId: 'gateway', scope: 'a:read' }),
      resource: RENDERER,
      scope: undefined,
      jkt: undefined,
    });
    expect(claims(answer.access_token).act).toEqual({ sub: 'gateway', act: chain(MAX_ACT_DEPTH - 1) });
  });

  test(`one with ${MAX_ACT_DEPTH} already is refused: chains do not grow without end`, async () => {
    const token = await subjectToken(['a:read'], { aud: BANK, act: chain(MAX_ACT_DEPTH) });
    expect(await failure(exchange(token))).toMatchObject({
      code: 'invalid_grant',
      description: `The subject token was exchanged ${MAX_ACT_DEPTH} times already; no more actors may join.`,
    });
  });
});

describe('router.downstreamToken: the exchange in process', () => {
  test('the tool server acts: act.sub is the resource of the user’s token, client_id the user’s client', async () => {
    const token = await subjectToken(['a:read', 'b:read']);
    const answer = await downstreamToken(ctx(), { token }, { resource: `${RENDERER}/`, scope: ['a:read'] });
    expect(answer).toEqual({
      accessToken: expect.any(String),
      tokenType: 'Bearer',
      resource: RENDERER,
      scopes: ['a:read'],
      expiresAt: clock.now() + 3600 * 1000,
    });
    expect(claims(answer.accessToken)).toMatchObject({
      sub: 'user-1',
      client_id: 'agent',
      aud: RENDERER,
      act: { sub: MCP },
    });
  });

  test('the same refusals, each an event', async () => {
    const token = await subjectToken(['a:read']);
    events.length = 0;
    await expect(
      downstreamToken(ctx(), token, { resource: 'https://elsewhere.example' }),
    ).rejects.toMatchObject({
      code: 'invalid_target',
    });
    await expect(
      downstreamToken(ctx(), token, { resource: RENDERER, scope: 'a:write' }),
    ).rejects.toMatchObject({
      code: 'invalid_scope',
    });
    await expect(downstreamToken(ctx(), { token: '' }, { resource: RENDERER })).rejects.toMatchObject({
      code: 'invalid_grant',
    });
    expect(events.map((event) => [event.type, event.reason])).toEqual([
      ['token.refused', 'invalid_target'],
      ['token.refused', 'invalid_scope'],
      ['token.refused', 'invalid_grant'],
    ]);
  });

  test('a list of scopes is the space-separated scope', async () => {
    const token = await subjectToken(['a:read', 'b:read', 'c:read']);
    const answer = await downstreamToken(ctx(), token, { resource: RENDERER, scope: ['a:read', 'c:read'] });
    expect(answer.scopes).toEqual(['a:read', 'c:read']);
  });

  test.each([
    ['no auth at all', null],
    ['an auth without a token', {}],
    ['a token that is no string', { token: 5 }],
    ['an empty token', { token: '' }],
  ])('%s: invalid_grant, saying what to pass', async (_name, auth) => {
    expect(await failure(downstreamToken(ctx(), auth as never, { resource: RENDERER }))).toMatchObject({
      code: 'invalid_grant',
      description: "Pass requireBearer's req.auth (or the user's access token).",
    });
  });

  test('what a policy throws is no refusal: it reaches the caller, with no token.refused event', async () => {
    const token = await subjectToken(['a:read']);
    const throwing = {
      ...ctx(),
      config: {
        ...config,
        tokenExchange: {
          ...config.tokenExchange!,
          policy: () => {
            throw new RangeError('policy bug');
          },
        },
      },
    };
    events.length = 0;
    expect(await failure(downstreamToken(throwing, token, { resource: RENDERER }))).toBeInstanceOf(
      RangeError,
    );
    expect(events).toEqual([]);
  });

  test('misuse by the host is a TypeError saying what to pass', async () => {
    const token = await subjectToken(['a:read']);
    await expect(downstreamToken(ctx(), token, {} as never)).rejects.toThrow(/name the downstream resource/);
    await expect(downstreamToken(ctx(), token, { resource: RENDERER, scope: 5 as never })).rejects.toThrow(
      /scope must be a string or a list/,
    );
    const off = { ...ctx(), config: { ...config, tokenExchange: undefined } };
    await expect(downstreamToken(off, token, { resource: RENDERER })).rejects.toThrow(
      /set the router's tokenExchange/,
    );
  });
});

test('property: no exchange widens scope or audience, or outlives its subject token', async () => {
  const scopeSet = fc.subarray(CATALOGUE);
  let issuedCount = 0;
  await fc.assert(
    fc.asyncProperty(
      scopeSet.filter((scopes) => scopes.length > 0),
      fc.option(scopeSet, { nil: undefined }),
      // Mostly scopes of the catalogue, sometimes anything at all.
      fc.option(
        fc.array(
          fc.oneof(
            { arbitrary: fc.constantFrom(...CATALOGUE, 'offline_access'), weight: 6 },
            { arbitrary: fc.string(), weight: 1 },
          ),
          { maxLength: 4 },
        ),
        { nil: undefined },
      ),
      fc.oneof(
        { arbitrary: fc.constantFrom(RENDERER, BANK, `${BANK}/`), weight: 4 },
        { arbitrary: fc.constantFrom(MCP, 'https://elsewhere.example', 'not a url'), weight: 1 },
      ),
      fc.integer({ min: 1, max: 7200 }),
      async (subjectScopes, clientScopes, asked, resource, expiresIn) => {
        const token = await subjectToken(subjectScopes, { expiresIn });
        const client =
          clientScopes === undefined
            ? undefined
            : clientRecord({ clientId: 'gw', scope: clientScopes.join(' ') });
        let answer;
        try {
          answer = await exchangeToken(ctx(), undefined, {
            subjectToken: token,
            client,
            resource,
            scope: asked?.join(' '),
            jkt: undefined,
          });
        } catch (error) {
          // Refused with one of the codes the contract names, never anything else.
          expect(error).toBeInstanceOf(OAuthError);
          expect(['invalid_target', 'invalid_scope']).toContain((error as OAuthError).code);
          return;
        }
        const listed = resource.replace(/\/+$/, '');
        expect([RENDERER, BANK]).toContain(listed);
        const issued = signer.verifyAccessToken(answer.access_token, { issuer: ISSUER, audience: listed });
        const granted = issued.scope.split(' ');
        const ceiling = listed === BANK ? ['b:read', 'c:read'] : CATALOGUE;
        for (const scope of granted) {
          expect(subjectScopes).toContain(scope);
          expect(ceiling).toContain(scope);
          if (clientScopes) expect(clientScopes).toContain(scope);
        }
        expect(issued.aud).toBe(listed);
        expect(issued.exp).toBeLessThanOrEqual(Math.floor(clock.now() / 1000) + expiresIn);
        expect(answer).not.toHaveProperty('refresh_token');
        issuedCount += 1;
      },
    ),
    { numRuns: 300 },
  );
  // Not a property of refusals alone: many runs issue a token.
  expect(issuedCount).toBeGreaterThan(15);
});

describe('the grant at the token endpoint', () => {
  // Unreachable through the endpoint (no registration gives a public client the grant): the grant refuses on its own.
  test('a public client is unauthorized_client, whatever its record says', async () => {
    const token = await subjectToken(['a:read']);
    const req = {
      body: {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource: RENDERER,
      },
    };
    const issue = async (client: ReturnType<typeof clientRecord>) =>
      tokenExchangeGrant.issue(ctx() as never, {
        req: req as never,
        client,
        proof: { jkt: undefined, useJti: async () => undefined },
      });
    expect(
      await failure(
        issue(clientRecord({ clientId: 'pub', tokenEndpointAuthMethod: 'none', clientSecretHash: null })),
      ),
    ).toMatchObject({ code: 'unauthorized_client', description: 'A public client cannot exchange tokens.' });
    expect((await issue(clientRecord({ clientId: 'gw', scope: 'a:read' }))).scope).toBe('a:read');
  });
});
