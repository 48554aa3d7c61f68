// What every handler shares: the store, the signer, the parsed config and the browser-side helpers.
import type { Request, RequestHandler, Response } from 'express';
import type { Sealer } from './crypto/seal';
import type { JwtSigner } from './crypto/signer';
import type { OAuthConfig } from './options';
import type { Pages } from './pages';
import type { BrowserSession } from './session';
import type { ClientRecord, OAuthStore } from './store/types';

export interface OAuthContext {
  store: OAuthStore;
  signer: JwtSigner;
  config: OAuthConfig;
  sealer: Sealer;
  session: BrowserSession;
  pages: Pages;
  /** Revokes a grant in the store and forgets it in this process at once. */
  revokeGrant(grantId: string): Promise<boolean>;
  /** A registered client, from memory when it was looked up before: clients never change once registered. */
  findClient(clientId: string): Promise<ClientRecord | undefined>;
}

const MAX_CLIENTS = 10_000;

/** The store's findClient with a bounded memory in front (registrations are immutable; unknown ids are not kept). */
export function cachedClientLookup(
  store: OAuthStore,
): (clientId: string) => Promise<ClientRecord | undefined> {
  const known = new Map<string, ClientRecord>();
  return async (clientId) => {
    const cached = known.get(clientId);
    if (cached) return cached;
    const client = await store.findClient(clientId);
    if (client) {
      if (known.size >= MAX_CLIENTS) known.delete(known.keys().next().value as string);
      known.set(clientId, client);
    }
    return client;
  };
}

/** Wraps an async handler so that a rejection reaches the error handler on Express 4 as on Express 5. */
export function handle(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return function asyncHandler(req, res, next) {
    fn(req, res).catch(next);
  };
}
