// An issuer identifier as RFC 8414 §2 defines it, checked where an operator names one to trust (enterprise IdPs,
// workload platforms): an https URL with no query, fragment or credentials, kept exactly as written.

/** What is wrong with an issuer identifier, in words that follow its name, or undefined when it is one. */
export function issuerUrlProblem(issuer: unknown): string | undefined {
  if (typeof issuer !== 'string') return 'is not a string';
  if (!URL.canParse(issuer)) return 'is not an absolute URL';
  const url = new URL(issuer);
  // RFC 8414 §2; the ID-JAG extension §7.3 and SEP-1933 fetch its keys over TLS only.
  if (url.protocol !== 'https:') return 'must use https (RFC 8414 §2)';
  // An empty query or fragment ("https://idp.example?") leaves url.search and url.hash empty: the string decides.
  if (issuer.includes('#') || issuer.includes('?')) return 'must not have a query or fragment (RFC 8414 §2)';
  if (url.username || url.password) return 'must not carry credentials';
  return undefined;
}
