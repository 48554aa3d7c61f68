// Type-checks the documentation's code blocks in one TypeScript program, against the package's source: each block is
// a module of its own (`.mts` for TypeScript, `.mjs` for JavaScript, checked as with checkJs), and
// `express-mcp-oauth` resolves to lib/index.ts through the paths of tsconfig.json.
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT, type CodeBlock } from './readme-docs';

export const TYPESCRIPT = ['ts', 'typescript', 'mts'];
export const JAVASCRIPT = ['js', 'javascript', 'mjs'];

/**
 * What a fragment may leave undefined: names it uses without declaring them (2304, 2552), a shorthand property of
 * such a name (18004), and the implicit any of a callback handed to one (7005, 7006, 7031). Every other error counts.
 */
const FRAGMENT_ALLOWED = new Set([2304, 2552, 18004, 7005, 7006, 7031]);

function compilerOptions(): ts.CompilerOptions {
  const configPath = join(ROOT, 'tsconfig.json');
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, ROOT, undefined, configPath);
  return {
    ...parsed.options,
    noEmit: true,
    allowJs: true,
    checkJs: true,
    types: ['node'],
    declaration: false,
    sourceMap: false,
    incremental: false,
  };
}

/** The errors of each block, keyed as `doc:line`, as `doc:line: TSnnnn message` lines (none: an empty list). */
export function typeCheck(blocks: readonly CodeBlock[]): Map<string, string[]> {
  const files = new Map<string, { block: CodeBlock; text: string }>();
  for (const block of blocks) {
    const extension = TYPESCRIPT.includes(block.lang) ? 'mts' : 'mjs';
    const name = join(ROOT, '.readme-blocks', `${block.doc.replace(/\W/g, '_')}_${block.line}.${extension}`);
    // `export {}` makes every block a module, so that blocks do not share top-level names.
    files.set(name, { block, text: `${block.text}\nexport {};\n` });
  }
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  host.readFile = (name) => files.get(name)?.text ?? readFile.call(host, name);
  host.getSourceFile = (name, languageVersion, ...rest) => {
    const file = files.get(name);
    if (file) return ts.createSourceFile(name, file.text, languageVersion, true);
    return getSourceFile.call(host, name, languageVersion, ...rest);
  };
  const program = ts.createProgram({ rootNames: [...files.keys()], options, host });

  const result = new Map<string, string[]>();
  for (const [name, { block }] of files) {
    const source = program.getSourceFile(name)!;
    const diagnostics = [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ];
    result.set(
      `${block.doc}:${block.line}`,
      diagnostics
        .filter((diagnostic) => !(block.fragment && FRAGMENT_ALLOWED.has(diagnostic.code)))
        .map((diagnostic) => {
          const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
          const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
          return `${block.doc}:${block.line + 1 + line}: TS${diagnostic.code} ${message}`;
        }),
    );
  }
  return result;
}
