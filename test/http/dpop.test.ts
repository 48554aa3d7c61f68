// DPoP (RFC 9449) wherever a token is issued or used: the token endpoint binds what it issues to the proof's key
// (§5), a code to dpop_jkt (§10), a public client's refresh tokens to the key (§5); the resource takes a bound token
// only with the DPoP scheme and a fresh proof of its key (§7). Each rule has a case that fails without it, and every
// refused request leaves the code or token it carried usable by its rightful holder.
import request from 'supertest';
import { createOAuthRouter } from '../../lib';
import type { OAuthEvent } from '../../lib/events';
import { createJwtSigner } from '../../lib/crypto/signer';
import { BUSINESS_SCOPES } from '../../example-app/scopes';
import { MINUTE } from '../helpers/clock';
import { claimsOf, createDpopKey, type DpopKey, type ProofParts } from '../helpers/dpop';
import {
  authorizeInBrowser,
  authorizeQuery,
  createTestServer,
  ISSUER,
  mountTestApp,
  registerClient,
  RESOURCE,
  tokenRequest,
  type RegisteredClient,
  type TestServer,
} from '../helpers/oauth-app';

const TOKEN_URL = `${ISSUER}/v1/oauth/token`;
const METADATA = `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp"`;

let server: TestServer;
beforeEach(() => {
  server = createTestServer();
});
afterEach(() => server.close());

const key = createDpopKey();
const otherKey = createDpopKey();
const tokenProof = (parts: ProofParts = {}, by: DpopKey = key) =>
  by.proof(server.clock.now(), { htu: TOKEN_URL, ...parts });
const resourceProof = (accessToken: string, parts: ProofParts = {}, by: DpopKey = key) =>
  by.proof(server.clock.now(), { htu: RESOURCE, accessToken, ...parts });

const publicClient = (metadata: Record<string, unknown> = {}) =>
  registerClient(server.app, { token_endpoint_auth_method: 'none', ...metadata });

/** A code of a fresh authorization, and what exchanging it takes. */
async function authorize(client: RegisteredClient, overrides: Record<string, string> = {}) {
  const { code, pkce } = await authorizeInBrowser(server.app, client, overrides);
  return {
    code: code!,
    exchange: (proof?: string | string[], codeOverride?: string) => {
      const req = tokenRequest(server.app, client, {
        grant_type: 'authorization_code',
        code: codeOverride ?? code!,
        redirect_uri: client.redirect_uris[0]!,
        code_verifier: pkce.verifier,
      });
      return proof === undefined ? req : req.set('DPoP', proof as string);
    },
  };
}

const refresh = (client: RegisteredClient, refreshToken: string, proof?: string) => {
  const req = tokenRequest(server.app, client, { grant_type: 'refresh_token', refresh_token: refreshToken });
  return proof === undefined ? req : req.set('DPoP', proof as string);
};

const callResource = (authorization: string, proof?: string | string[], app = server.app) => {
  const req = request(app).post('/mcp').set('Authorization', authorization);
  return proof === undefined ? req : req.set('DPoP', proof as string);
};

/** A public client holding DPoP-bound tokens. */
async function boundTokens() {
  const client = await publicClient();
  const res = await (await authorize(client)).exchange(tokenProof());
  expect(res.status).toBe(200);
  return { client, tokens: res.body as { access_token: string; refresh_token: string; token_type: string } };
}

