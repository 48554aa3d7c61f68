// Audit events: one structured record for each thing that matters (RFC 9700 §2.6 asks for the means to detect
// misuse), handed to the host app's onEvent. An event carries ids, the client's address and the request's id,
// never a token, code, secret or password: its fields are typed so that none can be passed.
import { activeTraceId, annotateSpan } from './telemetry/spans';
import { randomUUID } from 'node:crypto';
import type { Request } from 'express';

/** What happened. */
type OAuthEventType =
  | 'client.registered'
  | 'client.document_fetched'
  /**
   * A client's metadata document or jwks_uri could not be fetched, or was not valid: `reason` says which failure
   * (`timeout`, `refused_address`, `invalid_document`...), `detail` the whole story the caller was not told.
   */
  | 'client.fetch_failed'
  | 'sign_in.succeeded'
  | 'sign_in.failed'
  | 'sign_in.rate_limited'
  | 'consent.granted'
  | 'consent.denied'
  | 'code.issued'
  | 'code.redeemed'
  /** A code presented again, or with a wrong PKCE verifier: its grant is revoked. */
  | 'code.replayed'
  | 'token.refreshed'
  /**
   * An access token issued without a code (`grantType`): to an operator's client by client_credentials (no user) or
   * jwt-bearer with an enterprise IdP's ID-JAG (for the user it names), or to a device by its device code, which the
   * user approved on another device (RFC 8628).
   */
  | 'token.issued'
  /**
   * A token exchange (RFC 8693) issued a token for a downstream `resource`, acting as `actor` (the exchanging client,
   * or the tool server through router.downstreamToken) for the subject token's user, under its grant.
   */
  | 'token.exchanged'
  /**
   * A trusted enterprise IdP's metadata or keys could not be fetched, or were not valid: `reason` says which failure,
   * `detail` the whole story (the issuer, the URL, the error) that the client was not told.
   */
  | 'idp.fetch_failed'
  /**
   * The token endpoint, or router.downstreamToken, refused a request: `reason` is the OAuth error code (invalid_grant,
   * invalid_client, ...).
   */
  | 'token.refused'
  /**
   * A valid ID-JAG named no user it may name (answered invalid_grant): `reason` is `no_account` (no link and no user
   * with its email), `unverified_email` (email_verified is not true), `email_domain` (outside the domains its IdP
   * speaks for) or `malformed_email`; `detail` names the IdP and its subject.
   */
  | 'id_jag.refused'
  /**
   * A workload's JWT (workloadIdentity, SEP-1933) was refused (answered invalid_grant): `reason` is `invalid_jwt`,
   * `untrusted_issuer`, `no_rule` (no rule names its issuer and subject), `claims` (a claim the rule names differs),
   * `client` (the rule's client is missing or unfit) or `replayed`; `detail` names the issuer and subject.
   */
  | 'workload.refused'
  /**
   * A used refresh token presented after its reuse window (`reason` `after_window`, with `firstUsedAt`), or a token
   * left behind by a branch (`superseded`): its grant is revoked (RFC 9700 §4.14.2).
   */
  | 'refresh_token.reused'
  /**
   * A grant ended by its user, its client (RFC 7009 revocation) or an administrator, or `replaced` by the grant of a
   * step-up consent that carries its scopes and more.
   */
  | 'grant.revoked'
  /** An operator disabled a client (router.setClientDisabled), naming who did it in `actor` when told. */
  | 'client.disabled'
  /** An operator enabled a disabled client again. */
  | 'client.enabled'
  | 'token.introspected'
  /**
   * A rate limit refused a request (sign-in limits report sign_in.rate_limited instead): once per key and window,
   * with a `count`.
   */
  | 'rate_limit.hit';

/** Who ended a grant. */
export type RevokedBy = 'user' | 'client' | 'admin' | 'replaced';

