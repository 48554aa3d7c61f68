// Open CORS for endpoints a browser-based MCP client calls directly (metadata, JWKS, registration, token,
// revocation). None of them reads cookies, so any origin may call them without credentials.
import type { RequestHandler } from 'express';

export function openCors(methods: readonly string[]): RequestHandler {
  const allowMethods = [...methods, 'OPTIONS'].join(', ');
  return function allowAnyOrigin(req, res, next) {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader(
      'Access-Control-Expose-Headers',
      'WWW-Authenticate, RateLimit, RateLimit-Policy, Retry-After, DPoP-Nonce',
    );
    if (req.method !== 'OPTIONS') return next();
    res.setHeader('Access-Control-Allow-Methods', allowMethods);
    // DPoP: a browser-based client sends its proof to the token endpoint (RFC 9449 §4.1).
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, DPoP, MCP-Protocol-Version');
    res.setHeader('Access-Control-Max-Age', '86400');
    res.status(204).end();
  };
}