describe('the token endpoint (§5)', () => {
  test.each([
    ['without a proof', () => undefined],
    ['with a proof of its key', () => tokenProof()],
  ])(
    "another client's bound refresh token, %s, is unknown to it: invalid_grant, not a DPoP refusal",
    async (_name, proof) => {
      const { tokens } = await boundTokens();
      const thief = await publicClient();
      const res = await refresh(thief, tokens.refresh_token, proof());
      expect(res.body).toEqual({
        error: 'invalid_grant',
        error_description: 'The refresh token is invalid or has expired.',
      });
    },
  );

  test('a public client that sends a proof gets a bound access token and a refresh token bound to the key', async () => {
    const { tokens } = await boundTokens();
    expect(tokens.token_type).toBe('DPoP');
    expect(claimsOf(tokens.access_token).cnf).toEqual({ jkt: key.jkt });
    // <grant id>.<jkt>.<secret>: the thumbprint is part of what the store hashes.
    expect(tokens.refresh_token.split('.')[1]).toBe(key.jkt);
  });

  test('a confidential client’s access token is bound; its refresh token is not (its secret binds it already)', async () => {
    const client = await registerClient(server.app);
    const res = await (await authorize(client)).exchange(tokenProof());
    expect(res.body.token_type).toBe('DPoP');
    expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
    expect(res.body.refresh_token.split('.')).toHaveLength(2);
    // And it refreshes without a proof, to a bearer token.
    const refreshed = await refresh(client, res.body.refresh_token);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.token_type).toBe('Bearer');
  });

  test('without a proof nothing changes: a bearer token without cnf', async () => {
    const client = await publicClient();
    const res = await (await authorize(client)).exchange();
    expect(res.body.token_type).toBe('Bearer');
    expect(claimsOf(res.body.access_token).cnf).toBeUndefined();
    expect(res.body.refresh_token.split('.')).toHaveLength(2);
  });

  const tenMinutes = 10 * MINUTE;
  test.each<[string, (now: number) => string | string[]]>([
    ['a proof for another URL (the resource)', () => tokenProof({ htu: RESOURCE })],
    ['a proof for another method', () => tokenProof({ htm: 'GET' })],
    ['a proof of another type', () => tokenProof({ header: { typ: 'JWT' } })],
    ['a proof made ten minutes ago', (now) => tokenProof({ claims: { iat: (now - tenMinutes) / 1000 } })],
    ['a proof without jti', () => tokenProof({ claims: { jti: undefined } })],
    [
      'a proof whose jwk is another key than the signer',
      () => tokenProof({ header: { jwk: otherKey.publicJwk } }),
    ],
    [
      'a proof whose jwk holds a private key',
      () => tokenProof({ header: { jwk: { ...key.publicJwk, d: 'AAAA' } } }),
    ],
    ['two DPoP headers', () => [tokenProof(), tokenProof()]],
    ['a DPoP header that is no JWT', () => 'not-a-proof'],
  ])('refused with invalid_dpop_proof: %s; the code stays usable', async (_name, proofAt) => {
    const client = await publicClient();
    const { exchange } = await authorize(client);
    const refused = await exchange(proofAt(server.clock.now()));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_dpop_proof');
    const res = await exchange(tokenProof());
    expect(res.status).toBe(200);
  });

  test('a proof is good for one request, on every router that shares the store (§11.1)', async () => {
    const client = await publicClient();
    const proof = tokenProof();
    expect((await (await authorize(client)).exchange(proof)).status).toBe(200);
    const again = await (await authorize(client)).exchange(proof);
    expect(again.status).toBe(400);
    expect(again.body.error_description).toMatch(/used before/);
    const other = mountTestApp(server.store, server.clock);
    const { code, pkce } = await authorizeInBrowser(other.app, client);
    const elsewhere = await request(other.app).post('/v1/oauth/token').type('form').set('DPoP', proof).send({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: client.redirect_uris[0]!,
      code_verifier: pkce.verifier,
      client_id: client.client_id,
    });
    expect(elsewhere.body.error).toBe('invalid_dpop_proof');
  });

  test('the jti is recorded in the store per key, as "dpop <jkt>": every instance, whatever its version, shares it', async () => {
    const client = await publicClient();
    const jti = 'recorded-elsewhere';
    await server.store.useAssertionId!(`dpop ${key.jkt}`, jti, server.clock.now() + 60_000);
    const res = await (await authorize(client)).exchange(tokenProof({ claims: { jti } }));
    expect(res.body.error_description).toMatch(/used before/);
    // Another key's proof may carry the same jti (§11.1: a jti is unique per key).
    expect((await (await authorize(client)).exchange(tokenProof({ claims: { jti } }, otherKey))).status).toBe(
      200,
    );
  });

  test('dpop_bound_access_tokens (§5.2): such a client’s token request without a proof is refused', async () => {
    const client = await publicClient({ dpop_bound_access_tokens: true });
    expect(client.dpop_bound_access_tokens).toBe(true);
    const { exchange } = await authorize(client);
    const refused = await exchange();
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_dpop_proof' });
    expect(refused.body.error_description).toMatch(/dpop_bound_access_tokens/);
    expect((await exchange(tokenProof())).status).toBe(200);
  });

  test.each([['yes'], [1], [{}]])('dpop_bound_access_tokens must be a boolean, not %p', async (value) => {
    const res = await request(server.app)
      .post('/v1/oauth/register')
      .send({ redirect_uris: ['https://client.example/callback'], dpop_bound_access_tokens: value });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });

  test('an operator client’s client_credentials token is bound too, and token.issued names the key', async () => {
    const events: OAuthEvent[] = [];
    server.close();
    server = createTestServer({ onEvent: (event) => void events.push(event) });
    const machine = await server.oauth.registerOperatorClient({
      name: 'Nightly export',
      grantTypes: ['client_credentials'],
      scope: ['fakture:read'],
    });
    const res = await request(server.app)
      .post('/v1/oauth/token')
      .type('form')
      .auth(machine.clientId, machine.clientSecret!)
      .set('DPoP', tokenProof())
      .send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
    expect(events.filter((event) => event.type === 'token.issued')).toEqual([
      expect.objectContaining({ clientId: machine.clientId, jkt: key.jkt }),
    ]);
    expect(
      (await callResource(`DPoP ${res.body.access_token}`, resourceProof(res.body.access_token))).status,
    ).toBe(200);
  });
});

