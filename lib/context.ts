// What every handler shares: the store, the signer, the parsed config and the browser-side helpers.
import type { Request, RequestHandler, Response } from 'express';
import { isClientIdUrl } from './util/client-id';
import type { IssuerKeys } from './id-jag/issuer-keys';
import type { ClientDocumentResolver } from './cimd/resolver';
import type { VerificationKey } from './jwt/verify';
import type { Sealer } from './crypto/signed-value';
import type { JwtSigner } from './crypto/signer';
import type { OAuthConfig } from './options';
import type { Pages } from './pages/render';
import type { BrowserSession } from './authorize/session';
import type { EmitEvent, RevokedBy } from './events';
import { OAuthError } from './errors';
import type { ClientRecord, OAuthStore, TokenEndpointAuthMethod } from './store/types';
import type { UpstreamConnection } from './upstream/client';
import type { UpstreamConfig, UpstreamProvider } from './upstream/options';
import type { UpstreamTokens } from './upstream/tokens';
import type { StepUpWindow } from './grants/step-up-window';

export interface OAuthContext {
  store: OAuthStore;
  signer: JwtSigner;
  config: OAuthConfig;
  sealer: Sealer;
  session: BrowserSession;
  pages: Pages;
  /**
   * Revokes a grant in the store and forgets it in this process at once. Given who ended it, a grant.revoked event
   * is emitted when this call is the one that revoked it.
   */
  revokeGrant(grantId: string, cause?: RevocationCause): Promise<boolean>;
  /** Emits an audit event (see events.ts); never throws. */
  emit: EmitEvent;
  /**
   * The client with this id: a registered one (from memory for a minute after it was read: registrations never change,
   * but an idle one may be purged), or
   * the one a metadata document URL describes (fetched, validated and cached; invalid_client when that fails).
   */
  findClient(clientId: string, req?: Request): Promise<ClientRecord | undefined>;
  /** Forgets what this process remembers of a registered client, after an operator changed it. */
  forgetClient(clientId: string): void;
  /**
   * A private_key_jwt client's public keys (its jwks, or its jwks_uri fetched and cached); `req`, when given, goes
   * with the event of a failed fetch.
   */
  clientKeys(
    client: ClientRecord,
    options?: { refetch?: boolean; req?: Request },
  ): Promise<VerificationKey[]>;
  /** The signing keys of a trusted enterprise IdP (ID-JAG issuer); undefined when none is configured. */
  issuerKeys: IssuerKeys | undefined;
  /** Upstream sign-in: the providers, their connections, and the users' kept tokens; undefined when off. */
  upstream: UpstreamServices | undefined;
  /** The step-up window (grants/step-up-window.ts); undefined when off. */
  stepUp: StepUpWindow | undefined;
}

export interface UpstreamServices {
  config: UpstreamConfig;
  connect(provider: UpstreamProvider): Promise<UpstreamConnection>;
  /** Present when a provider keeps tokens. */
  tokens: UpstreamTokens | undefined;
}

/** Who ended a grant, for its grant.revoked event: the request it came with, and the ids known there. */
interface RevocationCause {
  by: RevokedBy;
  req?: Request;
  clientId?: string;
  userId?: string;
  /** Who ended it, as the host names them (an administrator, an automation client). */
  actor?: string;
}

const MAX_CLIENTS = 10_000;
/**
 * How long a registered client read from the store is used again before it is read anew. A registration never
 * changes, but it can go: an idle one purged (store.purgeIdleClients) on any instance is forgotten here within this,
 * rather than authenticating still and failing later, when its grant cannot be stored.
 */
const CLIENT_CACHE_MS = 60_000;

/**
 * Finds clients: a URL goes to the metadata document resolver (or finds nothing when documents are off; a stored
 * copy is never trusted in its place), any other id to the store, with a bounded memory in front (registrations
 * are immutable, but may be purged: each is read again after CLIENT_CACHE_MS; unknown ids are not kept).
 */
export function createClientLookup(
  store: OAuthStore,
  documents: ClientDocumentResolver | undefined,
  authMethods: readonly TokenEndpointAuthMethod[],
  now: () => number = Date.now,
): ((clientId: string, req?: Request) => Promise<ClientRecord | undefined>) & {
  forget(clientId: string): void;
} {
  const known = new Map<string, { client: ClientRecord; until: number }>();
  const lookup = async (clientId: string, req?: Request): Promise<ClientRecord | undefined> => {
    if (isClientIdUrl(clientId)) {
      const client = await documents?.findClient(clientId, req);
      // A document asking for an authentication method this server does not offer (private_key_jwt, off for a
      // store without assertion ids) is refused before the user is asked to consent, not after.
      if (client && !authMethods.includes(client.tokenEndpointAuthMethod))
        throw new OAuthError(
          'invalid_client',
          `This server does not offer token_endpoint_auth_method ${client.tokenEndpointAuthMethod}.`,
        );
      return client;
    }
    const cached = known.get(clientId);
    if (cached && now() < cached.until) return cached.client.disabled ? undefined : cached.client;
    const client = await store.findClient(clientId);
    known.delete(clientId);
    if (client) {
      if (known.size >= MAX_CLIENTS) known.delete(known.keys().next().value as string);
      known.set(clientId, { client, until: now() + CLIENT_CACHE_MS });
    }
    // A client an operator disabled is as unknown as one never registered: invalid_client, an error page.
    return client?.disabled ? undefined : client;
  };
  // An operator's change to a client is seen at once by the process that made it (other instances: within the minute).
  return Object.assign(lookup, { forget: (clientId: string) => void known.delete(clientId) });
}

/** Wraps an async handler so that a rejection reaches the error handler on Express 4 as on Express 5. */
export function handle(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  const handler: RequestHandler = (req, res, next) => {
    fn(req, res).catch(next);
  };
  // Named after the handler it runs (tokenEndpoint, consentDecision...), which is what Express's layer and a stack
  // trace show, instead of one "asyncHandler" for every endpoint.
  return Object.defineProperty(handler, 'name', { value: fn.name });
}
