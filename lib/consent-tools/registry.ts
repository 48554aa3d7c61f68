// Tool-aware consent: the consent page names, under each scope it asks for, the MCP tools that scope unlocks. The
// tools come from createMcpEndpoint's `toolScopes` (express-mcp-oauth/mcp), which registers them here when it is
// created, so a host configures its tools once. The root entry point never loads the MCP SDK: the MCP side describes
// its tools (titles, whether they change data) and this file only keeps what it registered.
//
// One registry per process, kept on globalThis under a registered symbol: a host that loads the root entry point as
// CommonJS and /mcp as ESM (or two copies of the package) still shares it. A process that serves two MCP endpoints
// shows, for a scope, the tools of both that need it.

/** One tool as the consent page shows it. */
export interface ConsentTool {
  name: string;
  /** The title the server gives it (MCP `title`, or `annotations.title`), if any. */
  title?: string;
  /** True when the server says it only reads (`annotations.readOnlyHint`); anything else is taken to change data. */
  readOnly: boolean;
  /** Every scope it needs (toolScopes), the first being the one it is listed under. */
  scopes: readonly string[];
}

/** What an MCP endpoint registers: its tools, described on first need. */
export interface ToolCatalogue {
  describe(): Promise<readonly ConsentTool[]>;
}

const KEY = Symbol.for('express-mcp-oauth.consent-tools');
const registry = ((globalThis as Record<symbol, unknown>)[KEY] ??=
  new Set<ToolCatalogue>()) as Set<ToolCatalogue>;

/** Adds an endpoint's tools to what consent pages show. */
export function registerToolCatalogue(catalogue: ToolCatalogue): void {
  registry.add(catalogue);
}

/** How long a consent page waits for a server to describe its tools before it shows the scopes alone. */
export const DESCRIBE_TIMEOUT_MS = 2_000;

/** Every registered tool, by name (the first catalogue to name a tool describes it); a failed catalogue adds none. */
export async function registeredTools(): Promise<ConsentTool[]> {
  const byName = new Map<string, ConsentTool>();
  const lists = await Promise.all(
    [...registry].map((catalogue) => withTimeout(catalogue.describe()).catch(() => [] as const)),
  );
  for (const list of lists) for (const tool of list) if (!byName.has(tool.name)) byName.set(tool.name, tool);
  return [...byName.values()];
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), DESCRIBE_TIMEOUT_MS);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