describe('the replay table (§11.1) holds the jti of proofs that got tokens, and no others', () => {
  /** The DPoP jtis the store keeps (each under "dpop <jkt>"): the rows a request could add. */
  const dpopRows = () =>
    (
      server.store.database
        .prepare("SELECT COUNT(*) AS n FROM oauth_client_assertions WHERE client_id LIKE 'dpop %'")
        .get() as { n: number }
    ).n;
  const tokenPost = () => request(server.app).post('/v1/oauth/token').type('form');
  /** A confidential operator client of the grants given. */
  const operatorClient = (grantTypes: Array<'client_credentials' | 'authorization_code' | 'refresh_token'>) =>
    server.oauth.registerOperatorClient({ name: 'Nightly export', grantTypes, scope: ['fakture:read'] });

  // Each row: a token request refused whatever proof comes with it, and the error it is refused with.
  test.each<[string, () => Promise<(proof: string) => request.Test>, string]>([
    [
      'a public client with a made-up code',
      async () => {
        const client = await publicClient();
        return (proof) =>
          tokenRequest(server.app, client, {
            grant_type: 'authorization_code',
            code: 'made-up',
            redirect_uri: client.redirect_uris[0]!,
            code_verifier: 'v'.repeat(43),
          }).set('DPoP', proof);
      },
      'invalid_grant',
    ],
    [
      'a real code with a wrong code_verifier',
      async () => {
        const client = await publicClient();
        const { code } = await authorize(client);
        return (proof) =>
          tokenRequest(server.app, client, {
            grant_type: 'authorization_code',
            code,
            redirect_uri: client.redirect_uris[0]!,
            code_verifier: 'v'.repeat(43),
          }).set('DPoP', proof);
      },
      'invalid_grant',
    ],
    [
      'a public client with a made-up refresh token',
      async () => {
        const client = await publicClient();
        return (proof) => refresh(client, `grant.${'A'.repeat(43)}`, proof);
      },
      'invalid_grant',
    ],
    [
      'a made-up refresh token bound to the stranger’s own key',
      async () => {
        const client = await publicClient();
        return (proof) => refresh(client, `grant.${key.jkt}.${'A'.repeat(43)}`, proof);
      },
      'invalid_grant',
    ],
    [
      'another client’s refresh token bound to the key, from a client of the stranger’s',
      async () => {
        const { tokens } = await boundTokens();
        const stranger = await publicClient();
        return (proof) => refresh(stranger, tokens.refresh_token, proof);
      },
      'invalid_grant',
    ],
    [
      'a real refresh token asking for a scope beyond its grant',
      async () => {
        const client = await publicClient();
        const { body } = await (await authorize(client)).exchange();
        return (proof) =>
          tokenRequest(server.app, client, {
            grant_type: 'refresh_token',
            refresh_token: body.refresh_token,
            scope: 'not-granted',
          }).set('DPoP', proof);
      },
      'invalid_scope',
    ],
    [
      'client_credentials asking for a scope beyond the client’s',
      async () => {
        const machine = await operatorClient(['client_credentials']);
        return (proof) =>
          tokenPost()
            .auth(machine.clientId, machine.clientSecret!)
            .set('DPoP', proof)
            .send({ grant_type: 'client_credentials', scope: 'not-granted' });
      },
      'invalid_scope',
    ],
    [
      'an unsupported grant_type',
      async () => {
        const client = await publicClient();
        return (proof) => tokenRequest(server.app, client, { grant_type: 'password' }).set('DPoP', proof);
      },
      'unsupported_grant_type',
    ],
    [
      'a confidential client with a wrong secret',
      async () => {
        const machine = await operatorClient(['client_credentials']);
        return (proof) =>
          tokenPost()
            .auth(machine.clientId, 'wrong-secret')
            .set('DPoP', proof)
            .send({ grant_type: 'client_credentials' });
      },
      'invalid_client',
    ],
  ])(
    'a stranger cannot fill the replay table: %s, sent 20 times with fresh proofs, records no jti',
    async (_name, setUp, error) => {
      const send = await setUp();
      const before = dpopRows();
      for (let i = 0; i < 20; i += 1) {
        const res = await send(tokenProof());
        expect([res.status, res.body.error]).toEqual([expect.any(Number), error]);
        expect(res.status).toBeGreaterThanOrEqual(400);
      }
      expect(dpopRows()).toBe(before);
    },
  );

  test('a request that gets tokens records exactly one jti; its proof with a fresh code is refused', async () => {
    const client = await publicClient();
    const proof = tokenProof();
    const before = dpopRows();
    expect((await (await authorize(client)).exchange(proof)).status).toBe(200);
    expect(dpopRows()).toBe(before + 1);
    // The fresh code is good: the grant gives tokens, and the recorded jti still keeps them back.
    const replayed = await (await authorize(client)).exchange(proof);
    expect(replayed.status).toBe(400);
    expect(replayed.body).toMatchObject({ error: 'invalid_dpop_proof', error_description: /used before/ });
    expect(dpopRows()).toBe(before + 1);
  });

  test.each<[string, () => Promise<{ client: RegisteredClient; refreshToken: string }>]>([
    [
      'a refresh token bound to the key',
      async () => {
        const { client, tokens } = await boundTokens();
        return { client, refreshToken: tokens.refresh_token };
      },
    ],
    [
      'a confidential client’s refresh token',
      async () => {
        const client = await registerClient(server.app);
        const { body } = await (await authorize(client)).exchange();
        return { client, refreshToken: body.refresh_token };
      },
    ],
  ])(
    'a captured refresh request replayed within the reuse window (%s), which the grant would answer again, is refused for its proof; the chain goes on',
    async (_name, obtain) => {
      const { client, refreshToken } = await obtain();
      const proof = tokenProof();
      const before = dpopRows();
      const first = await refresh(client, refreshToken, proof);
      expect(first.status).toBe(200);
      expect(dpopRows()).toBe(before + 1);
      server.clock.advance(10_000);
      const replayed = await refresh(client, refreshToken, proof);
      expect(replayed.status).toBe(400);
      expect(replayed.body).toMatchObject({ error: 'invalid_dpop_proof', error_description: /used before/ });
      // Nothing was revoked: the client goes on along its chain.
      expect((await refresh(client, first.body.refresh_token, tokenProof())).status).toBe(200);
    },
  );
});

