// Answers a method a route does not support with 405 and an Allow header (RFC 9110 §15.5.6).
import type { RequestHandler } from 'express';
import { OAuthError } from '../errors';

export function allowMethods(methods: readonly string[]): RequestHandler {
  const allow = [...methods, 'OPTIONS'].join(', ');
  return function methodNotAllowed(req, _res, next) {
    next(
      new OAuthError('method_not_allowed', `Use ${methods.join(' or ')} for this endpoint.`, {
        headers: { Allow: allow },
      }),
    );
  };
}
