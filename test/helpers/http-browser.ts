// A scripted browser over fetch (a cookie jar and form posts), for flows that cross several app instances.
import { pkcePair } from './pkce';

export function httpBrowser() {
  const cookies = new Map<string, string>();
  const visit = async (url: string | URL, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (cookies.size)
      headers.set('Cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair!.indexOf('=');
      cookies.set(pair!.slice(0, index), pair!.slice(index + 1));
    }
    return res;
  };
  const submit = async (base: string, html: string, extra: Array<[string, string]>) => {
    const action = /<form[^>]*action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');
    const fields: Array<[string, string]> = [
      ...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g),
    ].map((m) => [m[1]!, m[2]!]);
    fields.push(
      ...[...html.matchAll(/<input type="checkbox"[^>]* name="([^"]+)" value="([^"]*)" checked>/g)].map(
        (m): [string, string] => [m[1]!, m[2]!],
      ),
    );
    // The form's action names the issuer; post it to the instance this browser is talking to.
    const target = new URL(new URL(action).pathname, base);
    return visit(target, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([...fields, ...extra]),
    });
  };
  return { visit, submit, cookies };
}

/** Signs in and allows on the instance at `base`; returns the code and the PKCE verifier. */
export async function authorizeOn(
  base: string,
  client: { client_id: string; redirect_uris: string[] },
  user: { email: string; password: string },
  resource: string,
): Promise<{ code: string; verifier: string; redirectUri: string }> {
  const browser = httpBrowser();
  const pkce = pkcePair();
  const redirectUri = client.redirect_uris[0]!;
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    scope: 'fakture:read clients:read',
    resource,
    state: 'multi',
  });
  const signIn = await (await browser.visit(`${base}/v1/oauth/authorize?${query}`)).text();
  const signedIn = await browser.submit(base, signIn, [
    ['email', user.email],
    ['password', user.password],
  ]);
  const consentUrl = new URL(
    new URL(signedIn.headers.get('location')!).pathname + new URL(signedIn.headers.get('location')!).search,
    base,
  );
  const consent = await (await browser.visit(consentUrl)).text();
  const decided = await browser.submit(base, consent, [['decision', 'allow']]);
  const code = new URL(decided.headers.get('location')!).searchParams.get('code');
  if (!code) throw new Error(`no code: ${decided.status} ${decided.headers.get('location')}`);
  return { code, verifier: pkce.verifier, redirectUri };
}

/** Follows an authorization URL as a user would: signs in, allows every scope asked for; returns the code. */
export async function consentTo(authorizationUrl: URL, user: { email: string; password: string }) {
  const browser = httpBrowser();
  const base = authorizationUrl.origin;
  const signInPage = await browser.visit(authorizationUrl);
  const signIn = await signInPage.text();
  if (signInPage.status !== 200)
    throw new Error(`authorization page: ${signInPage.status} ${signIn.slice(0, 300)}`);
  const signedIn = await browser.submit(base, signIn, [
    ['email', user.email],
    ['password', user.password],
  ]);
  const next = signedIn.headers.get('location');
  const consent = next ? await (await browser.visit(new URL(next, base))).text() : await signedIn.text();
  const decided = await browser.submit(base, consent, [['decision', 'allow']]);
  const code = new URL(decided.headers.get('location') ?? 'about:blank').searchParams.get('code');
  if (!code) throw new Error(`no code: ${decided.status} ${decided.headers.get('location')}`);
  return code;
}
