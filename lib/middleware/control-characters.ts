// Refuses C0 control characters (and DEL) in every request parameter, in one place, before any handler or store
// sees them: no OAuth parameter or client metadata field may hold one, and PostgreSQL cannot store a NUL at all
// (it answered 500). Query and body are walked to any depth, so a field added tomorrow is covered too.
import type { RequestHandler } from 'express';
import { OAuthError, type OAuthErrorCode } from '../errors';
import { containsControlCharacter } from '../util/params';

const MAX_DEPTH = 32;

/** The dotted name of the first string (or key) under `value` that holds a control character, or undefined. */
function firstControlCharacter(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return containsControlCharacter(value) ? path : undefined;
  if (!value || typeof value !== 'object' || depth > MAX_DEPTH) return undefined;
  // Runs on every request: a field's dotted name is built only once something is found in it.
  const here = (key: string) => (path ? `${path}.${key}` : key);
  for (const key of Object.keys(value)) {
    if (containsControlCharacter(key)) return here(key);
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'string') {
      if (containsControlCharacter(item)) return here(key);
    } else if (item && typeof item === 'object') {
      const found = firstControlCharacter(item, here(key), depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

/** Answers 400 `code` (invalid_request, or invalid_client_metadata for registration) naming the field. */
export function refuseControlCharacters(code: OAuthErrorCode = 'invalid_request'): RequestHandler {
  return function rejectControlCharacters(req, _res, next) {
    const field = firstControlCharacter(req.query, '') ?? firstControlCharacter(req.body, '');
    if (field === undefined) return next();
    next(new OAuthError(code, `The ${field.slice(0, 100)} parameter holds a control character.`));
  };
}
