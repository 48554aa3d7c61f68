// What a bench server seeds before the timed phase and hands to the load generator: tokens, codes, clients.
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { hashSecret, randomSecret } from '../lib/crypto/secrets';
import { issueRefreshToken } from '../lib/crypto/refresh-token';
import { timeOrderedId } from '../lib/crypto/time-ordered-id';
import { s256Challenge } from '../lib/crypto/pkce';
import type { JwtSigner } from '../lib';
import type { SqliteStore } from '../lib';

export const ISSUER = 'http://127.0.0.1';
export const RESOURCE = `${ISSUER}/mcp`;
export const VERIFIER = 'bench-verifier-bench-verifier-bench-verifier-0123456789';

export interface Fixtures {
  /** One access token reused for every request (an MCP session). */
  reusedToken: string;
  /** Distinct access tokens, more than the token cache holds, so each request verifies one afresh. */
  freshTokens: string[];
  /** A public client and, for each of many grants, its first refresh token. */
  clientId: string;
  refreshTokens: string[];
  /** Codes minted before the timed phase, each redeemable once with VERIFIER. */
  codes: string[];
  /** The next unused code, shared by every row that redeems these codes. */
  codeCursor: { next: number };
  redirectUri: string;
}

/** Adds `count` filler grants, so a run can compare 1,000 stored grants with 1,000,000. */
export function seedFillerGrants(db: Database, clientId: string, count: number, now: number): void {
  const insert = db.prepare(
    `INSERT INTO oauth_grants (grant_id, client_id, user_id, scope, resource, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i += 1)
      insert.run(
        `filler-${i}`,
        clientId,
        `user-${i % 5000}`,
        'fakture:read',
        RESOURCE,
        now,
        now + 30 * 86_400_000,
      );
  });
  for (let from = 0; from < count; from += 50_000) batch(from, Math.min(count, from + 50_000));
}

export async function seedFixtures(
  store: SqliteStore,
  signer: JwtSigner,
  counts: { freshTokens: number; refreshTokens: number; codes: number; fillerGrants: number },
  /** Whose grants they are: the reference app's rows need a user of its own. */
  userId = 'bench-user',
): Promise<Fixtures> {
  const now = Date.now();
  const clientId = `bench-${randomUUID()}`;
  const redirectUri = 'http://127.0.0.1:9/callback';
  await store.registerClient({
    clientId,
    clientSecretHash: null,
    clientName: 'Bench',
    redirectUris: [redirectUri],
    grantTypes: ['authorization_code', 'refresh_token'],
    responseTypes: ['code'],
    tokenEndpointAuthMethod: 'none',
    scope: 'fakture:read clients:read',
    metadata: {},
    issuedAt: now,
  });
  // Grant ids as the library makes them (time-ordered), so the stores' page locality is the real one.
  const grant = (grantId = timeOrderedId()) => ({
    grantId,
    clientId,
    userId,
    scopes: ['fakture:read', 'clients:read'],
    resource: RESOURCE,
    createdAt: now,
    expiresAt: now + 30 * 86_400_000,
    lastUsedAt: null,
    revokedAt: null,
  });
  const tx = (work: () => void) => store.database.transaction(work)();

  const main = grant();
  await store.createGrant(main);
  const sign = () =>
    signer.signAccessToken({
      issuer: ISSUER,
      subject: userId,
      audience: RESOURCE,
      clientId,
      scope: 'fakture:read clients:read',
      grantId: main.grantId,
      expiresIn: 3600,
    }).token;
  const freshTokens = Array.from({ length: counts.freshTokens }, sign);

  const refreshTokens: string[] = [];
  tx(() => {
    for (let i = 0; i < counts.refreshTokens; i += 1) {
      const g = grant();
      store.createGrant(g);
      const { token, key } = issueRefreshToken(g.grantId);
      // As the library does: a first refresh token comes with a redeemed code.
      const codeHash = hashSecret(randomSecret());
      store.saveAuthorizationCode({
        codeHash,
        grantId: g.grantId,
        clientId,
        userId: g.userId,
        redirectUri,
        scopes: g.scopes,
        resource: g.resource,
        codeChallenge: s256Challenge(VERIFIER),
        codeChallengeMethod: 'S256',
        expiresAt: now + 600_000,
      });
      store.consumeAuthorizationCode(codeHash, { key });
      refreshTokens.push(token);
    }
  });

  const codes: string[] = [];
  const challenge = s256Challenge(VERIFIER);
  tx(() => {
    for (let i = 0; i < counts.codes; i += 1) {
      const g = grant();
      store.createGrant(g);
      const code = randomSecret();
      store.saveAuthorizationCode({
        codeHash: hashSecret(code),
        grantId: g.grantId,
        clientId,
        userId: g.userId,
        redirectUri,
        scopes: g.scopes,
        resource: RESOURCE,
        codeChallenge: challenge,
        codeChallengeMethod: 'S256',
        expiresAt: now + 3600_000, // longer than the 10 minutes of real codes: the bench outlasts them
      });
      codes.push(code);
    }
  });

  seedFillerGrants(store.database, clientId, counts.fillerGrants, now);
  return {
    reusedToken: sign(),
    freshTokens,
    clientId,
    refreshTokens,
    codes,
    codeCursor: { next: 0 },
    redirectUri,
  };
}
