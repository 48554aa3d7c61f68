// What the consent page lists: the scopes it asks about (with a checkbox each) and those allowed before (kept), each
// with the tools it unlocks. A tool is listed under the first scope `toolScopes` names for it, and only when the page
// can give it every scope it needs; `needs` are the checkboxes it also depends on, so that unticking one hides it
// (views/consent.ejs) rather than leaving a tool on the page the person just took away.
import type { ConsentTool } from './registry';

/** A tool under its scope on the consent page. */
interface ConsentPageTool {
  name: string;
  /** The server's title; the page shows the language's own title, this, or the name (pages/render.ts). */
  title?: string;
  readOnly: boolean;
  /** The positions, among the scopes asked, of every scope asked that the tool needs. */
  needs: number[];
}

/** A scope on the consent page. */
export interface ConsentPageScope {
  name: string;
  description: string;
  tools: ConsentPageTool[];
}

export function consentScopes(
  asked: readonly string[],
  before: readonly string[],
  descriptions: Readonly<Record<string, string>>,
  tools: readonly ConsentTool[],
): { scopes: ConsentPageScope[]; allowedScopes: ConsentPageScope[] } {
  const reachable = new Set([...asked, ...before]);
  const under = new Map<string, ConsentPageTool[]>();
  for (const tool of tools) {
    const [home] = tool.scopes;
    if (home === undefined || !tool.scopes.every((scope) => reachable.has(scope))) continue;
    const needs = tool.scopes.map((scope) => asked.indexOf(scope)).filter((position) => position >= 0);
    const entry: ConsentPageTool = {
      name: tool.name,
      ...(tool.title === undefined ? {} : { title: tool.title }),
      readOnly: tool.readOnly,
      needs: [...new Set(needs)],
    };
    under.set(home, [...(under.get(home) ?? []), entry]);
  }
  const scope = (name: string): ConsentPageScope => ({
    name,
    // Own properties only: a scope named "constructor" must not read Object's.
    description: Object.hasOwn(descriptions, name) ? descriptions[name]! : name,
    tools: under.get(name) ?? [],
  });
  return { scopes: asked.map(scope), allowedScopes: before.map(scope) };
}
