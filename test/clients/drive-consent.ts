// The user's side of the client matrix: sign in and allow, in headless Chromium or in the scripted HTTP browser, and
// read where the server sends the browser back. The client's redirect URI is never listened on (a loopback port, an
// https page, a private-use scheme): the consent's redirect Location is what the driver reads.
import type { Browser } from 'playwright-core';
import { httpBrowser } from '../helpers/http-browser';

export interface User {
  email: string;
  password: string;
}

export interface ConsentResult {
  /** The Location the server sent the browser to after Allow: the client's redirect URI with code, state, iss. */
  location: string;
  /** The text of the consent page, as the user read it. */
  consentText: string;
}

const isRedirect = (status: number) => status === 302 || status === 303;

/** What a page of the app says, for an error message: the text of its main element, tags and spaces folded. */
function pageText(html: string): string {
  const main = /<main[^>]*>([\s\S]*?)<\/main>/.exec(html)?.[1] ?? html;
  return main
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCharCode(parseInt(code, 16)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 500);
}

/** Signs in and allows in Chromium, in a context of its own (no session shared with another client's user). */
export async function consentInChromium(
  browser: Browser,
  authorizationUrl: URL,
  user: User,
): Promise<ConsentResult> {
  const appOrigin = authorizationUrl.origin;
  const context = await browser.newContext();
  try {
    // Nothing but the app is reached: anything off its origin is answered here, before Chromium opens a connection.
    await context.route(
      (url) => url.origin !== appOrigin,
      (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<p>The client.</p>' }),
    );
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const response = await page.goto(authorizationUrl.href);
    if (response && response.status() !== 200) {
      throw new Error(`authorization page: ${response.status()} ${pageText(await response.text())}`);
    }
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const allow = page.getByRole('button', { name: 'Allow' });
    await allow.waitFor();
    const consentText = (await page.textContent('main')) ?? '';
    // Once the page shows Allow, the next POST is the decision: its answer is read here and not followed (Chromium
    // aborts a redirect to a private-use scheme without reporting it, and the redirect URI is never listened on).
    let settle: { resolve(location: string): void; reject(error: Error): void } | undefined;
    const decided = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
    await context.route(
      (url) => url.origin === appOrigin,
      async (route) => {
        if (route.request().method() !== 'POST') return route.fallback();
        const answer = await route.fetch({ maxRedirects: 0 });
        const location = answer.headers().location;
        if (!isRedirect(answer.status()) || !location || new URL(location, appOrigin).origin === appOrigin) {
          const text = pageText(await answer.text());
          settle!.reject(
            new Error(`the decision was not a redirect to the client: ${answer.status()} ${text}`),
          );
          return route.fulfill({ response: answer });
        }
        settle!.resolve(location);
        return route.fulfill({ status: 200, contentType: 'text/html', body: '<p>Back to the client.</p>' });
      },
    );
    await allow.click();
    const location = await decided;
    return { location, consentText };
  } finally {
    await context.close();
  }
}

/** Signs in and allows every scope asked for with form posts over fetch. */
export async function consentOverHttp(authorizationUrl: URL, user: User): Promise<ConsentResult> {
  const browser = httpBrowser();
  const base = authorizationUrl.origin;
  const signInPage = await browser.visit(authorizationUrl);
  const signIn = await signInPage.text();
  if (signInPage.status !== 200) {
    throw new Error(`authorization page: ${signInPage.status} ${pageText(signIn)}`);
  }
  const signedIn = await browser.submit(base, signIn, [
    ['email', user.email],
    ['password', user.password],
  ]);
  const next = signedIn.headers.get('location');
  const consentPage = next ? await browser.visit(new URL(next, base)) : signedIn;
  const consentText = await consentPage.text();
  if (!/name="decision"/.test(consentText)) {
    throw new Error(`no consent form after signing in: ${consentPage.status} ${pageText(consentText)}`);
  }
  const decided = await browser.submit(base, consentText, [['decision', 'allow']]);
  const location = decided.headers.get('location');
  if (!isRedirect(decided.status) || !location) {
    throw new Error(`the decision was not a redirect: ${decided.status} ${pageText(await decided.text())}`);
  }
  return { location, consentText };
}