describe('a whole captured token request replayed is refused for its proof, and revokes nothing (§11.1)', () => {
  test('the code grant: the replay is not taken for a replayed code, which would revoke the grant', async () => {
    const client = await publicClient();
    const { exchange } = await authorize(client);
    const proof = tokenProof();
    const first = await exchange(proof);
    expect(first.status).toBe(200);
    server.clock.advance(30_000);
    const replayed = await exchange(proof);
    expect(replayed.body).toMatchObject({ error: 'invalid_dpop_proof', error_description: /used before/ });
    // The grant lives: its tokens still work, and its refresh token still rotates.
    expect(
      (await callResource(`DPoP ${first.body.access_token}`, resourceProof(first.body.access_token))).status,
    ).toBe(200);
    expect((await refresh(client, first.body.refresh_token, tokenProof())).status).toBe(200);
  });

  test('a bound refresh token: replayed after its one-minute reuse window, within its proof’s five, it is not reuse', async () => {
    const { client, tokens } = await boundTokens();
    const proof = tokenProof();
    const first = await refresh(client, tokens.refresh_token, proof);
    expect(first.status).toBe(200);
    server.clock.advance(2 * 60_000);
    const replayed = await refresh(client, tokens.refresh_token, proof);
    expect(replayed.body).toMatchObject({ error: 'invalid_dpop_proof', error_description: /used before/ });
    expect((await refresh(client, first.body.refresh_token, tokenProof())).status).toBe(200);
  });
});

