// What the fetch caches of outbound documents (clients' metadata documents and key sets, enterprise IdPs' metadata and
// keys) remember of a failure, and which failures take a cached copy away: one policy for every document fetched
// from a URL a stranger may choose.
import { FetchRefusedError, type FetchFailure } from './safe-fetch';

/** An unknown kid refetches the JWKS once, but not more often than this per URL (no fetch amplification). */
export const REFETCH_AFTER_MS = 10_000;
/**
 * How long a failed fetch or an invalid document is answered from memory: long enough that a host which fails or
 * stalls is not fetched again for every request naming it, short enough that a fixed document is soon seen.
 */
export const FAILURE_CACHE_MS = 30_000;

// A failure the URL is not to blame for (the server was busy fetching others) is not remembered against it.
export const rememberFailure = (error: unknown) =>
  !(error instanceof FetchRefusedError && error.reason === 'busy');

/** Failures of the host or the network for now, which say nothing about the document itself. */
const PASSING_FAILURES: ReadonlySet<FetchFailure> = new Set([
  'unresolvable',
  'refused_address',
  'busy',
  'timeout',
  'network',
]);

/**
 * Whether a failure withdraws the copy it would have replaced: the host answered, and said that the document is
 * gone (404 Not Found, 410 Gone: RFC 9110 §15.5.5, §15.5.11) or gave one that is not valid (not JSON, another
 * content type, too large, invalid content). Anything else (no answer in time, a refused connection, a 5xx, no
 * slot) leaves a copy still within its cache lifetime in use: such a failure may be a stranger's doing (slots held,
 * a refetch forced with an unknown kid at a bad moment) and must not take a working client's key set away. Only a
 * refetch meets a copy within its lifetime (a jwks_uri read again for an unknown kid); a document is fetched again
 * only once its copy has expired, and an expired copy is never served.
 */
export const withdrawsCopy = (error: unknown) => {
  if (!(error instanceof FetchRefusedError)) return true;
  if (error.reason === 'http_status') return error.status === 404 || error.status === 410;
  return !PASSING_FAILURES.has(error.reason);
};
