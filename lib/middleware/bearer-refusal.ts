// The refusal every protected route sends (RFC 6750 §3, RFC 9728 §5.1, RFC 9449 §7.1): the status, the challenges
// naming the resource metadata, and the error as JSON. Shared by requireBearer and the MCP handler's per-tool scope
// check, so that a client reads one shape whatever refused it.
import type { ServerResponse } from 'node:http';
import { DPOP_ALGORITHMS } from '../dpop/proof';
import { OAuthError } from '../errors';
import { writeJson } from '../util/json-response';
import { recordOAuthError } from '../telemetry/spans';

/** How a refusal speaks of DPoP (RFC 9449 §7.1), on a resource that accepts DPoP-bound tokens. */
export interface DpopChallengeOptions {
  /** The proof algorithms the resource accepts, named in the DPoP challenge's `algs`. Default: the library's. */
  algorithms?: readonly string[];
  /**
   * Whether the request came with the DPoP scheme: the error then goes in the DPoP challenge, which comes first.
   * Otherwise the Bearer challenge carries it and comes first (the MCP SDK reads only a leading Bearer challenge).
   */
  used?: boolean;
}

/**
 * An auth-param value (RFC 9110 §11.2): a quoted string of visible ASCII. Descriptions are English prose, with
 * typographic apostrophes: those become ASCII ones, and anything else a header cannot carry is left out, since Node
 * refuses to send such a header at all.
 */
const quote = (value: string) =>
  `"${value.replace(/[\u2018\u2019]/g, "'").replace(/[^\x20-\x7e]|["\\]/g, '')}"`;

/** The `WWW-Authenticate` value: always the metadata URL; the error when there is one (none for no credentials). */
function bearerChallenge(resourceMetadataUrl: string, error?: OAuthError, scope?: string): string {
  return challenge('Bearer', resourceMetadataUrl, error, scope);
}

function challenge(scheme: string, resourceMetadataUrl: string, error?: OAuthError, scope?: string): string {
  let value = `${scheme} resource_metadata=${quote(resourceMetadataUrl)}`;
  // RFC 6750 §3: scope names what the request needs, all of it, so a client can ask for it in one step.
  if (scope) value += `, scope=${quote(scope)}`;
  if (error) value += `, error=${quote(error.code)}, error_description=${quote(error.description)}`;
  return value;
}

/**
 * The challenges, in order: the one of the scheme the request used, with the error; then, for a 401, the other
 * scheme's bare one, so the client learns it could use either (RFC 9449 §7.2).
 */
function challenges(
  resourceMetadataUrl: string,
  error: OAuthError | undefined,
  scope: string | undefined,
  status: number,
  dpop: DpopChallengeOptions | undefined,
): string | string[] {
  if (!dpop) return bearerChallenge(resourceMetadataUrl, error, scope);
  const algs = `algs=${quote((dpop.algorithms ?? DPOP_ALGORITHMS).join(' '))}`;
  if (dpop.used) {
    const first = `${challenge('DPoP', resourceMetadataUrl, error, scope)}, ${algs}`;
    return status === 401 ? [first, bearerChallenge(resourceMetadataUrl)] : first;
  }
  const first = bearerChallenge(resourceMetadataUrl, error, scope);
  return status === 401 ? [first, `DPoP ${algs}`] : first;
}

/**
 * Answers the refusal. A request without credentials gets the challenges but no error code (RFC 6750 §3.1). With
 * `dpop`, the resource accepts DPoP-bound tokens too, and says so (RFC 9449 §7.1).
 */
export function refuseBearer(
  res: ServerResponse,
  resourceMetadataUrl: string,
  error: OAuthError | undefined,
  scope?: string,
  dpop?: DpopChallengeOptions,
): void {
  const body = error ?? new OAuthError('invalid_token', 'An access token is required.');
  recordOAuthError(body.code);
  res.setHeader('WWW-Authenticate', challenges(resourceMetadataUrl, error, scope, body.status, dpop));
  // Added to what the host app exposes already (Mcp-Session-Id, say), never in place of it.
  const exposed = String(res.getHeader('Access-Control-Expose-Headers') ?? '');
  if (!/\bwww-authenticate\b/i.test(exposed)) {
    res.setHeader(
      'Access-Control-Expose-Headers',
      exposed ? `${exposed}, WWW-Authenticate` : 'WWW-Authenticate',
    );
  }
  res.setHeader('Cache-Control', 'no-store');
  writeJson(res, body.status, body.toJSON());
}

/**
 * What requireBearer asks to be done before a route behind it refuses the token for want of scope: marking the grant
 * for the step-up window (grants/step-up-window.ts). It rides on `req.auth` under a symbol nothing public names (so
 * nobody else can set it), as an own enumerable property, which the copies hosts make to add to `req.auth` keep (the
 * reference app spreads it). Not on the response: a property added to every response, or a WeakMap entry per request,
 * cost the bearer check a tenth of its throughput under load (bench/README.md).
 */
export const SCOPE_REFUSAL_MARKER = Symbol('express-mcp-oauth.scopeRefusalMarker');

/** Marks a grant before its token is refused for want of scope; made once per route. */
export type ScopeRefusalMarker = (grantId: string, res: ServerResponse) => Promise<void>;

/** Does what requireBearer registered in `auth`, once the decision to refuse for want of scope is made. */
export async function beforeRefusingScope(
  auth: { grantId: string; [SCOPE_REFUSAL_MARKER]?: ScopeRefusalMarker | undefined },
  res: ServerResponse,
): Promise<void> {
  const marker = auth[SCOPE_REFUSAL_MARKER];
  if (marker) await marker(auth.grantId, res);
}
