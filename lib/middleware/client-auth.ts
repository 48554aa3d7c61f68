// Client authentication at the token and revocation endpoints (RFC 6749 §2.3): client_secret_basic,
// client_secret_post, or none for public clients, each exactly as the client registered.
import type { Request } from 'express';
import { secretMatchesHash } from '../crypto/secrets';
import { OAuthError } from '../errors';
import type { ClientRecord, TokenEndpointAuthMethod } from '../store/types';
import { readParam } from '../util/params';

interface PresentedCredentials {
  method: TokenEndpointAuthMethod;
  clientId: string;
  clientSecret: string | undefined;
}

/**
 * The client that made the request, authenticated as it registered. With `optional`, a request that carries no
 * client identification at all yields undefined (RFC 7009 revocation by token possession).
 */
export async function authenticateClient(
  findClient: (clientId: string) => Promise<ClientRecord | undefined>,
  req: Request,
  { optional = false } = {},
): Promise<ClientRecord | undefined> {
  const presented = readCredentials(req);
  if (!presented) {
    if (optional) return undefined;
    throw new OAuthError(
      'invalid_client',
      'Client authentication is required: send client_id (and its secret).',
    );
  }
  const basic = presented.method === 'client_secret_basic';
  const failure = (description: string) =>
    new OAuthError(
      'invalid_client',
      description,
      basic ? { headers: { 'WWW-Authenticate': 'Basic realm="oauth"' } } : {},
    );

  const client = await findClient(presented.clientId);
  if (!client) throw failure('Client authentication failed.');
  if (client.tokenEndpointAuthMethod !== presented.method) {
    throw failure(
      `This client registered token_endpoint_auth_method ${client.tokenEndpointAuthMethod}; authenticate that way.`,
    );
  }
  if (presented.method !== 'none') {
    // The stored value is a SHA-256 hash; the comparison of hashes takes constant time.
    if (
      !client.clientSecretHash ||
      !secretMatchesHash(presented.clientSecret ?? '', client.clientSecretHash)
    ) {
      throw failure('Client authentication failed.');
    }
  }
  return client;
}

function readCredentials(req: Request): PresentedCredentials | undefined {
  const header = req.headers.authorization;
  const bodyId = readParam(req.body, 'client_id');
  const bodySecret = readParam(req.body, 'client_secret');
  if (header !== undefined && /^basic /i.test(header)) {
    // RFC 6749 §2.3: a client MUST NOT use more than one authentication method in a request.
    if (bodySecret !== undefined) {
      throw new OAuthError(
        'invalid_request',
        'Send the client secret either in the Authorization header or in the body, not both.',
      );
    }
    const { clientId, clientSecret } = parseBasic(header.slice(6).trim());
    if (bodyId !== undefined && bodyId !== clientId) {
      throw new OAuthError(
        'invalid_request',
        'The client_id in the body differs from the one in the Authorization header.',
      );
    }
    return { method: 'client_secret_basic', clientId, clientSecret };
  }
  if (bodyId === undefined) {
    if (bodySecret !== undefined)
      throw new OAuthError('invalid_request', 'client_secret was sent without client_id.');
    return undefined;
  }
  return bodySecret === undefined
    ? { method: 'none', clientId: bodyId, clientSecret: undefined }
    : { method: 'client_secret_post', clientId: bodyId, clientSecret: bodySecret };
}

function parseBasic(encoded: string): { clientId: string; clientSecret: string } {
  const invalid = () =>
    new OAuthError('invalid_client', 'The Basic credentials are malformed.', {
      headers: { 'WWW-Authenticate': 'Basic realm="oauth"' },
    });
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (!/^[A-Za-z0-9+/]+=*$/.test(encoded) || colon < 1) throw invalid();
  try {
    // RFC 6749 §2.3.1: both parts are form-urlencoded before being joined.
    const formDecode = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '));
    return {
      clientId: formDecode(decoded.slice(0, colon)),
      clientSecret: formDecode(decoded.slice(colon + 1)),
    };
  } catch {
    throw invalid();
  }
}