describe('a DPoP-bound grant is strict whatever the reuse window (its proofs tell a thief apart)', () => {
  // The walk forward of security round four: a copy of a used token reaches the live one while the window lasts. A
  // bound token cannot be presented without its key at all, so its chain has no leniency to give away: a used one
  // presented again a minute on is reuse, even from the key's holder, under a default window of two hours.
  test.each([
    ['bound to the key (public client), two minutes on', true, 2 * 60_000, 'invalid_grant'],
    ['bound to the key (public client), half a minute on: a race, answered again', true, 30_000, undefined],
    ['not bound (confidential client), two minutes on: held to the window', false, 2 * 60_000, undefined],
  ])('a used refresh token presented again: %s', async (_name, bound, after, error) => {
    const { client, refreshToken } = bound
      ? await boundTokens().then(({ client, tokens }) => ({ client, refreshToken: tokens.refresh_token }))
      : await registerClient(server.app).then(async (client) => ({
          client,
          refreshToken: (await (await authorize(client)).exchange()).body.refresh_token as string,
        }));
    const first = await refresh(client, refreshToken, tokenProof());
    expect(first.status).toBe(200);
    server.clock.advance(after);
    const again = await refresh(client, refreshToken, tokenProof());
    expect(again.body.error).toBe(error);
    // Reuse revokes the grant (RFC 9700 §4.14.2); within the window the same successor comes back.
    if (error) expect((await refresh(client, first.body.refresh_token, tokenProof())).body.error).toBe(error);
    else expect(again.body.refresh_token).toBe(first.body.refresh_token);
  });
});

test('the events of a bound grant name the key: code.redeemed, token.refreshed', async () => {
  const events: Array<{ type: string; jkt?: string }> = [];
  server.close();
  server = createTestServer({ onEvent: (event) => void events.push(event) });
  const { client, tokens } = await boundTokens();
  await refresh(client, tokens.refresh_token, tokenProof());
  const bound = (type: string) => events.find((event) => event.type === type)?.jkt;
  expect([bound('code.redeemed'), bound('token.refreshed')]).toEqual([key.jkt, key.jkt]);
  const plain = await (await authorize(await publicClient())).exchange();
  expect(plain.status).toBe(200);
  expect(events.filter((event) => event.type === 'code.redeemed').map((event) => event.jkt)).toEqual([
    key.jkt,
    undefined,
  ]);
});

describe('dpop_jkt at the authorization endpoint (§10)', () => {
  test('the code is redeemed only with a proof of that key; a refused attempt does not spend it', async () => {
    const client = await publicClient();
    const { code, exchange } = await authorize(client, { dpop_jkt: key.jkt });
    const without = await exchange();
    expect(without.status).toBe(400);
    expect(without.body).toEqual({
      error: 'invalid_dpop_proof',
      error_description: 'This authorization code is bound to a DPoP key: send a DPoP proof made with it.',
    });
    const wrongKey = await exchange(tokenProof({}, otherKey));
    expect(wrongKey.body).toEqual({
      error: 'invalid_dpop_proof',
      error_description: 'This authorization code is bound to another DPoP key than the proof’s.',
    });
    // The thumbprint cannot be stripped from the code: the store knows the code by the hash of all of it.
    const stripped = await exchange(tokenProof({}, otherKey), code.slice(code.indexOf('.') + 1));
    expect(stripped.body.error).toBe('invalid_grant');
    const res = await exchange(tokenProof());
    expect(res.status).toBe(200);
    expect(claimsOf(res.body.access_token).cnf).toEqual({ jkt: key.jkt });
  });

  test('a dpop_jkt that is no SHA-256 thumbprint is an invalid_request', async () => {
    const client = await publicClient();
    const { query } = authorizeQuery(client, { dpop_jkt: 'short' });
    // Not redirected for a client the host app does not vouch for (RFC 9700 §4.11.2): a page says where it would go.
    const res = await request(server.app).get(`/v1/oauth/authorize?${query}`);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/invalid_request|dpop_jkt/);
    expect(res.text).toMatch(/dpop_jkt must be the SHA-256 JWK thumbprint/);
  });
});

