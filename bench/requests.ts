// The requests each bench scenario sends: static ones, and stateful ones (rotation, single-use codes).
import { VERIFIER, type Fixtures } from './fixtures';
import type { RequestSpec } from './load';

export const form = { 'content-type': 'application/x-www-form-urlencoded' };
/** The same request to the same app's route without the bearer check. */
export const open = (token: string): RequestSpec[] => [
  { method: 'POST', path: '/open', headers: { authorization: `Bearer ${token}` } },
];
export const bearer = (token: string): RequestSpec[] => [
  { method: 'POST', path: '/data', headers: { authorization: `Bearer ${token}` } },
];
export const cycling = (tokens: string[]): RequestSpec[] => {
  let next = 0;
  return [
    {
      method: 'POST',
      path: '/data',
      setupRequest: (req) => ({
        ...req,
        headers: { authorization: `Bearer ${tokens[next++ % tokens.length]}` },
      }),
    },
  ];
};
type TokenFixtures = { tokenPath?: string };
/**
 * Each grant's newest refresh token goes back in the queue when its response arrives: rotation as clients do it.
 * The queue is `fixtures.refreshTokens` itself, so a later row continues from the tokens the earlier one left.
 */
export const refreshing = (
  fixtures: Pick<Fixtures, 'clientId' | 'refreshTokens'> & TokenFixtures,
): RequestSpec[] => {
  const queue = fixtures.refreshTokens;
  return [
    {
      method: 'POST',
      path: fixtures.tokenPath ?? '/v1/oauth/token',
      headers: form,
      setupRequest: (req) => ({
        ...req,
        body: `grant_type=refresh_token&client_id=${fixtures.clientId}&refresh_token=${queue.shift()}`,
      }),
      onResponse: (status, body) => {
        if (status === 200) queue.push(JSON.parse(body).refresh_token);
      },
    },
  ];
};
/** Each code is used once across every row that redeems from the same fixtures (`codeCursor` is shared). */
export const redeeming = (
  fixtures: Pick<Fixtures, 'clientId' | 'codes' | 'redirectUri' | 'codeCursor'> & TokenFixtures,
): RequestSpec[] => {
  const cursor = fixtures.codeCursor;
  const redirect = encodeURIComponent(fixtures.redirectUri);
  return [
    {
      method: 'POST',
      path: fixtures.tokenPath ?? '/v1/oauth/token',
      headers: form,
      setupRequest: (req) => ({
        ...req,
        body: `grant_type=authorization_code&client_id=${fixtures.clientId}&code=${fixtures.codes[cursor.next++]}&redirect_uri=${redirect}&code_verifier=${VERIFIER}`,
      }),
    },
  ];
};
export const registering: RequestSpec[] = [
  {
    method: 'POST',
    path: '/v1/oauth/register',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Bench',
      redirect_uris: ['https://client.example/cb'],
      token_endpoint_auth_method: 'none',
    }),
  },
];
export const cryptoOnlyRequests: RequestSpec[] = [
  { method: 'POST', path: '/op', headers: form, body: 'grant_type=refresh_token&refresh_token=x' },
];
const mcpHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};
const rpc = (method: string, params?: unknown, path = '/mcp'): RequestSpec => ({
  method: 'POST',
  path,
  headers: mcpHeaders,
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) }),
});
export const mcpPing: RequestSpec[] = [rpc('ping')];
export const listClients: RequestSpec[] = [rpc('tools/call', { name: 'list_clients', arguments: {} })];
/** A mix for the memory run: the calls a session makes, and refusals. */
export const mcpMix = (token: string, narrowToken: string): RequestSpec[] => [
  ...withAuth([rpc('ping'), rpc('tools/list')], token),
  ...withAuth([rpc('tools/call', { name: 'list_clients', arguments: { limit: 5 } })], token),
  ...withAuth([rpc('tools/call', { name: 'get_company', arguments: {} })], token),
  ...withAuth([rpc('tools/call', { name: 'list_invoices', arguments: {} })], token),
  // 403 insufficient_scope, and 401 for a token that is not one.
  ...withAuth([rpc('tools/call', { name: 'list_clients', arguments: {} })], narrowToken),
  ...withAuth([rpc('ping')], 'not-a-token'),
];

export const withAuth = (requests: RequestSpec[], token: string): RequestSpec[] =>
  requests.map((request) => ({
    ...request,
    headers: { ...request.headers, authorization: `Bearer ${token}` },
  }));
