// Builds dist/ before the tests that run the package as users install it (the packed package, the compat matrix, the
// app as a process), but only when dist/ is missing or older than its sources (scripts/ensure-built.mjs, the rule
// `npm start` uses): a second `npm test` with nothing changed does not build again.
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');

module.exports = function buildIfStale() {
  execFileSync(process.execPath, [join(__dirname, '../scripts/ensure-built.mjs')], { stdio: 'inherit' });
};
