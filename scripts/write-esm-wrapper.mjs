// Writes dist/esm/<entry>.mjs (and its types) for each entry point: an ES module face over the CommonJS build, so
// that `import` and `require` share one copy of the library (one module state, one instanceof OAuthError).
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// Each entry point of package.json's "exports", with its CommonJS build; test/package/pack.test.ts checks they agree.
const ENTRIES = {
  index: '../lib/index.js',
  mcp: '../lib/mcp/index.js',
  postgres: '../lib/postgres/index.js',
  store: '../lib/store/index.js',
  pages: '../lib/pages/index.js',
  check: '../lib/check/index.js',
  testing: '../lib/testing/index.js',
  experimental: '../lib/experimental/index.js',
};
mkdirSync(new URL('../dist/esm/', import.meta.url), { recursive: true });
for (const [entry, target] of Object.entries(ENTRIES)) {
  const names = Object.keys(require(`../dist/esm/${target}`))
    .filter((name) => name !== '__esModule')
    .sort();
  writeFileSync(
    new URL(`../dist/esm/${entry}.mjs`, import.meta.url),
    // A types-only entry (store) has no names: an empty module, which still loads.
    names.length
      ? `import cjs from '${target}';\nexport const { ${names.join(', ')} } = cjs;\n`
      : 'export {};\n',
  );
  writeFileSync(new URL(`../dist/esm/${entry}.d.mts`, import.meta.url), `export * from '${target}';\n`);
}
