// Discovery as a client does it: the 401's Bearer challenge, RFC 9728 resource metadata, then RFC 8414 authorization
// server metadata; and the loose JSON reading the driver uses for every answer of the server.
import { postInitialize } from './drive-mcp';
import type { Discovery, Json } from './drive-types';

/** The auth-param pairs of a `Bearer ...` challenge (RFC 9110 §11.2; quoted strings without escapes suffice here). */
function challengeParams(header: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [, name, quoted, token] of header.matchAll(/([A-Za-z_]+)=(?:"([^"]*)"|([^\s,]+))/g)) {
    params[name!] = quoted ?? token!;
  }
  return params;
}

export async function readJson(response: Response, what: string): Promise<Json> {
  const text = await response.text();
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new Error(`${what}: ${response.status}, not JSON: ${text.slice(0, 200)}`);
  }
}

/** An OAuth error answer (RFC 6749 §5.2, RFC 7591 §3.2.2) as an Error: the status, the code and its description. */
export function refusal(status: number, answer: Json): Error {
  return new Error(`${status} ${answer.error} ${answer.error_description ?? ''}`.trim());
}

/** RFC 9728 §5.1 from the 401, then the resource metadata, then RFC 8414's metadata of its first server. */
export async function discover(mcpUrl: URL): Promise<Discovery> {
  const unauthorized = await postInitialize(mcpUrl);
  if (unauthorized.status !== 401) throw new Error(`/mcp without a token: ${unauthorized.status}, not 401`);
  const header = unauthorized.headers.get('www-authenticate') ?? '';
  if (!/^Bearer\b/i.test(header)) throw new Error(`no Bearer challenge in the 401: "${header}"`);
  const challenge = challengeParams(header);
  if (!challenge.resource_metadata) throw new Error(`no resource_metadata in "${header}"`);
  const resource = await readJson(await fetch(challenge.resource_metadata), 'resource metadata');
  if (resource.resource !== mcpUrl.href) {
    throw new Error(`resource metadata names ${resource.resource}, not ${mcpUrl.href}`);
  }
  const issuer = new URL(resource.authorization_servers?.[0] ?? 'about:blank');
  // RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path.
  const path = issuer.pathname === '/' ? '' : issuer.pathname;
  const server = await readJson(
    await fetch(`${issuer.origin}/.well-known/oauth-authorization-server${path}`),
    'authorization server metadata',
  );
  if (server.issuer !== resource.authorization_servers[0]) {
    throw new Error(`authorization server metadata names issuer ${server.issuer}`);
  }
  return { challenge, resource, server };
}
