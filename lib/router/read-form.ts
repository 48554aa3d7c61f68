// The common API request body, read without body-parser: a form (RFC 6749 §3.2: application/x-www-form-urlencoded),
// UTF-8, not compressed, with a Content-Length within the limit. That is every token request real clients send, and
// body-parser's generality around it (charsets, inflation, bodies of unknown length, qs) cost about a twentieth of a
// grant. Anything else still goes to body-parser, so what is refused or accepted does not change.
import { parse } from 'node:querystring';
import type { Request, RequestHandler } from 'express';
import { OAuthError } from '../errors';

// RFC 9110 §8.3: the media type in any case, optional white space, at most a UTF-8 charset (quoted or not).
const PLAIN_FORM = /^application\/x-www-form-urlencoded[ \t]*(?:;[ \t]*charset=(?:utf-8|"utf-8")[ \t]*)?$/i;
const LENGTH = /^\d{1,9}$/;

/** Whether `req` carries a body this reader takes: a plain UTF-8 form of a known length of at most `maxBytes`. */
export function isPlainForm(req: Request, maxBytes: number): boolean {
  const { headers } = req;
  const type = headers['content-type'];
  const length = headers['content-length'];
  return (
    type !== undefined &&
    PLAIN_FORM.test(type) &&
    length !== undefined &&
    LENGTH.test(length) &&
    Number(length) <= maxBytes &&
    headers['content-encoding'] === undefined &&
    headers['transfer-encoding'] === undefined
  );
}

/** querystring's result as body-parser's: a plain object, and no __proto__ parameter (qs drops it). */
function toPlainObject(parsed: Record<string, string | string[] | undefined>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(parsed)) if (key !== '__proto__') body[key] = parsed[key];
  return body;
}

/**
 * Reads a plain form (see isPlainForm) into `req.body`, as body-parser's urlencoded parser would: a repeated name
 * becomes an array, '+' a space; more than `maxParameters` parameters is 413.
 */
export function createFormReader(maxParameters: number): RequestHandler {
  return function readForm(req, _res, next) {
    // A parser the host app mounted in front already read the body (body-parser 1 marks it, 2 leaves it ended).
    if ((req as { _body?: boolean })._body || req.readableEnded) return next();
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
    };
    const finish = (error?: OAuthError) => {
      req.off('data', onData).off('end', onEnd).off('error', onFailure).off('aborted', onFailure);
      next(error);
    };
    const onFailure = () =>
      finish(new OAuthError('invalid_request', 'The request body could not be read.', { status: 400 }));
    const onEnd = () => {
      const text = Buffer.concat(chunks, size).toString('utf8');
      let parameters = 1;
      for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) parameters += 1;
      if (parameters > maxParameters)
        return finish(
          new OAuthError('invalid_request', 'The request has too many parameters.', { status: 413 }),
        );
      (req as { _body?: boolean })._body = true;
      req.body = toPlainObject(parse(text, '&', '=', { maxKeys: 0 }));
      finish();
    };
    req.on('data', onData).on('end', onEnd).on('error', onFailure).on('aborted', onFailure);
  };
}
