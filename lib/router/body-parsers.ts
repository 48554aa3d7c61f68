// The body parsers of the OAuth endpoints: small bodies only, a form or JSON as each endpoint's RFC allows.
import express, { type RequestHandler } from 'express';
import { OAuthError } from '../errors';
import { createFormReader, isPlainForm } from './read-form';

const BODY_LIMIT = '16kb';
export const BODY_LIMIT_BYTES = 16 * 1024;
const MAX_PARAMETERS = 50;

export interface BodyParsers {
  /** application/x-www-form-urlencoded: the browser forms (sign-in, consent). */
  form: RequestHandler;
  /** The token, revocation and introspection endpoints: a form (RFC 6749 §3.2) or JSON. */
  formOrJson: RequestHandler;
  /** The registration endpoint: JSON (RFC 7591 §3.1), unreadable JSON being invalid_client_metadata. */
  registrationJson: RequestHandler;
}

export function createBodyParsers(): BodyParsers {
  const json = express.json({ limit: BODY_LIMIT, type: ['application/json', 'application/*+json'] });
  const form = express.urlencoded({ extended: false, limit: BODY_LIMIT, parameterLimit: MAX_PARAMETERS });
  const plainForm = createFormReader(MAX_PARAMETERS);
  return {
    form,
    // One parser, chosen by Content-Type, so the common form request does not also pass through the JSON parser's
    // type check.
    formOrJson: function parseFormOrJson(req, res, next) {
      if (isPlainForm(req, BODY_LIMIT_BYTES)) return plainForm(req, res, next);
      if (req.is('application/x-www-form-urlencoded')) return form(req, res, next);
      json(req, res, next);
    },
    // RFC 7591 §3.2.2: registration metadata that cannot be read is invalid_client_metadata, not invalid_request.
    registrationJson: function parseRegistrationJson(req, res, next) {
      json(req, res, (error?: { type?: string }) =>
        next(
          error?.type === 'entity.parse.failed'
            ? new OAuthError('invalid_client_metadata', 'The client metadata is not valid JSON.')
            : error,
        ),
      );
    },
  };
}
