// Client authentication at the token and revocation endpoints (RFC 6749 §2.3): client_secret_basic,
// client_secret_post, private_key_jwt (RFC 7523 §2.2), or none for public clients, each exactly as the client
// registered (or as its metadata document says).
import type { Request } from 'express';
import type { OAuthContext } from '../context';
import {
  assertionAudiences,
  assertionSubject,
  JWT_BEARER_ASSERTION,
  verifyClientAssertion,
} from './assertion';
import { secretMatchesHash } from '../crypto/secrets';
import { OAuthError } from '../errors';
import type { ClientRecord, TokenEndpointAuthMethod } from '../store/types';
import { containsControlCharacter, readParam } from '../util/params';

/** What client authentication reads: clients, their keys, and the assertion-id record of the store. */
export type ClientAuthenticationDeps = Pick<OAuthContext, 'findClient' | 'clientKeys' | 'store' | 'config'>;

interface PresentedCredentials {
  method: TokenEndpointAuthMethod;
  clientId: string;
  clientSecret?: string;
  assertion?: string;
}

/**
 * The client that made the request, authenticated as it registered. With `optional`, a request that carries no
 * client identification at all yields undefined (RFC 7009 revocation by token possession). A client assertion has
 * the same accepted audiences at every endpoint (assertionAudiences): the issuer, or the token endpoint.
 */
export async function authenticateClient(
  ctx: ClientAuthenticationDeps,
  req: Request,
  { optional = false }: { optional?: boolean } = {},
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

  const client = await ctx.findClient(presented.clientId, req);
  if (!client) throw failure('Client authentication failed.');
  if (client.tokenEndpointAuthMethod !== presented.method) {
    throw failure(
      `This client registered token_endpoint_auth_method ${client.tokenEndpointAuthMethod}; authenticate that way.`,
    );
  }
  if (presented.method === 'private_key_jwt') {
    const { config } = ctx;
    // Off when the store keeps no assertion ids (router/capabilities.ts): a replayable assertion is no proof.
    if (!config.authMethods.includes('private_key_jwt'))
      throw failure('This server does not accept private_key_jwt client authentication.');
    await verifyClientAssertion(presented.assertion!, client, {
      keys: (refetch) => ctx.clientKeys(client, { refetch, req }),
      audiences: assertionAudiences(config.issuer, config.endpoints.token),
      now: config.now,
      // createOAuthRouter turns private_key_jwt off when the store cannot keep assertion ids.
      useAssertionId: (clientId, jti, expiresAt) => ctx.store.useAssertionId!(clientId, jti, expiresAt),
    });
  } else if (presented.method !== 'none') {
    // The stored value is a SHA-256 hash; the comparison of hashes takes constant time.
    if (
      !client.clientSecretHash ||
      // Stryker disable next-line StringLiteral: equivalent, a secret method always comes with its secret (the ?? is for the type)
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
  const assertionType = readParam(req.body, 'client_assertion_type');
  const assertion = readParam(req.body, 'client_assertion');
  if (assertionType !== undefined || assertion !== undefined) {
    // RFC 6749 §2.3: a client MUST NOT use more than one authentication method in a request.
    // Stryker disable next-line ConditionalExpression: equivalent, /^basic /i does not match undefined (read as "undefined")
    if (bodySecret !== undefined || (header !== undefined && /^basic /i.test(header)))
      throw new OAuthError(
        'invalid_request',
        'Authenticate with a client assertion or a client secret, not both.',
      );
    if (assertionType !== JWT_BEARER_ASSERTION)
      throw new OAuthError('invalid_request', `client_assertion_type must be ${JWT_BEARER_ASSERTION}.`);
    if (assertion === undefined) throw new OAuthError('invalid_request', 'client_assertion is missing.');
    // RFC 7523 §3: the assertion's sub is the client_id; a client_id sent beside it must agree.
    const subject = assertionSubject(assertion);
    if (!subject)
      throw new OAuthError('invalid_client', 'The client assertion is not a JWT with a sub claim.');
    if (bodyId !== undefined && bodyId !== subject)
      throw new OAuthError('invalid_client', 'The client assertion is about another client than client_id.');
    return { method: 'private_key_jwt', clientId: subject, assertion };
  }
  // Stryker disable next-line ConditionalExpression: equivalent, /^basic /i does not match undefined (read as "undefined")
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
    const clientId = formDecode(decoded.slice(0, colon));
    const clientSecret = formDecode(decoded.slice(colon + 1));
    // The header is outside the parameter check of the routes: control characters are refused here.
    if (containsControlCharacter(clientId) || containsControlCharacter(clientSecret)) throw invalid();
    return { clientId, clientSecret };
  } catch {
    throw invalid();
  }
}
