// Dynamic client registration (RFC 7591 §3): a client registers itself, without a user present.
import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';
import { handle, type OAuthContext } from '../context';
import { hashSecret, randomSecret } from '../crypto/secrets';
import { OAuthError } from '../errors';
import type { ClientRecord } from '../store/types';
import { validateClientMetadata } from '../clients/metadata';

/** The registration response (RFC 7591 §3.2.1): the full registered metadata, and the secret, once. */
function registrationResponse(
  client: ClientRecord,
  clientSecret: string | undefined,
): Record<string, unknown> {
  return {
    client_id: client.clientId,
    ...(clientSecret === undefined ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 }),
    client_id_issued_at: Math.floor(client.issuedAt / 1000),
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: client.responseTypes,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    ...(client.clientName === null ? {} : { client_name: client.clientName }),
    scope: client.scope,
    ...client.metadata,
  };
}

export function registerHandler({
  store,
  config,
  emit,
}: Pick<OAuthContext, 'store' | 'config' | 'emit'>): RequestHandler {
  return handle(async function registrationEndpoint(req, res) {
    const metadata = validateClientMetadata(req.body, config.scopeNames, {
      deviceGrant: config.deviceAuthorization !== undefined,
    });
    if (!config.authMethods.includes(metadata.tokenEndpointAuthMethod)) {
      // RFC 7591 §3.2.2: a value the server does not support is invalid client metadata.
      throw new OAuthError(
        'invalid_client_metadata',
        `This server does not offer token_endpoint_auth_method ${metadata.tokenEndpointAuthMethod}; use one of ${config.authMethods.join(', ')}.`,
      );
    }
    // Only the shared-secret methods get a secret; a private_key_jwt client proves itself with its own keys.
    const confidential = metadata.tokenEndpointAuthMethod.startsWith('client_secret_');
    const clientSecret = confidential ? randomSecret() : undefined;
    const client: ClientRecord = {
      clientId: randomBytes(16).toString('base64url'),
      // Only the hash is stored: the secret is shown once, in this response.
      clientSecretHash: clientSecret === undefined ? null : hashSecret(clientSecret),
      clientName: metadata.clientName,
      redirectUris: metadata.redirectUris,
      grantTypes: metadata.grantTypes,
      responseTypes: metadata.responseTypes,
      tokenEndpointAuthMethod: metadata.tokenEndpointAuthMethod,
      scope: metadata.scope,
      metadata: metadata.extra,
      issuedAt: config.now(),
    };
    await store.registerClient(client);
    emit(req, 'client.registered', { clientId: client.clientId });
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json(registrationResponse(client, clientSecret));
  });
}
