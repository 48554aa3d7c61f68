// Which kind of client an id names, from the id alone: the one rule every room that treats document clients apart
// shares (cimd, the consent form, the client lookup, step-up's grant replacement).

/** Whether a client_id is meant as a metadata document URL (dynamically registered ids never hold a colon). */
export function isClientIdUrl(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}
