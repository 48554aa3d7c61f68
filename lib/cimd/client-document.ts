// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, and the MCP authorization spec's
// client registration section): which client_id values are document URLs, and what a document must say before its
// client is trusted with a redirect.
import type { ClientRecord } from '../store/types';
import { isClientIdUrl } from '../util/client-id';
import {
  invalidMetadata,
  readDisplayFields,
  readFlows,
  readKeys,
  readDpopBinding,
  readRedirectUris,
  readScope,
  text,
} from '../clients/metadata';

const MAX_URL_LENGTH = 2000;
/** Authentication methods a document may name: none, or its own keys. Never a shared secret (draft §4.1). */
const DOCUMENT_AUTH_METHODS = ['none', 'private_key_jwt'] as const;

/** Why a client_id cannot be a metadata document URL (draft §3), or null if it can. */
export function clientIdUrlProblem(value: string): string | null {
  if (value.length > MAX_URL_LENGTH) return `a client_id URL may have at most ${MAX_URL_LENGTH} characters`;
  if (!/^https:\/\//i.test(value)) return 'a client_id URL must use https';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'the client_id is not a valid URL';
  }
  if (value.includes('#')) return 'a client_id URL must not have a fragment';
  if (url.username || url.password) return 'a client_id URL must not carry a user name or password';
  // The URL parser removes dot segments; the draft forbids them in the client_id as sent, so read the raw path.
  const afterScheme = value.slice('https://'.length);
  const slash = afterScheme.indexOf('/');
  const rawPath = slash === -1 ? '' : afterScheme.slice(slash).split(/[?]/)[0]!;
  const dotSegment = rawPath.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
  if (dotSegment) return 'a client_id URL must not contain "." or ".." path segments';
  if (url.pathname === '/' || url.pathname === '')
    return 'a client_id URL must have a path, such as /client.json';
  return null;
}

/**
 * The client a fetched document describes, or invalid_client_metadata saying what is wrong with it. The document
 * must name itself (client_id equal to its URL, by simple string comparison), its client and its redirect URIs,
 * and must not hold a secret: it is public, so a secret in it is no secret.
 */
export function validateClientDocument(
  url: string,
  body: unknown,
  scopeCatalogue: ReadonlySet<string>,
  fetchedAt: number,
): ClientRecord {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw invalidMetadata('the document is not a JSON object');
  const fields = body as Record<string, unknown>;
  if (fields.client_id !== url) {
    throw invalidMetadata(
      `its client_id ${typeof fields.client_id === 'string' ? `"${fields.client_id.slice(0, 200)}"` : 'is missing, and'} must be exactly the URL it is served from`,
    );
  }
  // client_name is optional (RFC 7591 §2; the draft adds no rule): without one, pages name the client by the host
  // that published the document, which is all they can vouch for anyway.
  const clientName = text(fields, 'client_name', 200)?.trim() || null;
  if (fields.client_secret !== undefined || fields.client_secret_expires_at !== undefined)
    throw invalidMetadata('it holds a client_secret; a public document must never carry a secret');
  const method = fields.token_endpoint_auth_method ?? 'none';
  if (!DOCUMENT_AUTH_METHODS.includes(method as (typeof DOCUMENT_AUTH_METHODS)[number])) {
    throw invalidMetadata(
      `token_endpoint_auth_method "${String(method).slice(0, 64)}" is not allowed in a document: use none or ` +
        'private_key_jwt (a shared secret cannot be published)',
    );
  }
  const tokenEndpointAuthMethod = method as (typeof DOCUMENT_AUTH_METHODS)[number];
  return {
    clientId: url,
    clientSecretHash: null,
    clientName,
    redirectUris: readRedirectUris(fields),
    ...readFlows(fields, { lenient: true }),
    tokenEndpointAuthMethod,
    scope: readScope(fields, scopeCatalogue, { lenient: true }),
    metadata: {
      ...readDisplayFields(fields),
      ...readKeys(fields, tokenEndpointAuthMethod),
      ...readDpopBinding(fields),
    },
    issuedAt: fetchedAt,
  };
}

/**
 * How a page names a client. What is known of a document client is the host of its client_id (its document was
 * fetched from there); its client_name is not verified (anyone may publish a document calling itself "Claude" on a
 * shared host: a gist, a pages site). So pages lead with the host and show the name second, with the document's URL,
 * whose path tells whose it is on a shared host. A registered client has only the name it gave itself.
 */
export interface ClientIdentity {
  /** What a page leads with: a document client's host, a registered client's self-chosen name. */
  headline: string;
  /** The name the client gave itself (client_name), which nobody verified; without one, the host or client_id. */
  name: string;
  /** The host of a document client's client_id ("claude.ai"): whoever controls it published the document. */
  host: string | undefined;
  /** A document client's client_id: the URL its details were published at. */
  documentUrl: string | undefined;
  /** False for a self-registered client, whose name nobody verified. */
  verified: boolean;
}

export function describeClient(client: { clientId: string; clientName: string | null }): ClientIdentity {
  if (isClientIdUrl(client.clientId) && URL.canParse(client.clientId)) {
    const { hostname } = new URL(client.clientId);
    return {
      headline: hostname,
      name: client.clientName ?? hostname,
      host: hostname,
      documentUrl: client.clientId,
      verified: true,
    };
  }
  const name = client.clientName ?? client.clientId;
  return { headline: name, name, host: undefined, documentUrl: undefined, verified: false };
}
