// The one way the server reaches out to the network: GET a small JSON document (a client's metadata document, a
// client's JWKS) from a URL that an outsider chose. The danger is SSRF, so: https only; the host is resolved
// here and every address it resolves to must be globally reachable (special-use ones are refused, loopback only
// when allowed); the connection goes to the address that was checked, through a dispatcher made for that one
// request (no second lookup, so DNS rebinding cannot swap it); no redirects, no cookies or credentials; a size cap and one deadline for the whole exchange.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import type { Agent } from 'undici';
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
  /** The deadline of the whole exchange: lookup, connection, headers and body. */
  timeoutMs: number;
  /** Extra certificate authorities to trust, besides Node's own (and NODE_EXTRA_CA_CERTS). */
  ca: string[] | undefined;
  resolveHost: ResolveHost;
}

/** What a fetch brought back: the parsed JSON and the caching it asked for. */
export interface FetchedJson {
  body: unknown;
  cacheControl: string | undefined;
}

/** A fetch that was refused or failed; the message says why in words a developer understands. */
export class FetchRefusedError extends Error {
  override readonly name = 'FetchRefusedError';
}

export interface SafeFetcher {
  /** GETs JSON of at most `maxBytes` from an https URL, with one of the `contentTypes`. */
  getJson(url: string, limits: { maxBytes: number; contentTypes: readonly string[] }): Promise<FetchedJson>;
}

export const systemResolveHost: ResolveHost = (hostname) =>
  dnsLookup(hostname, { all: true, verbatim: true });

export function createSafeFetcher(options: SafeFetchOptions): SafeFetcher {
  const refuse = (message: string) => new FetchRefusedError(message);

  /** The address to connect to: every address of the host is checked, and the first one is used. */
  async function pickAddress(hostname: string): Promise<ResolvedAddress> {
    const literal = hostname.replace(/^\[|\]$/g, '');
    let addresses: ResolvedAddress[];
    if (isIP(literal)) {
      addresses = [{ address: literal, family: isIP(literal) }];
    } else {
      try {
        addresses = await options.resolveHost(hostname);
      } catch (error) {
        throw refuse(`the host ${hostname} could not be resolved (${(error as Error).message})`);
      }
    }
    if (!Array.isArray(addresses) || addresses.length === 0)
      throw refuse(`the host ${hostname} has no address`);
    // One bad address is enough: a name that answers public then private must not get a second chance.
    for (const { address } of addresses) {
      const use = specialUseOf(String(address));
      if (use && !(use === 'loopback' && options.allowLoopback)) {
        throw refuse(`the host ${hostname} resolves to ${address}, a ${use} address, which is never fetched`);
      }
    }
    const chosen = addresses[0]!;
    return { address: chosen.address, family: isIP(chosen.address) };
  }

  const ca = options.ca ? [...rootCertificates, ...options.ca] : undefined;

  /** A dispatcher whose only way to resolve a name is the address already checked: the socket goes there. */
  function pinnedAgent(address: ResolvedAddress): Agent {
    const { Agent } = loadUndici();
    const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
      if ((lookupOptions as { all?: boolean }).all) {
        return (callback as unknown as (e: null, all: ResolvedAddress[]) => void)(null, [address]);
      }
      callback(null, address.address, address.family);
    };
    return new Agent({ connect: { lookup, ...(ca ? { ca } : {}) }, pipelining: 0 });
  }

  return {
    async getJson(url, { maxBytes, contentTypes }) {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        throw refuse(`"${url.slice(0, 200)}" is not a URL`);
      }
      if (target.protocol !== 'https:') throw refuse('only https URLs are fetched');
      if (target.username || target.password) throw refuse('the URL must not carry credentials');
      const signal = AbortSignal.timeout(options.timeoutMs);
      let agent: Agent | undefined;
      try {
        const address = await raceAbort(pickAddress(target.hostname), signal);
        agent = pinnedAgent(address);
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
            throw refuse(`it answered ${statusCode}, a redirect, and redirects are not followed`);
          throw refuse(`it answered HTTP ${statusCode} instead of 200`);
        }
        const type = (header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
        if (!contentTypes.includes(type)) {
          body.destroy();
          throw refuse(`its content type is "${type || 'missing'}" instead of ${contentTypes.join(' or ')}`);
        }
        const declared = Number(header('content-length'));
        if (declared > maxBytes) {
          body.destroy();
          throw refuse(`it is ${declared} bytes, more than the ${maxBytes} allowed`);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of body) {
          size += (chunk as Buffer).length;
          if (size > maxBytes) {
            body.destroy();
            throw refuse(`it is more than the ${maxBytes} bytes allowed`);
          }
          chunks.push(chunk as Buffer);
        }
        try {
          return {
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
            cacheControl: header('cache-control'),
          };
        } catch {
          throw refuse('it is not valid JSON');
        }
      } catch (error) {
        if (error instanceof FetchRefusedError) throw error;
        if (signal.aborted) throw refuse(`it did not answer within ${options.timeoutMs} ms`);
        throw refuse(`it could not be fetched (${describeNetworkError(error)})`);
      } finally {
        void agent?.destroy().catch(() => undefined);
      }
    },
  };
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function describeNetworkError(error: unknown): string {
  const { code, message, cause } = (error ?? {}) as { code?: string; message?: string; cause?: unknown };
  if (cause) return describeNetworkError(cause);
  return code ? `${code}${message ? `: ${message}` : ''}` : (message ?? String(error));
}
