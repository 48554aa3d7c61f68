// What test/unit/readme.test.ts reads in the documentation: code blocks, links, headings' anchors, and the
// environment variables the repository's code reads.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const ROOT = join(__dirname, '../..');
export const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The documents that are checked, relative to the root. */
export function documents(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs, 'bench/README.md', 'example-app/README.md'];
}

/** The marker, alone on the line before a fence, of a block that is part of a larger program. */
const FRAGMENT_MARKER = '<!-- fragment -->';

export interface CodeBlock {
  doc: string;
  /** The 1-based line of the opening fence. */
  line: number;
  lang: string;
  text: string;
  fragment: boolean;
}

/** The fenced code blocks of a document, and its text with every block blanked out (for links and prose). */
export function parse(doc: string): { blocks: CodeBlock[]; prose: string } {
  const lines = read(doc).split('\n');
  const blocks: CodeBlock[] = [];
  const prose: string[] = [];
  let open: { fence: string; line: number; lang: string; body: string[]; fragment: boolean } | undefined;
  lines.forEach((line, index) => {
    const fence = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (open) {
      if (fence && fence[1]!.startsWith(open.fence) && line.trim() === fence[1]) {
        blocks.push({
          doc,
          line: open.line,
          lang: open.lang,
          text: open.body.join('\n'),
          fragment: open.fragment,
        });
        open = undefined;
      } else open.body.push(line);
      prose.push('');
      return;
    }
    if (fence) {
      const before = lines.slice(0, index).reverse();
      const previous = before.find((text) => text.trim() !== '');
      open = {
        fence: fence[1]!,
        line: index + 1,
        lang: fence[2]!.toLowerCase(),
        body: [],
        fragment: previous?.trim() === FRAGMENT_MARKER,
      };
      prose.push('');
      return;
    }
    prose.push(line);
  });
  if (open) throw new Error(`${doc}:${open.line}: a code block that never closes`);
  return { blocks, prose: prose.join('\n') };
}

/** Relative link targets in a document's prose: Markdown links and images, and HTML src/href attributes. */
export function relativeLinks(doc: string): string[] {
  const { prose } = parse(doc);
  const targets = [
    ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!),
    ...[...prose.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]!),
  ];
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const match of markdown.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = match[1]!
      .toLowerCase()
      .replace(/<[^>]*>/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/**
 * What is wrong with one relative link of `doc`: a target outside the repository, a missing file, or an anchor that
 * names no heading of the Markdown file it points at. Undefined when it is fine.
 */
export function brokenLink(doc: string, target: string): string | undefined {
  const [path, anchor] = target.split('#') as [string, string | undefined];
  const file = path === '' ? join(ROOT, doc) : resolve(ROOT, dirname(doc), decodeURI(path));
  if (relative(ROOT, file).startsWith('..')) return `${target} points outside the repository`;
  if (!existsSync(file)) return `${target}: no such file`;
  if (anchor && file.endsWith('.md') && !anchors(parse(relative(ROOT, file)).prose).has(anchor))
    return `${target}: no heading with the anchor #${anchor}`;
  return undefined;
}

/** The source files under a directory (or the file itself), without dependencies and build output. */
function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  if (statSync(dir).isFile()) return [dir];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return ['node_modules', 'dist', 'coverage'].includes(entry.name) ? [] : sourceFiles(path);
    return /\.(ts|mts|js|mjs|cjs|sh)$/.test(entry.name) || !entry.name.includes('.') ? [path] : [];
  });
}

/** The environment variables read by the code of `dirs` (relative to the root): env.NAME, env['NAME'], destructuring, $NAME in shell. */
export function variablesReadIn(dirs: readonly string[]): Set<string> {
  const found = new Set<string>();
  for (const file of dirs.flatMap((dir) => sourceFiles(join(ROOT, dir)))) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g))
      found.add(match[1] ?? match[2]!);
    for (const match of text.matchAll(/\{([^{}]*)\}\s*=\s*(?:process\.)?env\b/g))
      for (const name of match[1]!.matchAll(/\b([A-Z][A-Z0-9_]*)\b/g)) found.add(name[1]!);
    if (/\.sh$/.test(file) || !/\.\w+$/.test(file))
      for (const match of text.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)) found.add(match[1]!);
  }
  return found;
}

/** The upper-case constants the code of `dirs` declares (GLOBAL_UNICAST): a document may name them as code. */
export function constantsDeclaredIn(dirs: readonly string[]): Set<string> {
  const found = new Set<string>();
  for (const file of dirs.flatMap((dir) => sourceFiles(join(ROOT, dir))))
    for (const match of readFileSync(file, 'utf8').matchAll(
      /\b(?:const|let|var|function|class|enum)\s+([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/g,
    ))
      found.add(match[1]!);
  return found;
}

/**
 * The file under examples/ that a block copies word for word, if any. test/package/pack.test.ts runs those files
 * from the packed package, which says more than compiling them.
 */
export function exampleCopied(block: CodeBlock): string | undefined {
  const examples = sourceFiles(join(ROOT, 'examples')).map((file) => relative(ROOT, file));
  return examples.find((file) => read(file) === `${block.text}\n`);
}

/** Every place of the repository whose code reads environment variables a document may name. */
export const CODE_DIRS = [
  'lib',
  'example-app',
  'examples',
  'bench',
  'scripts',
  'test',
  '.ci',
  'stryker.config.mjs',
];
/** The directories the reference app's commands (`npm start`, `npm run user:create`, ...) run. */
export const EXAMPLE_APP_DIRS = ['example-app'];
/** Read by Node itself, not by this repository's code. */
export const NODE_OWN = ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS'];
