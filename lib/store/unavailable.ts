// Whether an error means the store cannot be reached right now (the database restarted, failed over, or the network
// to it broke), as opposed to a fault in a request or in the code. Such errors are answered 503
// temporarily_unavailable with Retry-After, not 500: nothing is wrong with the request, and trying again will work.

/** Connection failures of the network and of pg (node-postgres), and a SQLite database busy past its timeout. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  // SQLite: another connection (or a transaction the host app keeps open) held the database past the busy timeout.
  'SQLITE_BUSY',
]);
/** PostgreSQL SQLSTATEs: class 08 (connection exception), shutdowns, not accepting connections, too many. */
const UNAVAILABLE_SQLSTATES = /^(08...|57P01|57P02|57P03|53300)$/;
/** What pg says, without a code, when a connection dies or cannot be had in time. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/;

/** Whether `error` (or what caused it) says the store cannot be reached. */
export function isStoreUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.test(code))) return true;
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
  // An AggregateError (a connection tried on several addresses) is unavailable when its parts are.
  if (
    Array.isArray(errors) &&
    errors.length > 0 &&
    errors.every((part) => isStoreUnavailable(part, depth + 1))
  )
    return true;
  return isStoreUnavailable(cause, depth + 1);
}
