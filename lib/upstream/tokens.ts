// A user's upstream tokens, kept with the grant for the tools that call the provider's API: sealed at rest, handed
// out fresh (one upstream refresh for all concurrent callers, across instances, by a lease in the store), and
// deleted (and revoked upstream where the provider offers it) when the grant ends.
import { hashSecret, randomSecret } from '../crypto/secrets';
import { OAuthError } from '../errors';
import { createKeySealer } from '../crypto/encryption-at-rest';
import type { UpstreamTokenStore, UpstreamTokensRecord } from '../store/types';
import { classify, isOAuthErrorAnswer, type UpstreamConnection, type UpstreamTokenSet } from './client';
import type { UpstreamConfig, UpstreamProvider } from './options';

/** A fresh upstream access token, for a tool to call the provider's API with. */
export interface UpstreamToken {
  /** The provider's id. */
  provider: string;
  accessToken: string;
  /** As the provider named it (`Bearer`, `bearer`...): send `Authorization: Bearer <accessToken>`. */
  tokenType: string;
  /** When it expires (ms since the epoch), when the provider said. */
  expiresAt?: number;
  scope?: string;
}

/** How long a sign-in's tokens wait for the user's consent before they are dropped. */
const PENDING_MS = 30 * 60 * 1000;
/** An access token this close to its expiry is refreshed first, so that it does not expire on its way upstream. */
const EARLY_MS = 60 * 1000;
/** How long one caller may take to refresh before another may try: longer than the refresh request may last. */
const leaseMs = (provider: UpstreamProvider) => Math.max(30, provider.timeoutSeconds + 10) * 1000;
const POLL_MS = 100;

export interface UpstreamTokens {
  /** Seals and saves a sign-in's tokens until consent; returns the id the sign-in cookie carries. */
  holdForConsent(provider: UpstreamProvider, userId: string, tokens: UpstreamTokenSet): Promise<string>;
  /** Attaches held tokens to the grant just created; false when they are gone or were already attached. */
  attach(heldId: string, grantId: string, expiresAt: number): Promise<boolean>;
  /** The grant's upstream access token, refreshed first when it has expired. */
  accessToken(grantId: string): Promise<UpstreamToken>;
  /** Deletes the grant's tokens and revokes them upstream (best effort: failures go to `onError`). */
  forget(grantId: string): Promise<void>;
}

