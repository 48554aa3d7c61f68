// Builds dist/ once before the tests that run the package as users install it (compat matrix, app processes).
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');

module.exports = function buildOnce() {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: join(__dirname, '..'), stdio: 'inherit' });
};
