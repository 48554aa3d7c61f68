// README.md is for people who install the package: its quick start is the example CI runs, it names every export,
// and it points at nothing outside the repository.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as library from '../../lib';
import * as testing from '../../lib/testing';

const ROOT = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const readme = read('README.md');

test('the quick start is examples/minimal/server.mjs, word for word', () => {
  expect(readme).toContain('```js\n' + read('examples/minimal/server.mjs'));
});

test('the two commands of a fresh clone are near the top', () => {
  const top = readme.split('\n').slice(0, 15).join('\n');
  expect(top).toContain('npm ci && npm start');
  expect(top).toContain('npm test');
  expect(readme).toContain('npm install express-mcp-oauth');
});

test.each([...Object.keys(library), ...Object.keys(testing)])('the README names the export %s', (name) => {
  expect(readme).toContain(name);
});

test.each(['README.md', 'example-app/README.md', 'bench/README.md'])(
  '%s points at nothing outside the repository',
  (path) => {
    expect(read(path)).not.toMatch(/\.\.\/shared|\]\(\.\.\//);
  },
);
