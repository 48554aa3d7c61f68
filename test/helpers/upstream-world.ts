// A server with upstream sign-in and its two real upstream providers on loopback: oidc-provider as an OpenID provider
// (keeping the user's tokens) and the GitHub-shaped plain OAuth 2 server; and a scripted browser for the journey.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UpstreamOptions } from '../../lib/upstream/options';
import type { OAuthRouterOptions } from '../../lib/options';
import { httpBrowser } from './http-browser';
import type { OAuthRouter } from '../../lib/router';
import { createSqliteStore } from '../../lib/store/sqlite';
import {
  authorizeQuery,
  createTestServer,
  mountTestApp,
  type RegisteredClient,
  type TestServer,
} from './oauth-app';
import { startGithubDouble, type GithubDouble } from './upstream-github';
import {
  signInUpstreamWithFetch,
  startOidcUpstream,
  UPSTREAM_ACCOUNTS,
  type OidcUpstream,
  type UpstreamAccount,
} from './upstream-oidc';

/** Verified at the provider, but no user of the host app has this email. */
export const STRANGER: UpstreamAccount = {
  sub: 'eve',
  email: 'eve@upstream.test',
  email_verified: true,
  name: 'Eve Stranger',
  password: 'eve-password',
};
export const [ANA, IVO, DENY] = UPSTREAM_ACCOUNTS as [UpstreamAccount, UpstreamAccount, UpstreamAccount];
/** The host app's users, by email: whoever signs in upstream with one of these is that user. */
const HOST_USERS: Record<string, string> = {
  'ana@upstream.test': 'user-ana',
  'octo@github.test': 'user-octo',
};

export interface UpstreamWorld {
  server: TestServer & { baseUrl: string };
  /**
   * Another instance of the same server: its own router and its own connection to the same SQLite database, with
   * the same options and secret (as several processes behind a load balancer would be).
   */
  secondInstance(): { oauth: OAuthRouter; close(): void };
  oidc: OidcUpstream;
  github: GithubDouble;
  close(): Promise<void>;
}

/** The GitHub provider as a host app configures it: the verified email comes from /user/emails. */
const githubProvider = (github: GithubDouble) => ({
  id: 'github',
  name: 'GitHub',
  authorizationEndpoint: `${github.url}/login/oauth/authorize`,
  tokenEndpoint: `${github.url}/login/oauth/access_token`,
  userInfoEndpoint: `${github.url}/user`,
  clientId: github.clientId,
  clientSecret: github.clientSecret,
  scope: 'read:user user:email',
  identity: async (
    profile: Record<string, unknown>,
    context: { fetchJson(url: string): Promise<unknown> },
  ) => {
    const emails = (await context.fetchJson(`${github.url}/user/emails`)) as Array<{
      email: string;
      verified: boolean;
      primary: boolean;
    }>;
    const primary = emails.find((entry) => entry.primary);
    return {
      sub: String(profile.id),
      email: primary?.email,
      emailVerified: primary?.verified === true,
      name: String(profile.name ?? profile.login),
    };
  },
});

export async function startUpstreamWorld(
  options: Omit<Partial<OAuthRouterOptions>, 'upstream'> & { upstream?: Partial<UpstreamOptions> } = {},
): Promise<UpstreamWorld> {
  // Listening before the providers start: their redirect URIs name this port, which no other test may take meanwhile.
  let handler: TestServer['app'] | undefined;
  const http: Server = createServer((req, res) => handler!(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  // With several providers, each has a callback of its own (RFC 9700 §4.4.2).
  const callback = `${baseUrl}/v1/oauth/upstream/callback`;
  const oidc = await startOidcUpstream({
    redirectUris: [`${callback}/oidc`, callback],
    accounts: [...UPSTREAM_ACCOUNTS, STRANGER],
  });
  const github = await startGithubDouble({ redirectUris: [`${callback}/github`] });
  const { upstream, ...rest } = options;
  const routerOptions: Partial<OAuthRouterOptions> = {
    issuer: baseUrl,
    // Shared by the instances: it seals the kept upstream tokens.
    secret: 'the secret every instance of this server shares',
    upstream: {
      providers: [
        {
          id: 'oidc',
          name: 'Upstream ID',
          issuer: oidc.issuer,
          clientId: oidc.clientId,
          clientSecret: oidc.clientSecret,
          keepTokens: true,
        },
        githubProvider(github),
      ],
      findUser: (identity) => {
        const id = identity.email ? HOST_USERS[identity.email] : undefined;
        return id ? { id, email: identity.email, name: identity.name } : null;
      },
      ...upstream,
    } as UpstreamOptions,
    ...rest,
  };
  const server = createTestServer(routerOptions);
  handler = server.app;
  return {
    server: { ...server, baseUrl },
    secondInstance: () => {
      const store = createSqliteStore(server.dbPath, { now: server.clock.now });
      return { oauth: mountTestApp(store, server.clock, routerOptions).oauth, close: () => store.close() };
    },
    oidc,
    github,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      server.close();
      await Promise.all([oidc.close(), github.close()]);
    },
  };
}

/** The sign-in page's "Continue with" links, by provider id. */
export function providerLinks(html: string): Record<string, string> {
  return Object.fromEntries(
    [...html.matchAll(/<a class="button primary" href="([^"]+)"/g)].map((match) => {
      const href = match[1]!.replace(/&amp;/g, '&');
      return [new URL(href).searchParams.get('provider')!, href];
    }),
  );
}

/** A browser at the sign-in page of a new authorization request of `client`. */
export async function openSignIn(world: UpstreamWorld, client: RegisteredClient, overrides = {}) {
  const browser = httpBrowser();
  const { query, pkce } = authorizeQuery(client, { resource: `${world.server.baseUrl}/mcp`, ...overrides });
  const page = await browser.visit(`${world.server.baseUrl}/v1/oauth/authorize?${query}`);
  const html = await page.text();
  return { browser, pkce, page, html, links: providerLinks(html) };
}

/**
 * A person who signs in upstream only: from a client's authorization URL through "Continue with", the provider's
 * sign-in and our consent (Allow), to the code sent back to the client.
 */
export async function consentThroughUpstream(
  authorizationUrl: URL,
  account: UpstreamAccount,
): Promise<string> {
  const browser = httpBrowser();
  const signIn = await browser.visit(authorizationUrl);
  const toProvider = await browser.visit(Object.values(providerLinks(await signIn.text()))[0]!);
  const landed = await browser.visit(
    await signInUpstreamWithFetch(toProvider.headers.get('location')!, account),
  );
  if (landed.status !== 303) throw new Error(`upstream callback: ${landed.status} ${await landed.text()}`);
  const consent = await browser.visit(landed.headers.get('location')!);
  const decided = await browser.submit(authorizationUrl.origin, await consent.text(), [
    ['decision', 'allow'],
  ]);
  const code = new URL(decided.headers.get('location')!).searchParams.get('code');
  if (!code) throw new Error(`consent: ${decided.status} ${decided.headers.get('location')}`);
  return code;
}
