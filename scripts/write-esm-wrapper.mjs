// Writes dist/esm/index.mjs (and its types): an ES module face over the CommonJS build, so that `import` and
// `require` share one copy of the library (one module state, one instanceof OAuthError).
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const names = Object.keys(require('../dist/lib/index.js'))
  .filter((name) => name !== '__esModule')
  .sort();
mkdirSync(new URL('../dist/esm/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('../dist/esm/index.mjs', import.meta.url),
  `import cjs from '../lib/index.js';\nexport const { ${names.join(', ')} } = cjs;\n`,
);
writeFileSync(new URL('../dist/esm/index.d.mts', import.meta.url), `export * from '../lib/index.js';\n`);
