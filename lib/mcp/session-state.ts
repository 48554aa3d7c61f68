// A pooled server serves one caller after another, so nothing one caller told it may reach the next. The SDK's
// Server keeps what `initialize` said (the client's name, version and capabilities) and the `logging/setLevel`
// level after close(): with a pool, the next user's tools would see the previous user's client and capabilities,
// and send it log messages at the level another user chose. That state is per session, and a stateless request is a
// session of its own, so it is cleared when a server is given back.

/** The per-session fields of the SDK's Server (`@modelcontextprotocol/sdk` 1.x `server/index.js`). */
interface SessionFields {
  _clientCapabilities?: unknown;
  _clientVersion?: unknown;
  _loggingLevels?: { clear(): void };
}

/** Forgets what the last caller's initialize and setLevel told `server` (an McpServer or a low-level Server). */
export function forgetSession(server: object): void {
  const low = ((server as { server?: object }).server ?? server) as SessionFields;
  if ('_clientCapabilities' in low) low._clientCapabilities = undefined;
  if ('_clientVersion' in low) low._clientVersion = undefined;
  low._loggingLevels?.clear();
}
