// The documentation says only what is true of the repository:
// - README.md: the quick start is examples/minimal/server.mjs word for word, the two commands of a fresh clone are in
//   its first 15 lines, its Development lines name `npm test` and `npm run test:fast`, it names every export of the
//   package and of express-mcp-oauth/testing, and it stays under 2,500 words (details live in docs/);
// - README.md, docs/*.md, bench/README.md and example-app/README.md: every relative link or image points at a file of
//   the repository (and a link's #anchor at one of its headings), nothing cites ../shared or a path outside the
//   repository, every `npm run X` names a script of package.json, and every environment variable named (`NAME` in
//   backticks, NAME=value in a shell block) is one the code reads (the reference app's own for `npm start` and its
//   commands);
// - and readme-code.test.ts: every ```ts and ```js block of those documents compiles against the package's source.
import * as library from '../../lib';
import * as check from '../../lib/check';
import * as experimental from '../../lib/experimental';
import * as mcp from '../../lib/mcp';
import * as pages from '../../lib/pages';
import * as postgres from '../../lib/postgres';
import * as testing from '../../lib/testing';
import {
  CODE_DIRS,
  constantsDeclaredIn,
  documents,
  EXAMPLE_APP_DIRS,
  NODE_OWN,
  parse,
  read,
  relativeLinks,
  brokenLink,
  variablesReadIn,
} from '../helpers/readme-docs';

const readme = read('README.md');
const DOCS = documents();
// Every entry point's runtime names (express-mcp-oauth/store has types alone).
const EXPORTS = [library, check, experimental, mcp, pages, postgres, testing].flatMap((entry) =>
  Object.keys(entry),
);

describe('README.md', () => {
  test('the quick start is examples/minimal/server.mjs, word for word', () => {
    expect(readme).toContain('```js\n' + read('examples/minimal/server.mjs'));
  });

  test('the two commands of a fresh clone are near the top, and the install command is there', () => {
    const top = readme.split('\n').slice(0, 15).join('\n');
    expect(top).toContain('npm ci && npm start');
    expect(top).toContain('npm test');
    expect(readme).toContain('npm install express-mcp-oauth');
  });

  test('its Development lines name the whole suite and the edit loop', () => {
    const development = readme.slice(readme.indexOf('\n## Development'));
    expect(development).toContain('`npm test`');
    expect(development).toContain('`npm run test:fast`');
  });

  test('names every export of every entry point of the package', () => {
    expect(EXPORTS.filter((name) => !new RegExp(`\\b${name}\\b`).test(readme))).toEqual([]);
  });

  test('stays under 2,500 words, as wc -w counts them', () => {
    expect(readme.split(/\s+/).filter(Boolean).length).toBeLessThan(2500);
  });
});

test('docs/pages.md lists every message of the built-in pages with its English words', () => {
  const rows = read('docs/pages.md').split('\n');
  for (const [key, text] of Object.entries(pages.ENGLISH_MESSAGES)) {
    const row = rows.find((line) => line.startsWith(`| \`${key}\` `));
    expect([key, row?.includes(text)]).toEqual([key, true]);
  }
});

describe.each(DOCS)('%s', (doc) => {
  const text = read(doc);
  const { blocks, prose } = parse(doc);

  test('points at nothing outside the repository', () => {
    expect(text).not.toMatch(/\.\.\/shared|\]\(\.\.\/\.\.\/|\/work\//);
  });

  test('every relative link and image resolves to a file of the repository', () => {
    const broken = relativeLinks(doc).flatMap((target) => brokenLink(doc, target) ?? []);
    expect(broken).toEqual([]);
  });

  test('every `npm run X` names a script of package.json', () => {
    const scripts = Object.keys(JSON.parse(read('package.json')).scripts);
    const named = [...text.matchAll(/\bnpm (?:run(?:-script)? ([\w:.-]+)|(test|start)\b)/g)].map(
      (match) => match[1] ?? match[2]!,
    );
    expect(named.filter((name) => !scripts.includes(name))).toEqual([]);
  });

  test('every environment variable it names is read by the code', () => {
    const inCode = variablesReadIn(CODE_DIRS);
    const inApp = variablesReadIn(EXAMPLE_APP_DIRS);
    const constants = constantsDeclaredIn(CODE_DIRS);
    const unknown: string[] = [];
    const known = (name: string, where: Set<string>) =>
      NODE_OWN.includes(name) || EXPORTS.includes(name) || where.has(name);
    // `NAME` or `NAME=value` in the prose: a variable, unless it is an export (DEFAULT_PATHS) or a constant of the
    // code (GLOBAL_UNICAST).
    for (const match of prose.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)([`=])/g))
      if (!known(match[1]!, inCode) && !(match[2] === '`' && constants.has(match[1]!)))
        unknown.push(match[1]!);
    // NAME=value in a shell block: read by what the command runs (the reference app for its npm commands).
    for (const block of blocks.filter((b) => ['sh', 'bash', 'shell', 'console'].includes(b.lang))) {
      for (const line of block.text.split('\n')) {
        const runsApp = /\bnpm (?:start|run (?:start|user:create|keys:rotate))\b/.test(line);
        for (const match of line.matchAll(/(?:^|[\s;&|(])(?:export\s+)?([A-Z][A-Z0-9_]*)=/g))
          if (!known(match[1]!, runsApp ? inApp : inCode)) unknown.push(`${match[1]} (line ${block.line})`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
