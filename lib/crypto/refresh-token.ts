// Refresh tokens carry their grant's id in front of the secret part ("<grant id>.<secret>"), and are stored under
// "<grant id>.<SHA-256 of the token>" (RefreshTokenKey in store/types.ts says exactly what a store may assume). The
// grant id is no secret (access tokens carry it as the grant_id claim); what it buys is locality: a grant's tokens
// sit side by side in the store's primary key, so issuing a successor writes next to its parent and a grant's
// tokens are found and purged by key range, without a second index. Tokens from before this format (no dot) are
// stored under their bare hash and keep working.
//
// A token's successor is not random: it is derived from the token with the router's successor key, so that every
// client process presenting one token is handed the same successor and the grant's tokens stay one chain instead of
// branching (grants/rotation.ts says when a token may be presented again). Like any token it is stored only by its
// key; deriving it needs the presented token itself and the key, which never leaves the server.
//
// A public client's token can be bound to its DPoP key (RFC 9449 §5): "<grant id>.<jkt>.<secret>". The thumbprint is
// public and part of the hashed token, so it cannot be changed or stripped without the token becoming unknown; the
// token's successors keep it, so the whole chain is bound to the key that started it.
import { createHmac } from 'node:crypto';
import { randomSecret, sha256 } from './secrets';
import type { RefreshTokenKey } from '../store/types';

/** A new refresh token for a grant (bound to a DPoP key when `jkt` is given), and the key it is stored under. */
export function issueRefreshToken(grantId: string, jkt?: string): { token: string; key: RefreshTokenKey } {
  const token = `${prefixOf(grantId, jkt)}.${randomSecret()}`;
  return { token, key: refreshTokenKey(token) };
}

/** The thumbprint of the DPoP key a refresh token is bound to, or undefined for an unbound token. */
export function boundKeyOf(token: string): string | undefined {
  const parts = token.split('.');
  return parts.length === 3 ? parts[1] : undefined;
}

const prefixOf = (grantId: string, jkt: string | undefined) =>
  jkt === undefined ? grantId : `${grantId}.${jkt}`;

/**
 * The one successor of `token` in `grantId`, and its key: HMAC-SHA-256 of the token under `successorKey`, in the
 * same "<grant id>.<secret>" form (and of the same 256 bits) as a random token, bound to the same DPoP key.
 */
export function successorOf(
  token: string,
  grantId: string,
  successorKey: Buffer,
): { token: string; key: RefreshTokenKey } {
  const secret = createHmac('sha256', successorKey).update(token).digest('base64url');
  const successor = `${prefixOf(grantId, boundKeyOf(token))}.${secret}`;
  return { token: successor, key: refreshTokenKey(successor) };
}

/** The store key of a presented refresh token: its grant's id and its hash, or the bare hash for an old token. */
export function refreshTokenKey(token: string): RefreshTokenKey {
  const dot = token.lastIndexOf('.');
  return (dot > 0 ? `${token.slice(0, dot)}.${sha256(token)}` : sha256(token)) as RefreshTokenKey;
}

/** The key range that holds every new-format token of a grant: [lower, upper). */
export function grantKeyRange(grantId: string): [string, string] {
  // "/" is the character after "." in ASCII: every "<grant id>.…" key sorts between the two bounds.
  return [`${grantId}.`, `${grantId}/`];
}
