// DPoP at the token endpoint (RFC 9449 §5): the proof a token request carries, checked for this endpoint, and what a
// client or a code promised about it (dpop_bound_access_tokens, §5.2; dpop_jkt, §10). The grants bind what they issue
// to the key this returns.
import type { Request } from 'express';
import type { OAuthContext } from '../context';
import { OAuthError } from '../errors';
import type { ClientRecord } from '../store/types';
import { checkDpopProof, readDpopHeader, useDpopProof } from './proof';

const invalidProof = (description: string) => new OAuthError('invalid_dpop_proof', description);

/** The key a token request proved possession of, and the last step of its proof, to take once the grant is good. */
export interface TokenRequestProof {
  /** The thumbprint of the proof's key (what the tokens are bound to), or undefined for a request without a proof. */
  jkt: string | undefined;
  /**
   * Records the proof's jti, or throws invalid_dpop_proof for a proof used before (§11.1), once: later calls give the
   * first call's outcome. Called once the grant is known good and before the answer is sent; does nothing without a
   * proof.
   */
  useJti(): Promise<void>;
}

const NO_PROOF: TokenRequestProof = { jkt: undefined, useJti: async () => undefined };

/**
 * The proof that came with a token request, checked by every rule of §4.3 but not yet recorded (useJti does that).
 * Throws invalid_dpop_proof for a proof that fails a check, use_dpop_nonce when the server asks for a nonce the proof
 * lacks, and invalid_dpop_proof for no proof from a client that registered dpop_bound_access_tokens.
 *
 * Why the jti is recorded later than the checks: §11.1 asks the server to remember each proof's jti while the proof
 * could be accepted, and does not say at which point of a request. Recorded here, before the grant, every request with
 * a made-up code or refresh token and a fresh proof (which anyone can make with a key of their own) left a row in the
 * store. Recorded once the grant is known good, only a request that gets tokens leaves one. §4.3's list (items 1 to
 * 12, the last the protected resource's ath and key) has no replay step to keep in order. The protected resource
 * (lib/middleware/bearer.ts), where nothing is decided after item 12, records the jti at once.
 */
export function tokenRequestProof(
  { config, store }: Pick<OAuthContext, 'config' | 'store'>,
  req: Request,
  client: ClientRecord,
): TokenRequestProof {
  // Off: a proof is ignored, and the client learns it from token_type Bearer (§7.1).
  if (!config.dpop) return NO_PROOF;
  const proof = readDpopHeader(req.headers.dpop);
  if (proof === undefined) {
    // §5.2: such a client's tokens must all be bound; a request without a proof may come from a thief of its secret.
    if (client.metadata.dpop_bound_access_tokens === true)
      throw invalidProof(
        'This client registered dpop_bound_access_tokens: send a DPoP proof with every token request.',
      );
    return NO_PROOF;
  }
  const checked = checkDpopProof(proof, {
    method: 'POST',
    url: config.endpoints.token,
    now: config.now(),
    nonces: config.dpop.nonces,
  });
  let used: Promise<void> | undefined;
  return {
    jkt: checked.jkt,
    // §11.1: one store-wide record per key, so no instance accepts a proof another one has seen. Once per request: a
    // grant may record it before its last step, and the endpoint calls again after every grant.
    useJti: () =>
      (used ??= useDpopProof(checked, (key, jti, expiresAt) =>
        store.useAssertionId!(`dpop ${key}`, jti, expiresAt),
      )),
  };
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
