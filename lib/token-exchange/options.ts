// The tokenExchange option, parsed once: the downstream APIs a token of this server may be exchanged for (RFC 8693),
// the most each may receive, the policy hook that decides who may exchange what for whom, and the exchanged tokens'
// longest lifetime.
import type { Request } from 'express';
import type { ActClaim } from '../crypto/act';
import type { ClientRecord, MaybePromise } from '../store/types';

/** RFC 8693 §2.1: the grant type of a token exchange. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** RFC 8693 §3: the token type of an access token, the only subject and issued type here. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** A downstream API tokens may be exchanged for, with the most it may receive. */
interface DownstreamResource {
  /** Its resource identifier (RFC 8707): an absolute https URL (http only on a loopback host), no query or fragment. */
  resource: string;
  /**
   * The scopes a token for it may carry at most (of the router's catalogue). Default: any scope of the subject
   * token. Name the fewest the API needs: a document renderer needs no right to send invoices.
   */
  scopes?: readonly string[];
}

/** What a token exchange asks, as the policy hook sees it once the built-in rules have passed. */
export interface TokenExchangeRequest {
  /**
   * Who acts (the new token's `act.sub`): the exchanging client's id at the token endpoint, or for
   * router.downstreamToken the resource the subject token was issued for (the tool server itself).
   */
  actor: string;
  /** The exchanging client, authenticated; undefined for router.downstreamToken. */
  client: ClientRecord | undefined;
  /** The subject token's `sub`: the user the token acts for (or a machine client's own id). */
  subject: string;
  /** The client the subject token was issued to. */
  subjectClientId: string;
  /** The resource the subject token was issued for. */
  subjectAudience: string;
  /** The subject token's own `act`, when it was exchanged already: the actors before this one. */
  subjectAct: ActClaim | undefined;
  /** The downstream resource the new token is for. */
  resource: string;
  /** The scopes the new token would carry: within the subject token's, the client's and the resource's. */
  scopes: readonly string[];
}

/** A refusal the policy hook chooses, with the RFC 8693 §2.2.2 / RFC 6749 §5.2 error code to answer. */
export interface TokenExchangeRefusal {
  error: 'invalid_target' | 'invalid_scope' | 'invalid_grant' | 'unauthorized_client';
  /** Told to the client (error_description): say what to change, never why in detail. */
  description?: string;
}

/** Token exchange (RFC 8693): trading a live access token of this server for one meant for a downstream API. */
export interface TokenExchangeOptions {
  /** The downstream APIs, by resource identifier (URL) or with the scopes each may receive. At least one. */
  resources: readonly (string | DownstreamResource)[];
  /**
   * Decides, after the built-in rules (only clients the operator registered with the grant, only the resources
   * listed here, only narrowing), whether this exchange may happen: true allows, false refuses with
   * invalid_target, a TokenExchangeRefusal refuses with its code. It can refuse, never widen. What it throws is a
   * server_error. Default: allow.
   */
  policy?: (
    request: TokenExchangeRequest,
    req: Request | undefined,
  ) => MaybePromise<boolean | TokenExchangeRefusal>;
  /**
   * The longest lifetime of an exchanged token, in seconds; it never outlives its subject token either. Default:
   * the access token lifetime. From 10 to 86400.
   */
  maxLifetimeSeconds?: number;
}

/** The parsed settings; undefined in the config when the option is not given (the grant is then off). */
export interface TokenExchangeConfig {
  /** Each listed resource, normalised (no trailing slash), with its scope ceiling or undefined for none. */
  resources: ReadonlyMap<string, ReadonlySet<string> | undefined>;
  policy: NonNullable<TokenExchangeOptions['policy']> | undefined;
  /** Undefined: the access token lifetime. */
  maxLifetimeSeconds: number | undefined;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const EXAMPLE = "{ resources: ['https://renderer.example.com'] }";

/** Normalised as resources are everywhere (the URL parser's form, no trailing slash). */
export const normaliseResource = (url: URL): string => url.href.replace(/\/+$/, '');

export function parseTokenExchange(
  given: TokenExchangeOptions | undefined,
  ownResources: readonly string[],
  scopeNames: ReadonlySet<string>,
  fail: (message: string) => never,
): TokenExchangeConfig | undefined {
  if (given === undefined) return undefined;
  if (!given || typeof given !== 'object') fail(`tokenExchange must be an object, e.g. ${EXAMPLE}.`);
  if (!Array.isArray(given.resources) || given.resources.length === 0)
    fail(`tokenExchange.resources must list the downstream APIs' URLs, e.g. ${EXAMPLE}.`);
  const resources = new Map<string, ReadonlySet<string> | undefined>();
  given.resources.forEach((entry, index) => {
    const where = `tokenExchange.resources[${index}]`;
    const { resource, scopes } =
      typeof entry === 'string'
        ? { resource: entry, scopes: undefined }
        : (entry ?? ({} as DownstreamResource));
    const normalised = normaliseResource(downstreamUrl(where, resource, fail));
    // A downstream token must never pass this server's own bearer check: its audience is never one of ours.
    if (ownResources.includes(normalised))
      fail(
        `${where} "${normalised}" is one of the router's own resources; a downstream API has a URL of its own.`,
      );
    if (resources.has(normalised)) fail(`${where} "${normalised}" is listed twice; list it once.`);
    resources.set(
      normalised,
      scopes === undefined ? undefined : parseCeiling(where, scopes, scopeNames, fail),
    );
  });
  if (given.policy !== undefined && typeof given.policy !== 'function')
    fail(
      'tokenExchange.policy must be a function (request, req) => boolean, e.g. (r) => r.scopes.length < 3.',
    );
  const maxLifetimeSeconds = given.maxLifetimeSeconds;
  if (
    maxLifetimeSeconds !== undefined &&
    (!Number.isInteger(maxLifetimeSeconds) || maxLifetimeSeconds < 10 || maxLifetimeSeconds > 86_400)
  )
    fail('tokenExchange.maxLifetimeSeconds must be a whole number of seconds from 10 to 86400.');
  return { resources, policy: given.policy, maxLifetimeSeconds };
}

function downstreamUrl(where: string, value: unknown, fail: (message: string) => never): URL {
  if (typeof value !== 'string') fail(`${where} must be a URL such as "https://renderer.example.com".`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(`${where} "${value}" is not an absolute URL; use e.g. "https://renderer.example.com".`);
  }
  // The string, not the parsed URL, decides: an empty query or fragment ("https://r.example/?") parses to none.
  if (value.includes('#') || value.includes('?'))
    fail(`${where} "${value}" must not have a query or fragment (RFC 8707 §2).`);
  if (url.username || url.password) fail(`${where} "${value}" must not carry credentials.`);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname)))
    fail(`${where} "${value}" must use https (http only for localhost, 127.0.0.1 and [::1]).`);
  return url;
}

function parseCeiling(
  where: string,
  scopes: unknown,
  scopeNames: ReadonlySet<string>,
  fail: (message: string) => never,
): ReadonlySet<string> {
  if (!Array.isArray(scopes) || scopes.length === 0)
    fail(`${where}.scopes must list scopes of the catalogue (leave it out to allow the subject token's).`);
  const unknown = scopes.find((scope) => !scopeNames.has(scope));
  if (unknown !== undefined)
    fail(`${where}.scopes names "${String(unknown)}", which is not in the scope catalogue.`);
  return new Set(scopes as string[]);
}
