// Step-up leaves one grant: when a code from a consent that added scopes is redeemed, the client's earlier grants
// from the same user for the same resource end. The new grant carries every scope they had (the consent page keeps
// what was allowed before, authorize/handlers.ts), so nothing is lost, and the person sees one row in their connected
// apps with one refresh chain behind it. Done at redemption, not at consent: a code never redeemed (the client
// crashed, the page was a stranger's link) leaves the grant the client is using alone.
import type { Request } from 'express';
import { isClientIdUrl } from '../util/client-id';
import type { GrantRecord, UpstreamTokenStore } from '../store/types';
import type { GrantDeps } from './grant-type';

export async function replaceEarlierGrants(ctx: GrantDeps, req: Request, grant: GrantRecord): Promise<void> {
  // A client named by its metadata document has that one id on every device it runs on: the person's laptop and
  // phone would sign each other out in turn. Its grants stay one per authorization.
  if (isClientIdUrl(grant.clientId)) return;
  const { store, config } = ctx;
  const keepsUpstream = config.upstream?.keepsTokens === true;
  for (const earlier of await store.listActiveGrants(grant.userId)) {
    if (
      earlier.grantId === grant.grantId ||
      earlier.clientId !== grant.clientId ||
      earlier.resource !== grant.resource ||
      // Only older ones: of two step-ups redeemed out of order, the later consent's grant is the one that stays.
      earlier.createdAt > grant.createdAt
    )
      continue;
    // An upstream provider's tokens belong to the grant they came with; the new one, from a consent without a new
    // upstream sign-in, has none, and ending the earlier grant would throw them away with it.
    if (keepsUpstream && (await holdsUpstreamTokens(store, earlier.grantId))) continue;
    await ctx.revokeGrant(earlier.grantId, {
      by: 'replaced',
      req,
      clientId: grant.clientId,
      userId: grant.userId,
    });
  }
}

async function holdsUpstreamTokens(store: GrantDeps['store'], grantId: string): Promise<boolean> {
  const upstream = store as Partial<UpstreamTokenStore>;
  return (await upstream.findUpstreamTokens?.(grantId)) !== undefined;
}