describe('refresh tokens bound to the key (§5)', () => {
  test('refused without a proof and with another key, without using the token up; the key refreshes it', async () => {
    const { client, tokens } = await boundTokens();
    const without = await refresh(client, tokens.refresh_token);
    expect(without.status).toBe(400);
    expect(without.body.error).toBe('invalid_dpop_proof');
    expect(without.body.error_description).toMatch(/^This refresh token is bound to a DPoP key/);
    const wrongKey = await refresh(client, tokens.refresh_token, tokenProof({}, otherKey));
    expect(wrongKey.body.error).toBe('invalid_dpop_proof');
    expect(wrongKey.body.error_description).toMatch(/^This refresh token is bound to another DPoP key/);
    // Stripping the thumbprint gives a token the store never issued.
    const [grantId, , secret] = tokens.refresh_token.split('.');
    const stripped = await refresh(client, `${grantId}.${secret}`);
    expect(stripped.body.error).toBe('invalid_grant');
    const res = await refresh(client, tokens.refresh_token, tokenProof());
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('DPoP');
    // The successor keeps the binding, and the grant was never taken for a reused one.
    expect(res.body.refresh_token.split('.')[1]).toBe(key.jkt);
    expect((await refresh(client, res.body.refresh_token, tokenProof())).status).toBe(200);
  });

  test('a token in the bound form that is not this client’s is unknown (invalid_grant), never said to be bound', async () => {
    const { tokens } = await boundTokens();
    const stranger = await publicClient();
    expect((await refresh(stranger, tokens.refresh_token)).body.error).toBe('invalid_grant');
    const [grantId] = tokens.refresh_token.split('.');
    const madeUp = `${grantId}.${key.jkt}.${'A'.repeat(43)}`;
    expect((await refresh(stranger, madeUp)).body.error).toBe('invalid_grant');
  });

  test('an unbound chain refreshed with a proof gets a bound access token and stays unbound', async () => {
    const client = await publicClient();
    const first = await (await authorize(client)).exchange();
    const res = await refresh(client, first.body.refresh_token, tokenProof());
    expect(res.body.token_type).toBe('DPoP');
    expect(res.body.refresh_token.split('.')).toHaveLength(2);
    expect((await refresh(client, res.body.refresh_token)).status).toBe(200);
  });

  test('introspection names the key of a bound access token and of a bound refresh token (§6.2)', async () => {
    const { tokens } = await boundTokens();
    const gateway = await registerClient(server.app);
    const introspect = (token: string) =>
      request(server.app)
        .post('/v1/oauth/introspect')
        .type('form')
        .auth(gateway.client_id, gateway.client_secret!)
        .send({ token });
    // Only its own tokens are visible to a client: ask as the gateway about a token of its own.
    const own = await (await authorize(gateway)).exchange(tokenProof());
    const access = await introspect(own.body.access_token);
    expect(access.body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt } });
    const bearer = await (await authorize(gateway)).exchange();
    const plain = await introspect(bearer.body.access_token);
    expect(plain.body.token_type).toBe('Bearer');
    expect(plain.body.cnf).toBeUndefined();
    expect(tokens.refresh_token.split('.')[1]).toBe(key.jkt);
  });
});

describe('server nonces (§8)', () => {
  beforeEach(() => {
    server.close();
    server = createTestServer({ dpop: { requireNonce: true } });
  });

  test('a proof without the nonce gets use_dpop_nonce and the nonce; with it, the token, and the next nonce', async () => {
    const client = await publicClient();
    const { exchange } = await authorize(client);
    const asked = await exchange(tokenProof());
    expect(asked.status).toBe(400);
    expect(asked.body.error).toBe('use_dpop_nonce');
    const nonce = asked.headers['dpop-nonce'];
    expect(nonce).toEqual(expect.any(String));
    const res = await exchange(tokenProof({ claims: { nonce } }));
    expect(res.status).toBe(200);
    expect(res.headers['dpop-nonce']).toBe(nonce);
  });

  test('a nonce older than two periods, or made up, is refused', async () => {
    const client = await publicClient();
    const { exchange } = await authorize(client);
    const nonce = (await exchange(tokenProof())).headers['dpop-nonce'];
    expect((await exchange(tokenProof({ claims: { nonce: 'made-up' } }))).body.error).toBe('use_dpop_nonce');
    server.clock.advance(11 * MINUTE);
    const stale = await exchange(tokenProof({ claims: { nonce } }));
    expect(stale.body.error).toBe('use_dpop_nonce');
    expect(stale.headers['dpop-nonce']).not.toBe(nonce);
  });

  test('a client without DPoP is not asked for a nonce', async () => {
    const client = await publicClient();
    expect((await (await authorize(client)).exchange()).status).toBe(200);
  });
});

