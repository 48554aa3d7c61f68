// Reading request parameters: each at most once, as a string (RFC 6749 §3.1, §3.2), from a query or a body that
// Express 4 (qs) or 5 (querystring) may have parsed into arrays or objects.
import { OAuthError } from '../errors';

const MAX_PARAM_LENGTH = 4096;
// C0 controls (NUL, tab, line breaks, escape, ...) and DEL: no OAuth parameter or metadata field holds one.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** Whether a string holds a C0 control character or DEL. */
export function containsControlCharacter(value: string): boolean {
  return CONTROL_CHARACTER.test(value);
}

/** The value of one parameter, or undefined when absent or empty; invalid_request when repeated or not text. */
export function readParam(source: unknown, name: string): string | undefined {
  if (!source || typeof source !== 'object') return undefined;
  if (!Object.prototype.hasOwnProperty.call(source, name)) return undefined;
  const value = (source as Record<string, unknown>)[name];
  if (value === undefined || value === null || value === '') return undefined;
  // RFC 6749 §3.1: request parameters MUST NOT be included more than once.
  if (Array.isArray(value))
    throw new OAuthError('invalid_request', `The ${name} parameter must not be repeated.`);
  if (typeof value !== 'string')
    throw new OAuthError('invalid_request', `The ${name} parameter must be a string.`);
  if (value.length > MAX_PARAM_LENGTH) {
    throw new OAuthError(
      'invalid_request',
      `The ${name} parameter is longer than ${MAX_PARAM_LENGTH} characters.`,
    );
  }
  return value;
}

/** Like readParam, but invalid_request when the parameter is missing. */
export function requireParam(source: unknown, name: string): string {
  const value = readParam(source, name);
  if (value === undefined) throw new OAuthError('invalid_request', `The ${name} parameter is required.`);
  return value;
}

/** RFC 8707 §2: the resource must be one this server protects; one per request here. */
export function readResource(source: unknown, resources: readonly string[]): string {
  const raw = source && typeof source === 'object' ? (source as Record<string, unknown>).resource : undefined;
  if (Array.isArray(raw)) throw new OAuthError('invalid_target', 'Request one resource at a time.');
  const value = readParam(source, 'resource');
  if (value === undefined) return resources[0]!;
  const normalised = value.replace(/\/+$/, '');
  if (!resources.includes(normalised)) {
    throw new OAuthError(
      'invalid_target',
      `The resource "${value.slice(0, 200)}" is not served by this authorization server.`,
    );
  }
  return normalised;
}
