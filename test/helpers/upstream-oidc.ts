// An upstream OpenID provider (panva's oidc-provider, test/fixtures/upstream/oidc-provider.mjs) as a real process on
// loopback, for the upstream sign-in tests: started with its clients and accounts, resolved once it prints READY,
// rejected with its stderr if it exits first or takes over 20 s. And a scripted browser that signs in on it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

export interface UpstreamAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  password: string;
}

/** Signing in as `deny@upstream.test` ends the upstream interaction with access_denied ("The user refused."). */
export const UPSTREAM_ACCOUNTS: UpstreamAccount[] = [
  {
    sub: 'ana',
    email: 'ana@upstream.test',
    email_verified: true,
    name: 'Ana Upstream',
    password: 'ana-password',
  },
  {
    sub: 'ivo',
    email: 'ivo@upstream.test',
    email_verified: false,
    name: 'Ivo Unverified',
    password: 'ivo-password',
  },
  {
    sub: 'deny',
    email: 'deny@upstream.test',
    email_verified: true,
    name: 'Deny Refuser',
    password: 'deny-password',
  },
];

/** Requests the provider saw, successful or not: token requests by grant_type, revocations, userinfo. */
interface UpstreamStats {
  tokenRequests: { authorization_code: number; refresh_token: number; [grantType: string]: number };
  revocations: number;
  userinfo: number;
}

export interface OidcUpstream {
  /** http://127.0.0.1:PORT, its issuer identifier (discovery at /.well-known/openid-configuration). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  stats(): Promise<UpstreamStats>;
  close(): Promise<void>;
}

const SCRIPT = join(__dirname, '../fixtures/upstream/oidc-provider.mjs');

export async function startOidcUpstream(options: {
  redirectUris: string[];
  accounts?: UpstreamAccount[];
  accessTokenTtl?: number;
  port?: number;
}): Promise<OidcUpstream> {
  const clientId = `upstream-client-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const config = {
    port: options.port ?? 0,
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: options.redirectUris }],
    accounts: options.accounts ?? UPSTREAM_ACCOUNTS,
    accessTokenTtl: options.accessTokenTtl ?? 3600,
  };
  const child = spawn(process.execPath, [SCRIPT], {
    env: { ...process.env, UPSTREAM_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`upstream OpenID provider not ready after 20 s: ${stderr}`));
    }, 20_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const ready = /^READY (\S+)$/m.exec(stdout);
      if (ready) {
        clearTimeout(timer);
        resolve(ready[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`upstream OpenID provider exited with ${code}: ${stderr}`));
    });
  });
  return {
    issuer,
    clientId,
    clientSecret,
    stats: async () => (await (await fetch(`${issuer}/__stats`)).json()) as UpstreamStats,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A fetch with a cookie jar (one origin; paths ignored; cleared cookies dropped) that never follows redirects. */
function cookieFetch() {
  const jar = new Map<string, string>();
  return async (url: string | URL, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set('Cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index).trim();
      const value = pair!.slice(index + 1).trim();
      const expired = attributes.some((attribute) => {
        const [key, val = ''] = attribute.trim().split('=');
        if (key!.toLowerCase() === 'max-age') return Number(val) <= 0;
        if (key!.toLowerCase() === 'expires') return Date.parse(val) <= Date.now();
        return false;
      });
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  };
}

/**
 * Drives the upstream login with fetch and a cookie jar, starting at an authorization URL of the upstream, returning
 * the final redirect Location (to our callback) without following it. Throws if the credentials are refused.
 */
export async function signInUpstreamWithFetch(
  authorizationUrl: string,
  account: { email: string; password: string },
): Promise<string> {
  const origin = new URL(authorizationUrl).origin;
  const visit = cookieFetch();
  let res = await visit(authorizationUrl);
  for (let hops = 0; hops < 20; hops++) {
    if (res.status >= 300 && res.status < 400) {
      const location = new URL(res.headers.get('location')!, origin);
      if (location.origin !== origin) return location.href;
      res = await visit(location);
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const refused = /role="alert">([^<]*)</.exec(html)?.[1];
    if (res.status !== 200 || !action || refused)
      throw new Error(`upstream sign-in stopped at ${res.status}: ${refused ?? html.slice(0, 500)}`);
    res = await visit(new URL(action.replace(/&amp;/g, '&'), origin), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: account.email, password: account.password }),
    });
  }
  throw new Error('upstream sign-in: too many redirects');
}
