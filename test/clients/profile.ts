// The shape of one real MCP client as the client matrix records it: how it identifies itself, where its browser
// comes back to, what it sends at each step, and how it keeps and shares its refresh token. Each quirk names its
// public source (a document, a file of the client's source, an issue thread) in `sources`.

/** A public source of a quirk: where someone can read it, and what it says in a few words. */
interface Source {
  /** e.g. "anthropics/claude-code#74250", "modelcontextprotocol/typescript-sdk src/client/auth.ts", a docs URL. */
  ref: string;
  /** What it shows, in one sentence. */
  says: string;
}

/** How the client gets a client_id. */
type Identification =
  /** An https URL as client_id: a Client ID Metadata Document the client publishes. */
  | { kind: 'metadata-document'; document: Record<string, unknown> }
  /** Dynamic client registration (RFC 7591) with this body. */
  | { kind: 'registration'; body: Record<string, unknown> };

/** Where the browser comes back to. */
interface RedirectShape {
  /** The redirect URI the client sends in the authorization request, for a loopback listener on `port`. */
  uri: (port: number) => string;
  /** Whether the port is chosen at run time (an ephemeral loopback port) or fixed. */
  port: 'ephemeral' | 'fixed' | 'none';
}

/** When the client sends RFC 8707's `resource`. */
type ResourceHabit = 'always' | 'never' | 'authorize-only' | 'token-only' | 'sometimes';

/** How the client keeps its refresh token between refreshes. */
type RefreshSharing =
  /** One process, one copy: each refresh uses the token the last one returned. */
  | 'single'
  /** Several processes (sessions, windows) share one stored token and each refreshes from its own in-memory copy. */
  | 'shared-between-processes'
  /** One logical client refreshing from more than one place at once (several egress addresses, racing). */
  | 'parallel-egress';

/**
 * The OAuth client code a client runs, when the matrix can run that code itself: the client matrix then drives the
 * client with it (test/clients/drive-sdk.ts) rather than by hand. `typescript`: the official MCP TypeScript SDK's
 * client auth (`auth()` with an `OAuthClientProvider`), run as the installed `@modelcontextprotocol/sdk`.
 */
interface BuiltOn {
  sdk: 'typescript';
  /** Where the client is shown to run that code for its OAuth flow. */
  source: Source;
}

export interface ClientProfile {
  /** A short stable id: 'claude-code', 'claude-ai', 'chatgpt', 'codex', 'vscode', 'cursor', ... */
  id: string;
  /** The product's name as people say it. */
  name: string;
  identification: Identification;
  redirect: RedirectShape;
  /** token_endpoint_auth_method the client uses (for registration: what it asks for). */
  authMethod: 'none' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  /** The scope the client puts in the authorization request: none, the challenge's, or every scope listed. */
  scopeOnAuthorize: 'none' | 'from-challenge' | 'scopes-supported' | string;
  /** Whether it asks for offline_access (when the server lists it). */
  asksOfflineAccess: boolean;
  resource: ResourceHabit;
  /** What the refresh request carries as scope: nothing, or the scope it was granted. */
  scopeOnRefresh: 'omitted' | 'granted';
  refreshSharing: RefreshSharing;
  /** What the server must offer this client, in plain words (the table in docs/clients.md). */
  needs: string[];
  /** How to connect it to a server, one line (the table in docs/clients.md). */
  recipe: string;
  /** The OAuth library the client runs, when the matrix drives the client with it instead of by hand. */
  builtOn?: BuiltOn;
  /** Every quirk above, each with its public source. */
  sources: Record<string, Source>;
}