describe('the protected resource (§7)', () => {
  test('a bound token with the DPoP scheme and a fresh proof passes, and req.auth names the key', async () => {
    const { tokens } = await boundTokens();
    const res = await callResource(`DPoP ${tokens.access_token}`, resourceProof(tokens.access_token));
    expect(res.status).toBe(200);
    expect(res.body.auth).toMatchObject({ jkt: key.jkt, actor: 'user' });
    // RFC 7235 §2.1: the scheme is case-insensitive; a path with a query is still the resource (htu has none).
    const lower = await request(server.app)
      .post('/mcp?x=1')
      .set('Authorization', `dpop ${tokens.access_token}`)
      .set('DPoP', resourceProof(tokens.access_token));
    expect(lower.status).toBe(200);
  });

  test('a bound token sent as Bearer is refused, with the DPoP challenge first (§7.1)', async () => {
    const { tokens } = await boundTokens();
    const res = await callResource(`Bearer ${tokens.access_token}`);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
    expect(res.headers['www-authenticate']).toMatch(
      /^DPoP resource_metadata="[^"]+", error="invalid_token", error_description="[^"]+", algs="ES256 RS256 PS256", Bearer resource_metadata="[^"]+"$/,
    );
    // Also once the token has been verified and remembered by a DPoP request.
    expect(
      (await callResource(`DPoP ${tokens.access_token}`, resourceProof(tokens.access_token))).status,
    ).toBe(200);
    expect((await callResource(`Bearer ${tokens.access_token}`)).status).toBe(401);
  });

  const now = () => server.clock.now();
  test.each<[string, (token: string) => string | string[] | undefined, string]>([
    ['no proof', () => undefined, 'invalid_dpop_proof'],
    ['a proof by another key', (t) => resourceProof(t, {}, otherKey), 'invalid_token'],
    ['a proof without ath', (t) => key.proof(now(), { htu: RESOURCE }), 'invalid_dpop_proof'],
    ['a proof for another token', (t) => resourceProof(`${t}x`), 'invalid_dpop_proof'],
    ['a proof for another URL', (t) => resourceProof(t, { htu: TOKEN_URL }), 'invalid_dpop_proof'],
    ['a proof for another method', (t) => resourceProof(t, { htm: 'GET' }), 'invalid_dpop_proof'],
    [
      'a proof made ten minutes ago',
      (t) => resourceProof(t, { claims: { iat: now() / 1000 - 600 } }),
      'invalid_dpop_proof',
    ],
    ['two proofs', (t) => [resourceProof(t), resourceProof(t)], 'invalid_dpop_proof'],
  ])('refused with 401: %s', async (_name, proofFor, error) => {
    const { tokens } = await boundTokens();
    const res = await callResource(`DPoP ${tokens.access_token}`, proofFor(tokens.access_token));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe(error);
    expect(res.headers['www-authenticate']).toMatch(new RegExp(`^DPoP ${METADATA}, error="${error}"`));
  });

  test('each refusal says what to send (word for word), in the DPoP scheme', async () => {
    const { tokens } = await boundTokens();
    const token = tokens.access_token;
    const plain = (await (await authorize(await publicClient())).exchange()).body.access_token as string;
    const cases: Array<[string, string | undefined, string]> = [
      [`DPoP ${token}`, undefined, 'Send a DPoP proof in the DPoP header with the token.'],
      [
        `DPoP ${token}`,
        resourceProof(token, {}, otherKey),
        'The DPoP proof is made with another key than the token’s.',
      ],
      [
        `DPoP ${plain}`,
        resourceProof(plain),
        'This access token is not DPoP-bound: send it as "Authorization: Bearer <token>".',
      ],
      [`DPoP ${token} extra`, resourceProof(token), 'Send the token as "Authorization: DPoP <token>".'],
    ];
    for (const [authorization, proof, description] of cases) {
      const res = await callResource(authorization, proof);
      expect([res.status, res.body.error_description]).toEqual([expect.any(Number), description]);
      expect(res.headers['www-authenticate']).toMatch(/^DPoP /);
    }
  });

  test('the resource records a proof’s jti in the store per key, as the token endpoint does ("dpop <jkt>")', async () => {
    const { tokens } = await boundTokens();
    const jti = 'seen-by-another-instance';
    await server.store.useAssertionId!(`dpop ${key.jkt}`, jti, server.clock.now() + 60_000);
    const res = await callResource(
      `DPoP ${tokens.access_token}`,
      resourceProof(tokens.access_token, { claims: { jti } }),
    );
    expect(res.body.error_description).toMatch(/used before/);
  });

  test('the scheme may be followed by several spaces, as Bearer may (RFC 7235 §2.1)', async () => {
    const { tokens } = await boundTokens();
    const res = await callResource(`DPoP   ${tokens.access_token}`, resourceProof(tokens.access_token));
    expect(res.status).toBe(200);
  });

  test('another scheme that merely contains "DPoP " is no credential: the bare challenges', async () => {
    const { tokens } = await boundTokens();
    const res = await callResource(`Basic dpop ${tokens.access_token}`, resourceProof(tokens.access_token));
    expect(res.status).toBe(401);
    expect(res.body.error_description).toBe('An access token is required.');
    expect(res.headers['www-authenticate']).toBe(`Bearer ${METADATA}, DPoP algs="ES256 RS256 PS256"`);
  });

  test('a store that cannot be reached while the proof is recorded: 503 with Retry-After, never a 401 or 500', async () => {
    const { tokens } = await boundTokens();
    server.store.useAssertionId = () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    };
    const res = await callResource(`DPoP ${tokens.access_token}`, resourceProof(tokens.access_token));
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
  });

  test('a proof is good for one request (§11.1)', async () => {
    const { tokens } = await boundTokens();
    const proof = resourceProof(tokens.access_token);
    expect((await callResource(`DPoP ${tokens.access_token}`, proof)).status).toBe(200);
    const again = await callResource(`DPoP ${tokens.access_token}`, proof);
    expect(again.status).toBe(401);
    expect(again.body.error).toBe('invalid_dpop_proof');
  });

  test('the DPoP scheme with a bearer token is refused: nothing binds it to the proof', async () => {
    const client = await publicClient();
    const { body } = await (await authorize(client)).exchange();
    const res = await callResource(`DPoP ${body.access_token}`, resourceProof(body.access_token));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });

  test('a revoked grant stops a bound token as it stops a bearer one', async () => {
    const { tokens } = await boundTokens();
    await server.oauth.revokeGrant(claimsOf(tokens.access_token).grant_id as string);
    const res = await callResource(`DPoP ${tokens.access_token}`, resourceProof(tokens.access_token));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^DPoP .*error="invalid_token"/);
  });
});

