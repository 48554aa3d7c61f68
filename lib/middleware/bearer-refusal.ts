// The refusal every protected route sends (RFC 6750 §3, RFC 9728 §5.1): the status, a Bearer challenge naming the
// resource metadata, and the error as JSON. Shared by requireBearer and the MCP handler's per-tool scope check, so
// that a client reads one shape whatever refused it.
import type { Response } from 'express';
import { OAuthError } from '../errors';

const quote = (value: string) => `"${value.replace(/["\\]/g, '')}"`;

/** The `WWW-Authenticate` value: always the metadata URL; the error when there is one (none for no credentials). */
export function bearerChallenge(resourceMetadataUrl: string, error?: OAuthError, scope?: string): string {
  let challenge = `Bearer resource_metadata=${quote(resourceMetadataUrl)}`;
  // RFC 6750 §3: scope names what the request needs, all of it, so a client can ask for it in one step.
  if (scope) challenge += `, scope=${quote(scope)}`;
  if (error) challenge += `, error=${quote(error.code)}, error_description=${quote(error.description)}`;
  return challenge;
}

/** Answers the refusal. A request without credentials gets the challenge but no error code (RFC 6750 §3.1). */
export function refuseBearer(
  res: Response,
  resourceMetadataUrl: string,
  error: OAuthError | undefined,
  scope?: string,
): void {
  res.setHeader('WWW-Authenticate', bearerChallenge(resourceMetadataUrl, error, scope));
  // Added to what the host app exposes already (Mcp-Session-Id, say), never in place of it.
  const exposed = String(res.getHeader('Access-Control-Expose-Headers') ?? '');
  if (!/\bwww-authenticate\b/i.test(exposed)) {
    res.setHeader(
      'Access-Control-Expose-Headers',
      exposed ? `${exposed}, WWW-Authenticate` : 'WWW-Authenticate',
    );
  }
  res.setHeader('Cache-Control', 'no-store');
  const body = error ?? new OAuthError('invalid_token', 'An access token is required.');
  res.status(body.status).json(body.toJSON());
}
