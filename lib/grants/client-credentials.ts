// The client_credentials grant (RFC 6749 §4.4; MCP's client credentials extension, SEP-1046): a client the operator
// registered gets an access token for itself, with no user and no refresh token (§4.4.3).
import { OAuthError } from '../errors';
import { readParam, readResource } from '../util/params';
import { parseScope } from '../util/scopes';
import type { GrantType } from './grant-type';
import { issueGrantlessToken } from './grantless-token';
import { operatorScopesOf } from './operator-resources';

export const clientCredentialsGrant: GrantType = {
  type: 'client_credentials',
  // Always offered, but only to clients the operator registered with it (registerOperatorClient): dynamic
  // registration and metadata documents can never ask for it (clients/metadata.ts).
  enabled: () => true,
  issue: (ctx, { req, client, proof }) => {
    const { config } = ctx;
    // §4.4: only a confidential client; authenticateClient proved who it is, never by client_id alone.
    if (client.tokenEndpointAuthMethod === 'none') {
      throw new OAuthError('unauthorized_client', 'A public client cannot use the client_credentials grant.');
    }
    // RFC 8707: the resource asked for, or the default one (null in the grant, as a user's grant keeps it). An
    // operator resource (operator-resources.ts) has scopes of its own, which no other grant can carry; every other
    // resource, the consent catalogue's.
    const resource =
      readParam(req.body, 'resource') === undefined
        ? null
        : readResource(req.body, [...config.resources, ...config.operatorResources.keys()]);
    const own = resource === null ? undefined : config.operatorResources.get(resource);
    // An operator resource's scopes only as the operator gave them, by name (operator-resources.ts).
    const offered = own
      ? new Set(operatorScopesOf(client.metadata).filter((scope) => Object.hasOwn(own, scope)))
      : config.scopeNames;
    // §3.3: the scope asked for, within what the operator allowed the client; all of that when none is asked for.
    const allowed = client.scope.split(' ').filter((scope) => offered.has(scope));
    const scopeParam = readParam(req.body, 'scope');
    const scopes = scopeParam === undefined ? allowed : parseScope(scopeParam, new Set(allowed));
    if (scopes.length === 0)
      throw new OAuthError('invalid_scope', 'This client may ask for no scope of this resource.');
    // RFC 9068 §2.2: with no resource owner, sub names the client.
    return issueGrantlessToken(ctx, req, {
      client,
      subject: client.clientId,
      scopes,
      resource,
      grantType: 'client_credentials',
      jkt: proof.jkt,
    });
  },
};