export function createUpstreamTokens(options: {
  store: UpstreamTokenStore;
  secret: Buffer;
  upstream: UpstreamConfig;
  connect: (provider: UpstreamProvider) => Promise<UpstreamConnection>;
  now: () => number;
  onError: (error: unknown) => void;
  sleep?: (ms: number) => Promise<void>;
}): UpstreamTokens {
  const { store, upstream, connect, now, onError } = options;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const sealer = createKeySealer(options.secret, 'upstream tokens', "the router's secret");
  // Bound to the provider and the user: a sealed row copied onto another user's does not open.
  const gone = (why: string) =>
    new OAuthError('invalid_token', `The upstream sign-in of this grant ${why}; sign in again.`);
  const label = (row: Pick<UpstreamTokensRecord, 'provider' | 'userId'>) => `${row.provider} ${row.userId}`;
  const open = (row: UpstreamTokensRecord): UpstreamTokenSet => {
    try {
      return JSON.parse(sealer.open(label(row), row.sealed)) as UpstreamTokenSet;
    } catch (error) {
      // Another secret sealed it (rotated without a migration), or the row was altered: unusable either way.
      onError(error);
      throw gone("cannot be opened with this server's secret");
    }
  };
  const inFlight = new Map<string, Promise<UpstreamToken>>();

  const answer = (provider: string, tokens: UpstreamTokenSet): UpstreamToken => ({
    provider,
    accessToken: tokens.accessToken,
    tokenType: tokens.tokenType,
    ...(tokens.expiresAt === undefined ? {} : { expiresAt: tokens.expiresAt }),
    ...(tokens.scope === undefined ? {} : { scope: tokens.scope }),
  });
  const providerOf = (row: UpstreamTokensRecord) => {
    const provider = upstream.providers.get(row.provider);
    if (!provider) throw gone(`names a provider (${row.provider}) this server no longer has`);
    return provider;
  };

  async function fresh(grantId: string): Promise<UpstreamToken> {
    let deadline: number | undefined;
    for (;;) {
      const row = await store.findUpstreamTokens(grantId);
      if (!row) throw gone('is not kept (never, or no more)');
      const tokens = open(row);
      if (tokens.expiresAt === undefined || tokens.expiresAt - EARLY_MS > now())
        return answer(row.provider, tokens);
      if (!tokens.refreshToken) throw gone('has expired, and the provider gave no refresh token');
      const provider = providerOf(row);
      // A caller that waits for another's refresh waits at most for that one's lease, then tries itself once more.
      deadline ??= now() + 2 * leaseMs(provider);
      if (now() > deadline)
        throw new OAuthError('temporarily_unavailable', 'The upstream token is being refreshed; try again.');
      // One caller refreshes; the others wait for the new version (a refresh token may be single-use upstream).
      if (!(await store.leaseUpstreamTokens(grantId, row.version, now() + leaseMs(provider)))) {
        await sleep(POLL_MS);
        continue;
      }
      let renewed: UpstreamTokenSet;
      try {
        renewed = await (await connect(provider)).refresh(tokens.refreshToken, now());
      } catch (error) {
        // RFC 6749 §5.2 invalid_grant: the provider revoked or expired the refresh token; nobody can use these
        // tokens again. Anything else (down, 429, a garbled answer) may pass: the tokens stay, the lease is given
        // back (the same tokens, stored again) so that the next caller tries at once.
        if (isOAuthErrorAnswer(error, ['invalid_grant'])) {
          await store.deleteUpstreamTokens(grantId);
          throw new OAuthError(
            'invalid_token',
            `${provider.name} no longer accepts this sign-in; sign in again.`,
            {
              cause: error,
            },
          );
        }
        await store.replaceUpstreamTokens(grantId, row.version, row.sealed);
        throw new OAuthError(
          'temporarily_unavailable',
          `${provider.name} did not refresh the token; try again later.`,
          {
            cause: classify(error, `${provider.name} refresh`),
          },
        );
      }
      const sealed = sealer.seal(label(row), JSON.stringify(renewed));
      if (await store.replaceUpstreamTokens(grantId, row.version, sealed))
        return answer(row.provider, renewed);
    }
  }

  return {
    async holdForConsent(provider, userId, tokens) {
      const id = randomSecret();
      const row = { provider: provider.id, userId };
      await store.saveUpstreamTokens({
        id: hashSecret(id),
        ...row,
        sealed: sealer.seal(label(row), JSON.stringify(tokens)),
        expiresAt: now() + PENDING_MS,
      });
      return id;
    },

    async attach(heldId, grantId, expiresAt) {
      return Boolean(await store.attachUpstreamTokens(hashSecret(heldId), grantId, expiresAt));
    },

    accessToken(grantId) {
      let pending = inFlight.get(grantId);
      if (!pending) {
        pending = fresh(grantId).finally(() => inFlight.delete(grantId));
        inFlight.set(grantId, pending);
      }
      return pending;
    },

    async forget(grantId) {
      const row = await store.deleteUpstreamTokens(grantId);
      const provider = row && upstream.providers.get(row.provider);
      if (!row || !provider) return;
      try {
        const tokens = open(row);
        const connection = await connect(provider);
        // RFC 7009 §2.1: revoking the refresh token revokes its access tokens at providers that link them.
        if (tokens.refreshToken) await connection.revoke(tokens.refreshToken, 'refresh_token');
        await connection.revoke(tokens.accessToken, 'access_token');
      } catch (error) {
        onError(error);
      }
    },
  };
}
