// The one way the server reaches out to the network: GET a small JSON document (a client's metadata document, a
// client's JWKS) from a URL that an outsider chose. The danger is SSRF, so: https only; the host is resolved
// here and every address it resolves to must be globally reachable (special-use ones are refused, loopback only
// when allowed); the connection goes to the address that was checked, through a dispatcher made for that one
// request (no second lookup, so DNS rebinding cannot swap it); no redirects, no cookies or credentials; a size cap;
// a bound on fetches at once (fetch-limits.ts), with a bounded wait for a slot; and, once a slot is granted, one
// deadline for the whole exchange: the lookup, the TCP connection, the TLS handshake, the headers and the body.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { connect as tlsConnect, type SecureContext, type TLSSocket } from 'node:tls';
import type { Agent, buildConnector } from 'undici';
import { createFetchLimiter, DEFAULT_FETCH_LIMITS, type FetchLimits } from './fetch-limits';
import { secureContextFor } from './secure-contexts';
import { specialUseOf } from './special-addresses';

// Loaded at the first fetch: a server that never fetches a document does not keep undici's code in its heap.
let undici: typeof import('undici') | undefined;
const loadUndici = () => (undici ??= require('undici') as typeof import('undici'));

/** A resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has. Tests inject one; the default asks the system resolver. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export interface SafeFetchOptions {
  /** Let loopback addresses through (tests and local development only). */
  allowLoopback: boolean;
  /**
   * The deadline of the whole exchange from the moment it has a slot: lookup, connection, TLS, headers and body. The
   * wait for a slot is bounded by as long again, apart.
   */
  timeoutMs: number;
  /** Extra certificate authorities to trust, besides Node's own (and NODE_EXTRA_CA_CERTS). */
  ca: string[] | undefined;
  resolveHost: ResolveHost;
  /** How many fetches may run at once (default DEFAULT_FETCH_LIMITS). */
  limits?: FetchLimits;
}

/** What a fetch brought back: the parsed JSON and the caching it asked for. */
interface FetchedJson {
  body: unknown;
  cacheControl: string | undefined;
}

/**
 * Why a fetch failed. Only `bad_url` and `invalid_json` are about what the caller sent or published; every other
 * reason is about how the network or another host behaved, which a caller is never told (see resolver.ts).
 */
export type FetchFailure =
  /** The URL itself: not https, credentials in it, not a URL. */
  | 'bad_url'
  /** The host name has no address, or the lookup failed. */
  | 'unresolvable'
  /** The host resolves to an address that is never fetched (special-addresses.ts). */
  | 'refused_address'
  /** Too many fetches at once: no slot came free within the wait. Not the URL's fault; never remembered. */
  | 'busy'
  /** The deadline passed (lookup, connection, TLS handshake, headers or body). */
  | 'timeout'
  /** The connection failed: refused, reset, a TLS error. */
  | 'network'
  /** Another answer than 200, redirects included. */
  | 'http_status'
  | 'content_type'
  | 'too_large'
  | 'invalid_json';

/**
 * A fetch that was refused or failed. `reason` is what a caller may learn; the message is the whole story for the
 * operator (the address a name resolved to, the socket error) and never goes back to the caller.
 */
export class FetchRefusedError extends Error {
  override readonly name = 'FetchRefusedError';
  readonly reason: FetchFailure;
  /** The HTTP status of an `http_status` failure. */
  readonly status: number | undefined;

  constructor(reason: FetchFailure, message: string, status?: number) {
    super(message);
    this.reason = reason;
    this.status = status;
  }
}

export interface SafeFetcher {
  /** GETs JSON of at most `maxBytes` from an https URL, with one of the `contentTypes`. */
  getJson(url: string, limits: { maxBytes: number; contentTypes: readonly string[] }): Promise<FetchedJson>;
}

/** A fetch's dispatcher; `close` ends it with every socket it opened, and lets it open no more. */
interface Pinned {
  agent: Agent;
  close(): void;
}

export const systemResolveHost: ResolveHost = (hostname) =>
  dnsLookup(hostname, { all: true, verbatim: true });