test('dpop: true is the default spelt out', async () => {
  server.close();
  server = createTestServer({ dpop: true });
  const client = await publicClient();
  expect((await (await authorize(client)).exchange(tokenProof())).body.token_type).toBe('DPoP');
});

describe('with DPoP turned off (dpop: false)', () => {
  beforeEach(() => {
    server.close();
    server = createTestServer({ dpop: false });
  });

  test('proofs and dpop_jkt are ignored, the metadata does not offer it, and the DPoP scheme is no credential', async () => {
    const client = await publicClient();
    const res = await (await authorize(client, { dpop_jkt: key.jkt })).exchange();
    expect(res.status).toBe(200);
    const withProof = await (await authorize(client)).exchange(tokenProof());
    expect(withProof.body.token_type).toBe('Bearer');
    expect(claimsOf(withProof.body.access_token).cnf).toBeUndefined();
    const metadata = await request(server.app).get('/.well-known/oauth-authorization-server');
    expect(metadata.body.dpop_signing_alg_values_supported).toBeUndefined();
    const refused = await callResource(`DPoP ${res.body.access_token}`, resourceProof(res.body.access_token));
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe(`Bearer ${METADATA}`);
  });
});

test.each([['yes'], [{ requireNonce: 'yes' }], [[]]])('the dpop option %p fails at start', (dpop) => {
  expect(() =>
    createOAuthRouter(server.store, createJwtSigner(), {
      issuer: ISSUER,
      scopes: BUSINESS_SCOPES,
      authenticateUser: () => null,
      dpop: dpop as never,
    }),
  ).toThrow(/createOAuthRouter: dpop/);
});

test('a browser-based client may send a proof to the token endpoint and read the nonce (CORS)', async () => {
  const res = await request(server.app)
    .options('/v1/oauth/token')
    .set('Origin', 'https://app.example')
    .set('Access-Control-Request-Method', 'POST')
    .set('Access-Control-Request-Headers', 'dpop');
  expect(res.headers['access-control-allow-headers']).toMatch(/\bDPoP\b/);
  const post = await request(server.app).post('/v1/oauth/token').set('Origin', 'https://app.example');
  expect(post.headers['access-control-expose-headers']).toMatch(/\bDPoP-Nonce\b/);
});
