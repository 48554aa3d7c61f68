// Tamper-evident small values (sign-in cookie, pending authorization request, CSRF token): HMAC-SHA256 with a key
// per purpose, so a value minted for one purpose is never accepted for another.
import { createHmac } from 'node:crypto';
import { constantTimeEqual } from './secrets';

export interface Sealer {
  /** `payload` as base64url JSON with an expiry, followed by its MAC. */
  seal(purpose: string, payload: Record<string, unknown>, expiresAt: number): string;
  /** The payload of a value sealed for `purpose`, or undefined if it was altered, is malformed or has expired. */
  open<T extends Record<string, unknown>>(purpose: string, sealed: unknown): T | undefined;
  /** A MAC over `parts` for `purpose`. */
  mac(purpose: string, ...parts: string[]): string;
}

export function createSealer(secret: Buffer, now: () => number): Sealer {
  const keys = new Map<string, Buffer>();
  const keyFor = (purpose: string) => {
    let key = keys.get(purpose);
    if (!key)
      keys.set(purpose, (key = createHmac('sha256', secret).update(`express-mcp-oauth:${purpose}`).digest()));
    return key;
  };
  const mac = (purpose: string, ...parts: string[]) =>
    createHmac('sha256', keyFor(purpose)).update(parts.join('\u0000')).digest('base64url');

  return {
    mac,
    seal(purpose, payload, expiresAt) {
      const body = Buffer.from(JSON.stringify({ ...payload, exp: expiresAt })).toString('base64url');
      return `${body}.${mac(purpose, body)}`;
    },
    open<T extends Record<string, unknown>>(purpose: string, sealed: unknown): T | undefined {
      if (typeof sealed !== 'string' || sealed.length > 8192) return undefined;
      const [body, tag, extra] = sealed.split('.');
      if (!body || !tag || extra !== undefined || !constantTimeEqual(tag, mac(purpose, body)))
        return undefined;
      try {
        const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T & { exp?: unknown };
        return typeof payload.exp === 'number' && payload.exp > now() ? payload : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
