// example-app/README.md lists every environment variable the app reads, in one table: this test reads the code for
// the variables (env.NAME, env['NAME'], process.env.NAME) and fails on one that the table misses, or that the
// table lists and nothing reads.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const APP = join(__dirname, '../../example-app');
/** Read by Node itself, not by the app's code, and documented because they matter to it. */
const NODE_OWN = ['NODE_EXTRA_CA_CERTS'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function variablesInCode(): Set<string> {
  const found = new Set<string>();
  for (const file of sources(APP)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g))
      found.add(match[1] ?? match[2]!);
  }
  return found;
}

function variablesInTable(): string[] {
  const readme = readFileSync(join(APP, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('| variable'));
  const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
  return rows.map((row) => /^\|\s*`([A-Z][A-Z0-9_]*)`/.exec(row)?.[1] ?? `unreadable row: ${row}`);
}

test('the table of example-app/README.md names exactly the variables the app reads', () => {
  const inCode = variablesInCode();
  const inTable = variablesInTable();
  expect(inCode.size).toBeGreaterThan(15);
  expect(new Set(inTable).size).toBe(inTable.length);
  expect([...inTable].filter((name) => !NODE_OWN.includes(name)).sort()).toEqual([...inCode].sort());
});
