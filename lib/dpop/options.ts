// The dpop option of createOAuthRouter, parsed once: DPoP (RFC 9449) is on unless turned off, and a server nonce is
// asked for only when the operator wants one.
import { DPOP_ALGORITHMS } from './proof';
import { createDpopNonces, type DpopNonces } from './nonce';

/** DPoP-bound tokens (RFC 9449): offered to clients that send a proof; clients that send none get bearer tokens. */
export interface DpopOptions {
  /**
   * Whether token requests must carry a server nonce in their proof (RFC 9449 §8): a proof without the current one
   * is answered `use_dpop_nonce` with the nonce to use in the `DPoP-Nonce` header. Default false.
   */
  requireNonce?: boolean;
}

/** The parsed DPoP settings the token endpoint and the bearer check use. */
export interface DpopConfig {
  /** The proof algorithms accepted, advertised as dpop_signing_alg_values_supported. */
  algorithms: readonly string[];
  /** The nonces token requests must carry, when the operator asked for them. */
  nonces: DpopNonces | undefined;
}

export function parseDpopOptions(
  given: DpopOptions | boolean | undefined,
  secret: Buffer,
  now: () => number,
  fail: (message: string) => never,
): DpopConfig | undefined {
  if (given === false) return undefined;
  const options = given === undefined || given === true ? {} : given;
  if (!options || typeof options !== 'object' || Array.isArray(options))
    fail('dpop must be true, false or { requireNonce }.');
  const requireNonce = options.requireNonce ?? false;
  if (typeof requireNonce !== 'boolean') fail('dpop.requireNonce must be true or false.');
  return {
    algorithms: DPOP_ALGORITHMS,
    nonces: requireNonce ? createDpopNonces(secret, now) : undefined,
  };
}
