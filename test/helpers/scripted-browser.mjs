// The user's part of an authorization for the ESM drivers of openid-client (a client written elsewhere): a scripted
// browser with a cookie jar that loads pages, reads their forms as a browser would send them, and posts them.
export function createScriptedBrowser() {
  const cookies = new Map();

  async function browse(url, init = {}) {
    const headers = { ...(init.headers ?? {}), Cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair.indexOf('=');
      cookies.set(pair.slice(0, index), pair.slice(index + 1));
    }
    return res;
  }

  /** A page's form: its action, its hidden fields and its ticked checkboxes (the consent page's scopes). */
  function form(html) {
    const action = /<form[^>]*action="([^"]+)"/.exec(html)[1].replace(/&amp;/g, '&');
    const fields = [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [
      m[1],
      m[2],
    ]);
    fields.push(
      ...[...html.matchAll(/<input type="checkbox"[^>]* name="([^"]+)" value="([^"]*)" checked>/g)].map(
        (m) => [m[1], m[2]],
      ),
    );
    return { action, fields };
  }

  const post = (action, fields) =>
    browse(action, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });

  return { browse, form, post };
}
