// DPoP at the token endpoint (RFC 9449 §5): the proof a token request carries, checked for this endpoint, and what a
// client or a code promised about it (dpop_bound_access_tokens, §5.2; dpop_jkt, §10). The grants bind what they issue
// to the key this returns.
import type { Request } from 'express';
import type { OAuthContext } from '../context';
import { OAuthError } from '../errors';
import type { ClientRecord } from '../store/types';
import { readDpopHeader, verifyDpopProof } from '../dpop/proof';

const invalidProof = (description: string) => new OAuthError('invalid_dpop_proof', description);

/**
 * The thumbprint of the key whose proof came with the token request, or undefined for a request without one (the
 * client gets bearer tokens). Throws invalid_dpop_proof for a proof that fails any check of §4.3, use_dpop_nonce when
 * the server asks for a nonce the proof lacks, and invalid_dpop_proof for no proof from a client that registered
 * dpop_bound_access_tokens.
 */
export async function tokenRequestKey(
  { config, store }: Pick<OAuthContext, 'config' | 'store'>,
  req: Request,
  client: ClientRecord,
): Promise<string | undefined> {
  // Off: a proof is ignored, and the client learns it from token_type Bearer (§7.1).
  if (!config.dpop) return undefined;
  const proof = readDpopHeader(req.headers.dpop);
  if (proof === undefined) {
    // §5.2: such a client's tokens must all be bound; a request without a proof may come from a thief of its secret.
    if (client.metadata.dpop_bound_access_tokens === true)
      throw invalidProof(
        'This client registered dpop_bound_access_tokens: send a DPoP proof with every token request.',
      );
    return undefined;
  }
  const { jkt } = await verifyDpopProof(proof, {
    method: 'POST',
    url: config.endpoints.token,
    now: config.now(),
    nonces: config.dpop.nonces,
    // §11.1: one store-wide record per key, so no instance accepts a proof another one has seen.
    useJti: (key, jti, expiresAt) => store.useAssertionId!(`dpop ${key}`, jti, expiresAt),
  });
  return jkt;
}

/**
 * §10 and §5: a code or refresh token bound to a key is redeemed only with a proof made with that key. Checked before
 * the code or token is used, so that whoever stole one without the key cannot even spend it.
 */
export function requireBoundKey(bound: string | undefined, jkt: string | undefined, what: string): void {
  if (bound === undefined) return;
  if (jkt === undefined)
    throw invalidProof(`This ${what} is bound to a DPoP key: send a DPoP proof made with it.`);
  if (jkt !== bound) throw invalidProof(`This ${what} is bound to another DPoP key than the proof’s.`);
}
