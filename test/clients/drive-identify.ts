// How a client gets its client_id, and the redirect URI it uses: its Client ID Metadata Document served from the
// loopback document server, or its registration body POSTed to the server (RFC 7591).
import { createPublicKey, randomInt } from 'node:crypto';
import { chatGptDocument, type KeyedClient } from '../helpers/client-documents';
import { TEST_HOSTS } from '../helpers/test-ca';
import { readJson, refusal } from './drive-discovery';
import { scopeToAsk } from './drive-requests';
import type { Discovery, Identity, Json, Matrix } from './drive-types';
import type { ClientProfile } from './profile';

/** A port the client's loopback listener could have been given (never listened on: the Location is read). */
const ephemeralPort = () => randomInt(49152, 65536);

/** The redirect URIs the client publishes or registers. */
function declaredRedirectUris(profile: ClientProfile): string[] {
  const declared =
    profile.identification.kind === 'metadata-document'
      ? profile.identification.document.redirect_uris
      : profile.identification.body.redirect_uris;
  return Array.isArray(declared) ? declared.filter((uri): uri is string => typeof uri === 'string') : [];
}

/**
 * The redirect URI of this run: for an ephemeral port one at random; for a fixed port the one the profile records,
 * the port p for which uri(p) is written in its document or body, its needs or its sources (VS Code's 33418,
 * opencode's 19876); a shape without a port (https, a private-use scheme) as it is.
 */
export function redirectUriFor(profile: ClientProfile): string {
  const { redirect } = profile;
  if (redirect.port === 'none') return redirect.uri(0);
  if (redirect.port === 'ephemeral') return redirect.uri(ephemeralPort());
  const recorded = [
    ...declaredRedirectUris(profile),
    ...profile.needs,
    ...Object.values(profile.sources).map((source) => source.says),
  ].join(' ');
  const ports = [...recorded.matchAll(/:(\d{2,5})\//g)].map((match) => Number(match[1]));
  const fixed = ports.find((port) => recorded.includes(redirect.uri(port)));
  return redirect.uri(fixed ?? ephemeralPort());
}

/** Client assertions (RFC 7523) for `clientId` with `keyed`'s key, at the app's time. */
const signer = (clock: Matrix['clock'], keyed: KeyedClient, clientId: string) => (audience: string) =>
  keyed.assertion(audience, { now: clock.now(), claims: { iss: clientId, sub: clientId } });

/**
 * The profile's metadata document served at a loopback https URL (on the test host named after the document's own
 * host when the certificate covers it), with that URL as client_id and, for private_key_jwt, a jwks_uri beside it.
 */
export function serveDocument(matrix: Matrix, profile: ClientProfile): Identity {
  const { identification } = profile;
  if (identification.kind !== 'metadata-document') throw new Error('it registers: it has no document');
  const { documents, clock } = matrix;
  const original = URL.parse(String(identification.document.client_id ?? ''));
  const testHost = original && `${original.hostname}.test`;
  const host = testHost && TEST_HOSTS.includes(testHost) ? testHost : 'localhost';
  const path = `/${profile.id}${original?.pathname ?? '/client-metadata.json'}`;
  const document: Json = { ...identification.document };
  const clientId = documents.url(path, host);
  let assertion: Identity['assertion'];
  if (profile.authMethod === 'private_key_jwt') {
    // The helper's key and JWKS (served beside the document); the document served is the profile's.
    const keyed = chatGptDocument(documents, { path, host });
    delete document.jwks;
    document.jwks_uri = documents.url(keyed.jwksPath, host);
    assertion = signer(clock, keyed, clientId);
  }
  document.client_id = clientId;
  documents.json(path, document, 'max-age=3600');
  return { clientId, ...(assertion ? { assertion } : {}) };
}

/**
 * Metadata document: the profile's document served (serveDocument), once the server says it takes one. Registration:
 * the profile's body POSTed, with the redirect URI of this run when the port is chosen at run time (the clients open
 * their listener, then register), the scope derived from this server, and a key of ours for private_key_jwt.
 */
export async function identify(
  matrix: Matrix,
  profile: ClientProfile,
  discovery: Discovery,
  redirectUri: string,
): Promise<Identity> {
  const { documents, clock } = matrix;
  const { identification } = profile;

  if (identification.kind === 'metadata-document') {
    if (!discovery.server.client_id_metadata_document_supported) {
      throw new Error('the server does not say client_id_metadata_document_supported');
    }
    return serveDocument(matrix, profile);
  }

  const body: Json = { ...identification.body };
  if (profile.redirect.port === 'ephemeral') body.redirect_uris = [redirectUri];
  // A recorded body's scope was derived from another server's metadata; the client derives it from this one's.
  if (body.scope !== undefined) {
    const scope = scopeToAsk(profile, discovery);
    if (scope) body.scope = scope;
    else delete body.scope;
  }
  let keyed: KeyedClient | undefined;
  if (profile.authMethod === 'private_key_jwt') {
    keyed = chatGptDocument(documents, { path: `/${profile.id}/registered-client`, host: 'localhost' });
    if (body.jwks_uri === undefined) {
      const jwk = { ...createPublicKey(keyed.privateKey).export({ format: 'jwk' }), kid: keyed.kid };
      body.jwks = { keys: [{ ...jwk, use: 'sig', alg: 'RS256' }] };
    } else body.jwks_uri = documents.url(keyed.jwksPath, 'localhost');
  }
  if (!discovery.server.registration_endpoint) throw new Error('the server has no registration_endpoint');
  const response = await fetch(discovery.server.registration_endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
  const registered = await readJson(response, 'registration');
  if (response.status !== 201) throw refusal(response.status, registered);
  if (registered.token_endpoint_auth_method !== profile.authMethod) {
    throw new Error(
      `registered token_endpoint_auth_method ${registered.token_endpoint_auth_method}, not ${profile.authMethod}`,
    );
  }
  const clientId = registered.client_id as string;
  return {
    clientId,
    ...(registered.client_secret ? { clientSecret: registered.client_secret as string } : {}),
    ...(keyed ? { assertion: signer(clock, keyed, clientId) } : {}),
  };
}
