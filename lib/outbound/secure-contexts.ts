// The TLS secure contexts of outbound fetches: one per set of trusted authorities in the process. Making one parses
// every root certificate (some 40-80 ms of blocking CPU), so it is made at the first fetch that needs it and shared
// by every fetcher trusting the same authorities: all the fetches of one router, and the routers of a host that
// mounts several (one per tenant, or one per test). A context holds trusted authorities only, no session or client
// certificate, so sharing it between routers shares nothing else.
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';

// A host has one set of authorities, or a few; the bound keeps a process that makes routers with ever new sets (a
// mistake, but a possible one) from keeping every context it ever made. Each fetcher also keeps the context it got
// (safe-fetch.ts), so a host with more sets than this still parses its roots once per fetcher, never per fetch.
const MAX_CONTEXTS = 8;
const contexts = new Map<string, SecureContext>();

/** The secure context trusting Node's root certificates and `ca` (PEM), made once per distinct `ca` in the process. */
export function secureContextFor(ca: readonly string[] | undefined): SecureContext {
  // No `ca` is Node's default store (which NODE_EXTRA_CA_CERTS extends); an empty list is the bundled roots alone.
  const key = ca === undefined ? 'default' : JSON.stringify(ca);
  let context = contexts.get(key);
  if (context) {
    // Most recently used last: the bound evicts the context unused for longest.
    contexts.delete(key);
  } else {
    context = createSecureContext(ca ? { ca: [...rootCertificates, ...ca] } : {});
    if (contexts.size >= MAX_CONTEXTS) contexts.delete(contexts.keys().next().value as string);
  }
  contexts.set(key, context);
  return context;
}
