// Discovery documents: authorization-server metadata (RFC 8414), protected-resource metadata (RFC 9728) and the
// JWKS. Each is serialised once at startup; a request only writes the prepared bytes.
import type { RequestHandler } from 'express';
import { ASSERTION_ALGORITHMS } from '../clients/assertion';
import { offeredGrants } from '../grants/table';
import { ID_JAG_PROFILE } from '../id-jag/options';
import type { JwtSigner } from '../crypto/signer';
import type { OAuthConfig } from '../options';

/** A document serialised once; browser-based MCP clients may read it from any origin. */
function jsonDocument(document: unknown, cacheControl: string): RequestHandler {
  const body = Buffer.from(JSON.stringify(document));
  return function serveDocument(_req, res) {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Cache-Control', cacheControl);
    res.end(body);
  };
}

export function authorizationServerMetadataHandler(config: OAuthConfig): RequestHandler {
  const { endpoints, authMethods } = config;
  // Algorithms of client assertions: listed only while private_key_jwt is offered.
  const signingAlgorithms = authMethods.includes('private_key_jwt') ? [...ASSERTION_ALGORITHMS] : undefined;
  return jsonDocument(
    {
      issuer: config.issuer,
      authorization_endpoint: endpoints.authorization,
      token_endpoint: endpoints.token,
      registration_endpoint: endpoints.registration,
      revocation_endpoint: endpoints.revocation,
      introspection_endpoint: endpoints.introspection,
      jwks_uri: endpoints.jwks,
      // RFC 8628 §4: where a device asks for its codes.
      ...(endpoints.deviceAuthorization
        ? { device_authorization_endpoint: endpoints.deviceAuthorization }
        : {}),
      scopes_supported: Object.keys(config.scopes),
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      // client_credentials and jwt-bearer are only for clients the operator registered (registerOperatorClient);
      // jwt-bearer only while enterprise IdPs are configured.
      grant_types_supported: offeredGrants(config).map((grant) => grant.type),
      // The extension §6, draft §7: how a client learns that ID-JAGs are accepted here.
      ...(config.enterpriseIdps ? { authorization_grant_profiles_supported: [ID_JAG_PROFILE] } : {}),
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: authMethods,
      ...(signingAlgorithms && { token_endpoint_auth_signing_alg_values_supported: signingAlgorithms }),
      revocation_endpoint_auth_methods_supported: authMethods,
      ...(signingAlgorithms && { revocation_endpoint_auth_signing_alg_values_supported: signingAlgorithms }),
      // RFC 7662 §2.1: introspection callers must authenticate, so "none" is not offered.
      introspection_endpoint_auth_methods_supported: authMethods.filter((method) => method !== 'none'),
      ...(signingAlgorithms && {
        introspection_endpoint_auth_signing_alg_values_supported: signingAlgorithms,
      }),
      authorization_response_iss_parameter_supported: true,
      // RFC 9449 §5.1: DPoP is offered, with these proof algorithms.
      ...(config.dpop ? { dpop_signing_alg_values_supported: config.dpop.algorithms } : {}),
      // draft-ietf-oauth-client-id-metadata-document §6: an https URL may be sent as client_id.
      ...(config.clientDocuments.enabled ? { client_id_metadata_document_supported: true } : {}),
      ...(config.serviceDocumentation ? { service_documentation: config.serviceDocumentation } : {}),
    },
    'public, max-age=3600',
  );
}

export function protectedResourceMetadataHandler(
  config: OAuthConfig,
  resource: string,
  /** The resource's scopes: an operator resource's own, or the consent catalogue. */
  scopes: Readonly<Record<string, string>> = config.scopes,
): RequestHandler {
  return jsonDocument(
    {
      resource,
      // RFC 9728 §3.3: byte-identical to the issuer of the authorization server metadata.
      authorization_servers: [config.issuer],
      scopes_supported: Object.keys(scopes),
      bearer_methods_supported: ['header'],
      resource_name: config.serviceName,
      // RFC 9728 §2: the resource accepts DPoP-bound tokens, and bearer tokens too.
      ...(config.dpop
        ? {
            dpop_signing_alg_values_supported: config.dpop.algorithms,
            dpop_bound_access_tokens_required: false,
          }
        : {}),
      ...(config.serviceDocumentation ? { resource_documentation: config.serviceDocumentation } : {}),
    },
    'public, max-age=3600',
  );
}

export function jwksHandler(signer: JwtSigner): RequestHandler {
  // Short caching: a verifier elsewhere must see a newly added key soon after a rotation.
  const cacheControl = 'public, max-age=300';
  if (!signer.reloadKeys) return jsonDocument(signer.jwks(), cacheControl);
  // A key set shared with other instances: read at most a second old, so a key another instance (or
  // `keys:rotate`) has just added is published at once; serialised again only when the set changed.
  let served: { jwks: unknown; handler: RequestHandler } | undefined;
  const reloadKeys = signer.reloadKeys.bind(signer);
  return function serveKeySet(req, res, next) {
    reloadKeys({ maxAgeMs: 1000 }).then(() => {
      const jwks = signer.jwks();
      if (served?.jwks !== jwks) served = { jwks, handler: jsonDocument(jwks, cacheControl) };
      served.handler(req, res, next);
    }, next);
  };
}
