// `npm run docs` (TypeDoc over every entry point, warnings as errors): every type a public signature names is
// exported by some entry point, so the reference documents it, and every {@link} resolves.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');

test('TypeDoc documents every entry point without a warning', () => {
  const out = mkdtempSync(join(tmpdir(), 'mcp-oauth-typedoc-'));
  try {
    // treatWarningsAsErrors (typedoc.json): a type referenced but not exported fails the run, with its name.
    execFileSync(join(ROOT, 'node_modules/.bin/typedoc'), ['--out', out], { cwd: ROOT, stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout: Buffer; stderr: Buffer };
    throw new Error(`typedoc failed:\n${stdout}\n${stderr}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 120_000);

test("TypeDoc's entry points are the package's", () => {
  const read = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));
  const entries = Object.keys((read('package.json') as { exports: object }).exports)
    .filter((key) => key !== './package.json')
    .map((key) => (key === '.' ? 'lib/index.ts' : `lib/${key.slice(2)}/index.ts`));
  expect([...(read('typedoc.json') as { entryPoints: string[] }).entryPoints].sort()).toEqual(entries.sort());
});
