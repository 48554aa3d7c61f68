// The HTML pages of the authorization endpoint: EJS templates (replaceable by the host app) served with a strict
// Content-Security-Policy, framing forbidden and caching off.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ejs from 'ejs';
import type { RequestHandler, Response } from 'express';
import helmet from 'helmet';
import type { OAuthConfig } from '../options';
import { negotiateLanguage } from '../i18n/negotiate';
import type { PageMessageKey } from '../i18n/messages';
import { renderMessage } from '../i18n/translate';
import type { ResolvedLanguage } from '../i18n/options';

type PageName = 'login' | 'consent' | 'error' | 'device';

export interface Pages {
  /** Security headers for every page: CSP with a per-response nonce, no framing, no caching. */
  headers: RequestHandler;
  render(res: Response, page: PageName, data: Record<string, unknown>, status?: number): Promise<void>;
}

/** The package's own views/ folder, found from this file whether it runs from lib/ (tests) or dist/lib/. */
function builtInViews(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'views', 'consent.ejs'))) return join(dir, 'views');
  }
  throw new Error('express-mcp-oauth: its views/ folder is missing; reinstall the package.');
}

/**
 * The built-in pages' stylesheet (views/styles.css), for a host app's own pages (an account page, say) to look the
 * same: serve it as a file, or inline it under a CSP nonce as the built-in pages do.
 */
export const PAGE_STYLESHEET: string = readFileSync(join(builtInViews(), 'styles.css'), 'utf8');

/**
 * What a page shows in the negotiated language beyond its messages: each scope's description, and for an error the
 * catalogue's text for its code (with the server's own description kept as a detail).
 */
function localised(
  page: PageName,
  data: Record<string, unknown>,
  language: ResolvedLanguage,
): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  // The sign-in page's own errors come as message keys; a template gets them as text, as it always did.
  if (typeof data.errorKey === 'string') {
    // Plain text with its {placeholders} filled: the template escapes it.
    const values = (data.errorValues ?? {}) as Record<string, string>;
    extra.error = language.messages[data.errorKey as PageMessageKey].replace(
      /\{(\w+)\}/g,
      (whole, name: string) => (Object.hasOwn(values, name) ? String(values[name]) : whole),
    );
  }
  for (const list of ['scopes', 'allowedScopes'] as const)
    if (Array.isArray(data[list]))
      extra[list] = (data[list] as Array<{ name: string; description: string; tools?: unknown[] }>).map(
        (scope) => ({
          ...scope,
          // Own properties only: a scope named "constructor" must not read Object's.
          description: Object.hasOwn(language.scopes, scope.name)
            ? language.scopes[scope.name]
            : scope.description,
          tools: ((scope.tools ?? []) as Array<{ name: string; title?: string }>).map((tool) => ({
            ...tool,
            label: Object.hasOwn(language.tools, tool.name)
              ? language.tools[tool.name]
              : (tool.title ?? tool.name),
          })),
        }),
      );
  const code = data.error;
  if (page === 'error' && typeof code === 'string' && Object.hasOwn(language.errors, code)) {
    extra.errorText = language.errors[code];
  }
  return extra;
}

export function createPages(config: OAuthConfig): Pages {
  const viewsDir = builtInViews();
  const served = [...config.pages.languages.keys()];
  const files: Record<PageName, string> = {
    login: config.views.login ?? join(viewsDir, 'login.ejs'),
    consent: config.views.consent ?? join(viewsDir, 'consent.ejs'),
    error: config.views.error ?? join(viewsDir, 'error.ejs'),
    device: join(viewsDir, 'device.ejs'),
  };
  for (const file of Object.values(files)) {
    if (!existsSync(file)) throw new TypeError(`createOAuthRouter: the view ${file} does not exist.`);
  }

  const securityHeaders = helmet({
    // Set at render time (below), once the page knows where its form may lead.
    contentSecurityPolicy: false,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
  });
  const contentSecurityPolicy = helmet.contentSecurityPolicy({
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      styleSrc: [(_req, res) => `'nonce-${(res as Response).locals.cspNonce}'`],
      imgSrc: ["'self'", 'data:', 'https:'],
      // Chromium applies form-action to the redirect that follows a form post, so the client's redirect target
      // must be allowed here, or the browser would refuse to go back to the app after Allow or Deny.
      formAction: [
        (_req, res) => ["'self'", (res as Response).locals.formActionSource].filter(Boolean).join(' '),
      ],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
  });

  return {
    headers: function pageSecurityHeaders(req, res, next) {
      // Any error from here on (a refused parameter, a rate limit) is shown as a page: a browser is reading.
      res.locals.oauthPage = true;
      res.locals.cspNonce = randomBytes(16).toString('base64');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Pragma', 'no-cache');
      securityHeaders(req, res, next);
    },

    async render(res, page, data, status = 200) {
      const { pages } = config;
      // The browser's language when the pages speak it (RFC 9110 §12.5.4), unless the host app forces one.
      const tag = pages.forced ?? negotiateLanguage(res.req.headers['accept-language'], served, 'en');
      const language = pages.languages.get(tag)!;
      const t = (key: PageMessageKey, values?: Record<string, unknown>) =>
        renderMessage(language.messages[key], values);
      const html = await ejs.renderFile(
        files[page],
        {
          serviceName: config.serviceName,
          nonce: res.locals.cspNonce ?? '',
          styles: PAGE_STYLESHEET,
          error: undefined,
          ...data,
          ...localised(page, data, language),
          lang: tag,
          t,
          logoUrl: pages.logoUrl,
          accentColor: pages.accentColor,
        },
        { cache: true, async: false },
      );
      res.setHeader('Content-Language', tag);
      // The same URL answers in several languages: a cache must key on the header that chose (RFC 9110 §12.5.5).
      if (!pages.forced) res.vary('Accept-Language');
      // The policy middleware only sets a header, synchronously.
      contentSecurityPolicy(res.req, res, () => undefined);
      res.status(status).type('html').send(html);
    },
  };
}
