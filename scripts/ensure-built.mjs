// Builds dist/ when it is missing or older than any of its sources, so that `npm start` works right after `npm ci`
// and `npm test` (test/global-setup.js) builds only when something changed since the last build.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The newest change under `dir`: a .ts file written, or a folder's entries changed (a source deleted or renamed). */
const newest = (dir) =>
  readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isDirectory() || (entry.isFile() && entry.name.endsWith('.ts')))
    .reduce(
      (latest, entry) => Math.max(latest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs),
      statSync(join(root, dir)).mtimeMs,
    );
/** What the build reads besides the sources: a change to one of them changes dist/ too. */
const BUILD_FILES = ['tsconfig.json', 'tsconfig.build.json', 'scripts/write-esm-wrapper.mjs'];
/** Written last by `npm run build`: its time is when the build finished. */
const marker = join(root, 'dist/esm/index.mjs');

/** Whether dist/ is missing or older than a source file (lib, example-app, bench) or a build setting. */
export function buildIsStale() {
  const builtAt = existsSync(marker) ? statSync(marker).mtimeMs : 0;
  const sources = Math.max(
    newest('lib'),
    newest('example-app'),
    newest('bench'),
    ...BUILD_FILES.map((file) => statSync(join(root, file)).mtimeMs),
  );
  return builtAt < sources;
}

/** Builds dist/ if it is stale; returns whether it built. */
export function ensureBuilt() {
  if (!buildIsStale()) return false;
  console.error('Building dist/ ...');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  return true;
}

// Run as a script (`node scripts/ensure-built.mjs`), not imported.
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) ensureBuilt();