/** One audit event. */
export interface OAuthEvent {
  type: OAuthEventType;
  /** Milliseconds since the epoch, by the router's clock. */
  time: number;
  clientId?: string;
  userId?: string;
  grantId?: string;
  /** The client's address as Express reports it (`req.ip`: set `trust proxy` behind a load balancer). */
  address?: string;
  /** `req.id` when the host app set one (pino-http does), otherwise an id made for this request. */
  requestId?: string;
  /** The OpenTelemetry trace id of the request, when an SDK traces it (docs/operating.md, traces). */
  traceId?: string;
  /** consent.granted, code.issued, token.refreshed: the scopes granted or issued. */
  scopes?: readonly string[];
  /** grant.revoked: who ended it. */
  by?: RevokedBy;
  /**
   * code.replayed: `replay` or `pkce_mismatch`; sign_in.failed: `bad_credentials`, or through an upstream provider
   * `state_mismatch`, `replayed`, `upstream_error`, `upstream_unavailable`, `upstream_invalid`, `unverified_email`,
   * `no_account`; token.refused: the error code; id_jag.refused: `no_account`, `unverified_email`, `email_domain`,
   * `malformed_email`; workload.refused: see there;
   * client.fetch_failed, idp.fetch_failed: the failure; refresh_token.reused: `after_window` or `superseded`.
   */
  reason?: string;
  /**
   * refresh_token.reused, and token.refreshed for a token presented again (answered with the same successor): when
   * the presented token was first used, in milliseconds since the epoch. How long ago tells a client that shares or
   * retries a token (seconds to hours) from an old copy coming back (days).
   */
  firstUsedAt?: number;
  /**
   * code.redeemed, token.refreshed, token.issued: the thumbprint of the DPoP key the tokens are bound to (RFC 9449),
   * when the request carried a proof.
   */
  jkt?: string;
  /** sign_in.succeeded, sign_in.failed: the upstream provider (its id) the user signed in through. */
  provider?: string;
  /** token.introspected: what the caller was told. */
  active?: boolean;
  /** rate_limit.hit, sign_in.rate_limited: the limit's name (`token`, `signInPerAccount`, ...). */
  limit?: string;
  /**
   * rate_limit.hit, sign_in.rate_limited: how many refused requests the event stands for. A key (an address, or an
   * account and an address) is reported once per window: the count is this refusal plus those of the same key held
   * back since its previous event.
   */
  count?: number;
  /** token.introspected: the kind of token asked about, when it was found. */
  tokenType?: 'access_token' | 'refresh_token';
  /** token.refused, token.issued: the grant_type asked for, when it was one of the supported ones. */
  grantType?:
    | 'authorization_code'
    | 'refresh_token'
    | 'client_credentials'
    | 'urn:ietf:params:oauth:grant-type:jwt-bearer'
    | 'urn:ietf:params:oauth:grant-type:token-exchange'
    | 'urn:ietf:params:oauth:grant-type:device_code';
  /** token.exchanged: the downstream resource the token is for. */
  resource?: string;
  /**
   * token.exchanged: who acts (the new token's act.sub). grant.revoked by an administrator, client.disabled,
   * client.enabled: who did it, as the host named them (an administrator's id, an automation client's).
   */
  actor?: string;
  /**
   * client.fetch_failed, idp.fetch_failed, id_jag.refused, sign_in.failed through a provider: what went wrong, for the operator (the URL, the address its host
   * resolved to, the socket error or HTTP status); never sent to the caller, and never holds a secret.
   */
  detail?: string;
}

/** The fields an emitter call may give (the rest is filled in). */
export type EventFields = Omit<OAuthEvent, 'type' | 'time' | 'address' | 'requestId'>;

/** Emits one event about a request (or none, for work outside one); never throws. */
export type EmitEvent = (req: Request | undefined, type: OAuthEventType, fields?: EventFields) => void;

const REQUEST_ID = Symbol('express-mcp-oauth.requestId');

/** The id of a request: the host app's (`req.id`), or one made once and kept on the request. */
function requestIdOf(req: Request): string {
  const given = (req as { id?: unknown }).id;
  if (typeof given === 'string' && given) return given;
  if (typeof given === 'number') return String(given);
  const tagged = req as unknown as Record<symbol, string | undefined>;
  return (tagged[REQUEST_ID] ??= randomUUID());
}

/**
 * The emitter of a router. An onEvent that throws or rejects is reported through `report` and never reaches the
 * request that caused the event: an audit sink's failure must not fail a token request.
 */
export function createEventEmitter(
  onEvent: ((event: OAuthEvent) => unknown) | undefined,
  report: (error: unknown, req: Request | undefined) => void,
  now: () => number,
): EmitEvent {
  // The request's span, when traced, carries the event's client and grant type (telemetry/spans.ts).
  if (!onEvent) return (_req, _type, fields = {}) => annotateSpan(fields);
  return (req, type, fields = {}) => {
    try {
      annotateSpan(fields);
      const traceId = activeTraceId();
      const event: OAuthEvent = Object.freeze({
        type,
        time: now(),
        ...(req ? { address: req.ip, requestId: requestIdOf(req) } : {}),
        ...(traceId === undefined ? {} : { traceId }),
        ...fields,
      });
      const result = onEvent(event);
      if (result && typeof (result as Promise<unknown>).then === 'function') {
        (result as Promise<unknown>).then(undefined, (error) => report(error, req));
      }
    } catch (error) {
      report(error, req);
    }
  };
}
