// The account pages' own sign-in: a session the server holds (account_sessions), named by a random token in an
// HttpOnly cookie, so that "Sign out" ends it for good, even for a copy of the cookie; and a CSRF token per browser.
// On https the cookies carry the __Host- prefix (Path=/, Secure, no Domain): a sibling subdomain cannot plant one.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { AppDb } from '../db/database';

const LIFETIME_SECONDS = 3600;

export interface AccountSession {
  userId(req: Request): Promise<string | undefined>;
  signIn(res: Response, userId: string): Promise<void>;
  /** Ends this browser's session on the server, and clears its cookie. */
  signOut(req: Request, res: Response): Promise<void>;
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

const hashOf = (token: string) => createHash('sha256').update(token).digest('base64url');

export function createAccountSession(db: AppDb, secret: string, secure: boolean): AccountSession {
  const SESSION = secure ? '__Host-app_session' : 'app_session';
  const CSRF = secure ? '__Host-app_csrf' : 'app_csrf';
  const mac = (value: string) => createHmac('sha256', secret).update(value).digest('base64url');
  const equal = (a: string, b: string) =>
    a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
  // __Host- cookies must have Path=/ and Secure; on plain http (loopback development) they stay on /account.
  const attributes = `Path=${secure ? '/' : '/account'}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  const add = (res: Response, cookie: string) => {
    const existing = res.getHeader('Set-Cookie');
    res.setHeader('Set-Cookie', [
      ...(Array.isArray(existing) ? existing : existing ? [String(existing)] : []),
      cookie,
    ]);
  };
  const tokenOf = (req: Request) => {
    const token = cookies(req).get(SESSION);
    return token && /^[A-Za-z0-9_-]{43}$/.test(token) ? token : undefined;
  };

  return {
    async userId(req) {
      const token = tokenOf(req);
      if (!token) return undefined;
      const row = await db.get<{ user_id: number }>(
        'SELECT user_id FROM account_sessions WHERE token_hash = ? AND expires_at > ? AND revoked_at IS NULL',
        [hashOf(token), Date.now()],
      );
      return row ? String(row.user_id) : undefined;
    },
    async signIn(res, userId) {
      const token = randomBytes(32).toString('base64url');
      const now = Date.now();
      // Sessions past their life go as new ones come: the table holds only the last hour's.
      await db.run('DELETE FROM account_sessions WHERE expires_at <= ?', [now]);
      await db.run('INSERT INTO account_sessions (token_hash, user_id, expires_at) VALUES (?, ?, ?)', [
        hashOf(token),
        Number(userId),
        now + LIFETIME_SECONDS * 1000,
      ]);
      add(res, `${SESSION}=${token}; Max-Age=${LIFETIME_SECONDS}; ${attributes}`);
    },
    async signOut(req, res) {
      const token = tokenOf(req);
      if (token) {
        await db.run(
          'UPDATE account_sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL',
          [Date.now(), hashOf(token)],
        );
      }
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
