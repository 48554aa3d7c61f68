// Builds dist/ when it is missing or older than any source file, so `npm start` works right after `npm ci`.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const newest = (dir) =>
  readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .reduce(
      (latest, entry) => Math.max(latest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs),
      0,
    );
const marker = join(root, 'dist/esm/index.mjs');
const builtAt = existsSync(marker) ? statSync(marker).mtimeMs : 0;
if (builtAt < Math.max(newest('lib'), newest('example-app'), newest('bench'))) {
  console.error('Building dist/ ...');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
}
