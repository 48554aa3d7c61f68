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
/** Each grant's newest refresh token goes back in the queue when its response arrives: rotation as clients do it. */
export const refreshing = (fixtures: Fixtures): RequestSpec[] => {
  const queue = [...fixtures.refreshTokens];
  return [
    {
      method: 'POST',
      path: '/v1/oauth/token',
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
export const redeeming = (fixtures: Fixtures): RequestSpec[] => {
  let next = 0;
  const redirect = encodeURIComponent(fixtures.redirectUri);
  return [
    {
      method: 'POST',
      path: '/v1/oauth/token',
      headers: form,
      setupRequest: (req) => ({
        ...req,
        body: `grant_type=authorization_code&client_id=${fixtures.clientId}&code=${fixtures.codes[next++]}&redirect_uri=${redirect}&code_verifier=${VERIFIER}`,
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
export const toolCall: RequestSpec[] = [
  {
    method: 'POST',
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_company', arguments: {} },
    }),
  },
];

export const withAuth = (requests: RequestSpec[], token: string): RequestSpec[] =>
  requests.map((request) => ({
    ...request,
    headers: { ...request.headers, authorization: `Bearer ${token}` },
  }));