export function createSafeFetcher(options: SafeFetchOptions): SafeFetcher {
  const refuse = (reason: FetchFailure, message: string, status?: number) =>
    new FetchRefusedError(reason, message, status);
  const limiter = createFetchLimiter(options.limits ?? DEFAULT_FETCH_LIMITS);

  /** The address to connect to: every address of the host is checked, and the first one is used. */
  async function pickAddress(hostname: string): Promise<ResolvedAddress> {
    // Stryker disable next-line Regex: equivalent, a URL's hostname has brackets only around an IPv6 literal
    const literal = hostname.replace(/^\[|\]$/g, '');
    let addresses: ResolvedAddress[];
    if (isIP(literal)) {
      addresses = [{ address: literal, family: isIP(literal) }];
    } else {
      try {
        addresses = await options.resolveHost(hostname);
      } catch (error) {
        throw refuse(
          'unresolvable',
          `the host ${hostname} could not be resolved (${(error as Error).message})`,
        );
      }
    }
    if (!Array.isArray(addresses) || addresses.length === 0)
      throw refuse('unresolvable', `the host ${hostname} has no address`);
    // One bad address is enough: a name that answers public then private must not get a second chance.
    for (const { address } of addresses) {
      const use = specialUseOf(String(address));
      if (use && !(use === 'loopback' && options.allowLoopback)) {
        throw refuse(
          'refused_address',
          `the host ${hostname} resolves to ${address}, a ${use} address, which is never fetched`,
        );
      }
    }
    const chosen = addresses[0]!;
    return { address: chosen.address, family: isIP(chosen.address) };
  }

  // One context for every fetch, taken at the first one and kept (secure-contexts.ts shares it between fetchers). Given
  // `ca` instead, tls.connect built a context per connection, parsing every root certificate again: some 50-80 ms of
  // blocking CPU per fetch, which anyone who sends client_id URLs could make the server spend.
  let context: SecureContext | undefined;
  const secureContext = () => (context ??= secureContextFor(options.ca));

  /**
   * A dispatcher for one fetch whose only socket goes to the address already checked (no lookup of its own). undici
   * does not close a socket still in its TLS handshake when the request is aborted or its dispatcher destroyed: it
   * stays open, and the request unsettled, until undici's own 10 s connect timeout. So the sockets are opened here,
   * kept, and destroyed when the fetch ends.
   */
  function pinnedAgent(address: ResolvedAddress, servername: string | undefined, timeoutMs: number): Pinned {
    const { Agent } = loadUndici();
    const sockets = new Set<TLSSocket>();
    let closed = false;
    const connect: buildConnector.connector = ({ port }, callback) => {
      // undici may get to connecting after the fetch has ended (its deadline passed meanwhile): nothing is opened then.
      if (closed) return callback(new Error('the fetch is over'), null);
      // The certificate is checked against the URL's host name (SNI and identity), never the address.
      const socket = tlsConnect({
        host: address.address,
        port: Number(port) || 443,
        servername,
        ALPNProtocols: ['http/1.1'],
        secureContext: secureContext(),
      });
      sockets.add(socket);
      // Answered once: an error after the handshake is undici's to handle on the socket it was given.
      let answered = false;
      socket.once('secureConnect', () => {
        if (!answered) callback(null, socket);
        answered = true;
      });
      socket.once('error', (error) => {
        if (!answered) callback(error, null);
        answered = true;
      });
    };
    // The deadline already ends the exchange; undici's own timeouts are cut to what is left of it as well.
    const agent = new Agent({ connect, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, pipelining: 0 });
    return {
      agent,
      close() {
        closed = true;
        void agent.destroy().catch(() => undefined);
        for (const socket of sockets) socket.destroy();
      },
    };
  }

  /** The exchange itself, from the lookup to the parsed body; `deadline` is when the whole fetch must be over. */
  async function exchange(
    target: URL,
    { maxBytes, contentTypes }: { maxBytes: number; contentTypes: readonly string[] },
    signal: AbortSignal,
    deadline: number,
    keep: (pinned: Pinned) => void,
  ): Promise<FetchedJson> {
    const address = await pickAddress(target.hostname);
    // Past the deadline the caller has given up already: open nothing more.
    signal.throwIfAborted();
    // Stryker disable next-line Regex: equivalent, a URL's hostname has brackets only around an IPv6 literal
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    const pinned = pinnedAgent(
      address,
      isIP(literal) ? undefined : literal,
      // Stryker disable next-line ArithmeticOperator: equivalent, the race ends the exchange at the deadline anyway
      Math.max(1, deadline - Date.now()),
    );
    keep(pinned);
    const agent = pinned.agent;
    const response = await loadUndici().request(target, {
      method: 'GET',
      dispatcher: agent,
      signal,
      headers: { accept: contentTypes.join(', '), 'user-agent': 'express-mcp-oauth' },
    });
    const { statusCode, headers, body } = response;
    // Destroying the body aborts the exchange; that abort is expected, not an error to report.
    body.on('error', () => undefined);
    const header = (name: string) => {
      const value = headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    };
    if (statusCode !== 200) {
      body.destroy();
      if (statusCode >= 300 && statusCode < 400)
        throw refuse(
          'http_status',
          `it answered ${statusCode}, a redirect, and redirects are not followed`,
          statusCode,
        );
      throw refuse('http_status', `it answered HTTP ${statusCode} instead of 200`, statusCode);
    }
    const type = (header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!contentTypes.includes(type)) {
      body.destroy();
      throw refuse(
        'content_type',
        `its content type is "${type || 'missing'}" instead of ${contentTypes.join(' or ')}`,
      );
    }
    const declared = Number(header('content-length'));
    if (declared > maxBytes) {
      body.destroy();
      throw refuse('too_large', `it is ${declared} bytes, more than the ${maxBytes} allowed`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        body.destroy();
        throw refuse('too_large', `it is more than the ${maxBytes} bytes allowed`);
      }
      chunks.push(chunk as Buffer);
    }
    try {
      return {
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        cacheControl: header('cache-control'),
      };
    } catch {
      throw refuse('invalid_json', 'it is not valid JSON');
    }
  }

  return {
    async getJson(url, limits) {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        throw refuse('bad_url', `"${url.slice(0, 200)}" is not a URL`);
      }
      if (target.protocol !== 'https:') throw refuse('bad_url', 'only https URLs are fetched');
      if (target.username || target.password) throw refuse('bad_url', 'the URL must not carry credentials');
      // undici is loaded (once, synchronously) before any clock starts: its loading is no fault of the host.
      loadUndici();
      // The wait for a slot is bounded on its own, and a fetch that never got one is `busy`, which is never
      // remembered against its URL (resolver.ts). The exchange's deadline starts only once the slot is granted:
      // when it started before the wait, a stranger who held every slot with stalling hosts made the next fetch
      // get its slot with milliseconds left and fail as `timeout`, a failure then remembered against a
      // legitimate client's document for 30 s.
      const wait = AbortSignal.timeout(options.timeoutMs);
      const release = await limiter.acquire(target.hostname, wait);
      if (!release) {
        throw refuse(
          'busy',
          wait.aborted
            ? `no fetch slot for ${target.hostname} came free within ${options.timeoutMs} ms`
            : 'too many fetches are waiting already',
        );
      }
      // One deadline for everything from here on. undici's signal alone does not end a connection attempt (a
      // server that accepts and never answers the TLS ClientHello held a fetch for its 10 s connect timeout), so
      // the exchange is raced against the deadline and its dispatcher destroyed, sockets and all, when it passes.
      const deadline = Date.now() + options.timeoutMs;
      const signal = AbortSignal.timeout(options.timeoutMs);
      let pinned: Pinned | undefined;
      try {
        return await raceAbort(
          exchange(target, limits, signal, deadline, (made) => (pinned = made)),
          signal,
        );
      } catch (error) {
        if (error instanceof FetchRefusedError) throw error;
        if (signal.aborted) throw refuse('timeout', `it did not answer within ${options.timeoutMs} ms`);
        throw refuse('network', `it could not be fetched (${describeNetworkError(error)})`);
      } finally {
        release();
        pinned?.close();
      }
    },
  };
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // Stryker disable next-line ConditionalExpression,BlockStatement: equivalent, a signal just made by AbortSignal.timeout is never aborted yet
    if (signal.aborted) {
      work.catch(() => undefined);
      return reject(signal.reason);
    }
    const onAbort = () => reject(signal.reason);
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent, a signal aborts once at most
    signal.addEventListener('abort', onAbort, { once: true });
    // Stryker disable next-line ArrowFunction: equivalent, a listener left behind rejects a settled promise: no effect
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function describeNetworkError(error: unknown): string {
  const { code, message, cause } = (error ?? {}) as { code?: string; message?: string; cause?: unknown };
  if (cause) return describeNetworkError(cause);
  return code ? `${code}${message ? `: ${message}` : ''}` : (message ?? String(error));
}
