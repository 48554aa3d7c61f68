// Every ```ts and ```js block of README.md, docs/*.md, bench/README.md and example-app/README.md compiles against
// the package's source, in one TypeScript program. A block is a complete program unless the line before it is
// `<!-- fragment -->`: a fragment is part of a larger program, so the names it uses without declaring them are
// allowed, and every other error still fails. A block that copies a file of examples/ word for word is run instead,
// from the packed package, by test/package/pack.test.ts (the quick start: examples/minimal/server.mjs).
// Type-checking the package for the blocks takes some seconds of CPU, so `npm test` runs this file and the edit loop
// (`npm run test:fast`) does not; readme.test.ts holds the documentation's other checks.
import { documents, exampleCopied, parse, read, type CodeBlock } from '../helpers/readme-docs';
import { JAVASCRIPT, TYPESCRIPT, typeCheck } from '../helpers/readme-typecheck';

const DOCS = documents();

describe('code blocks that claim to run', () => {
  const code = DOCS.flatMap((doc) => parse(doc).blocks).filter((block) =>
    [...TYPESCRIPT, ...JAVASCRIPT].includes(block.lang),
  );
  const copies = code.flatMap((block) => {
    const file = exampleCopied(block);
    return file ? [[`${block.doc}:${block.line}`, file] as const] : [];
  });
  const blocks: CodeBlock[] = code.filter((block) => !exampleCopied(block));
  let errors: Map<string, string[]>;

  beforeAll(() => {
    errors = typeCheck(blocks);
  }, 60_000);

  test('there are blocks, and some are complete programs', () => {
    expect(blocks.length).toBeGreaterThan(5);
    expect(blocks.filter((block) => !block.fragment).length).toBeGreaterThan(0);
  });

  test.each(copies)(
    '%s copies %s, which test/package/pack.test.ts runs from the packed package',
    (_, file) => {
      expect(read('test/package/pack.test.ts')).toContain(`'${file}'`);
    },
  );

  test.each(
    blocks.map((block) => [`${block.doc}:${block.line}${block.fragment ? ' (fragment)' : ''}`, block]),
  )('%s compiles against the package', (_name, block) => {
    expect(errors.get(`${block.doc}:${block.line}`)).toEqual([]);
  });
});
