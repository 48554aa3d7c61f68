// The Streamable HTTP rules a stateless POST must meet before any server sees it, checked once here for both paths
// (the lean transport and the SDK's): what the client accepts, the protocol version it speaks, and whether that
// version allows a batch. The SDK's transport checks the first two the same way and in the same words.
import type { IncomingMessage } from 'node:http';
import { McpRequestError } from './read-body';

/** The version a request without MCP-Protocol-Version is taken to speak (MCP 2025-06-18, transports). */
const DEFAULT_VERSION = '2025-03-26';
/** The first version without JSON-RPC batching (MCP 2025-06-18 changelog: "Remove support for JSON-RPC batching"). */
const NO_BATCHES_FROM = '2025-06-18';

/**
 * Refuses a client that does not accept both JSON and an event stream (MCP Streamable HTTP: the client MUST list
 * both). A list, so a substring test, as the SDK's transport reads it.
 */
export function checkAccept(req: IncomingMessage): void {
  const accept = req.headers.accept;
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream'))
    throw new McpRequestError(
      406,
      -32000,
      'Not Acceptable: Client must accept both application/json and text/event-stream',
    );
}

/**
 * Checks the messages' protocol version: an initialize request comes alone and names its version; any other request
 * sends a supported MCP-Protocol-Version or none (then 2025-03-26). A batch is refused from 2025-06-18 on.
 */
export function checkVersion(
  req: IncomingMessage,
  body: unknown,
  messages: readonly unknown[],
  supported: readonly string[],
): void {
  const initialize = messages.find((message) => (message as { method?: unknown }).method === 'initialize');
  let version: unknown;
  // supported[0] is the SDK's latest version (SUPPORTED_PROTOCOL_VERSIONS lists it first).
  if (initialize !== undefined) {
    if (messages.length > 1)
      throw new McpRequestError(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    // The version the server will answer with: the one asked for when it supports it, else its latest.
    const asked = (initialize as { params?: { protocolVersion?: unknown } }).params?.protocolVersion;
    version = supported.includes(asked as string) ? asked : supported[0];
  } else {
    // Node joins a repeated header with ', ', which names no version: refused, as the SDK's Headers would have it.
    const raw = req.headers['mcp-protocol-version'];
    const header = Array.isArray(raw) ? raw.join(', ') : raw;
    if (header !== undefined && !supported.includes(header))
      throw new McpRequestError(
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${header} (supported versions: ${supported.join(', ')})`,
      );
    version = header ?? DEFAULT_VERSION;
  }
  if (Array.isArray(body) && (version as string) >= NO_BATCHES_FROM)
    throw new McpRequestError(
      400,
      -32600,
      `Invalid Request: protocol version ${version} has no JSON-RPC batches (removed in ${NO_BATCHES_FROM}); send one message per request.`,
    );
}

/** The `_meta` key by which a 2026-07-28 request claims its revision (the per-request envelope). */
const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

/**
 * Whether a request may be 2026-07-28 traffic, on its face: it names a protocol version other than the pool's, or a
 * message carries the envelope's version claim. When not, the SDK 2.x would route it to 2025-era serving too
 * (`isLegacyRequest`: no envelope claim and no modern header), so the endpoint need not ask it: a test holds the two
 * to that for every body the scope gate admits (one it refuses reaches neither era). When it may be, the SDK decides.
 */
export function mayBeModern(
  req: IncomingMessage,
  messages: readonly unknown[],
  poolVersions: readonly string[],
) {
  const raw = req.headers['mcp-protocol-version'];
  if (raw !== undefined && (Array.isArray(raw) || !poolVersions.includes(raw))) return true;
  return messages.some((message) => {
    const meta = (message as { params?: { _meta?: unknown } } | null)?.params?._meta;
    return typeof meta === 'object' && meta !== null && PROTOCOL_VERSION_META in meta;
  });
}
