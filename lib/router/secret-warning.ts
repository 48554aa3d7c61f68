// Without `secret`, each process makes its own: a restart, or a second instance, then derives other refresh-token
// successors, so a client retrying a refresh whose answer it lost (or presenting a token another instance rotated) is
// taken for reuse, and its grant revoked (grants/rotation.ts). Documented in the option, and said once at start, since
// nothing else shows it before a user is signed out.

let warned = false;

/** Warns once per process when a router is created without `secret`. */
export function warnWithoutSecret(secret: unknown, warn: (message: string) => void = console.warn): void {
  if (secret !== undefined || warned) return;
  warned = true;
  warn(
    'express-mcp-oauth: no `secret` given, so this process made a random one. After a restart, or on another ' +
      'instance, a refresh token presented again (a retry of a lost answer, a token shared by two processes) is ' +
      'taken for reuse and its grant revoked, and sign-in cookies stop working. Give every instance the same 32+ ' +
      'bytes, e.g. secret: process.env.OAUTH_SECRET (make one with `openssl rand -base64 32`).',
  );
}
