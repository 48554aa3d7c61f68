// The account pages' own sign-in: a signed HttpOnly cookie for /account, and a CSRF token per browser.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

const SESSION = 'app_session';
const CSRF = 'app_csrf';
const LIFETIME_SECONDS = 3600;

export interface AccountSession {
  userId(req: Request): string | undefined;
  signIn(res: Response, userId: string): void;
  signOut(res: Response): void;
  /** The CSRF token of this browser, setting its cookie if it has none. */
  csrfToken(req: Request, res: Response): string;
  csrfValid(req: Request): boolean;
}

function cookies(req: Request): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0) jar.set(part.slice(0, index).trim(), part.slice(index + 1).trim());
  }
  return jar;
}

export function createAccountSession(secret: string, secure: boolean): AccountSession {
  const mac = (value: string) => createHmac('sha256', secret).update(value).digest('base64url');
  const equal = (a: string, b: string) =>
    a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
  const attributes = `Path=/account; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  const add = (res: Response, cookie: string) => {
    const existing = res.getHeader('Set-Cookie');
    res.setHeader('Set-Cookie', [
      ...(Array.isArray(existing) ? existing : existing ? [String(existing)] : []),
      cookie,
    ]);
  };

  return {
    userId(req) {
      const value = cookies(req).get(SESSION);
      const [userId, expires, tag] = value?.split('.') ?? [];
      if (!userId || !expires || !tag || !equal(tag, mac(`session:${userId}.${expires}`))) return undefined;
      return Number(expires) > Date.now() / 1000 ? userId : undefined;
    },
    signIn(res, userId) {
      const expires = Math.floor(Date.now() / 1000) + LIFETIME_SECONDS;
      add(
        res,
        `${SESSION}=${userId}.${expires}.${mac(`session:${userId}.${expires}`)}; Max-Age=${LIFETIME_SECONDS}; ${attributes}`,
      );
    },
    signOut(res) {
      add(res, `${SESSION}=; Max-Age=0; ${attributes}`);
    },
    csrfToken(req, res) {
      let browser = cookies(req).get(CSRF);
      if (!browser || !/^[A-Za-z0-9_-]{43}$/.test(browser)) {
        browser = randomBytes(32).toString('base64url');
        add(res, `${CSRF}=${browser}; ${attributes}`);
      }
      return mac(`csrf:${browser}`);
    },
    csrfValid(req) {
      const browser = cookies(req).get(CSRF);
      const token = (req.body as Record<string, unknown> | undefined)?.csrf_token;
      return Boolean(browser) && typeof token === 'string' && equal(token, mac(`csrf:${browser}`));
    },
  };
}
