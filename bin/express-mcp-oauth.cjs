#!/usr/bin/env node
// `express-mcp-oauth check <mcp url>`: whether an MCP client could connect to that URL, and what to fix if not.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const cli = join(__dirname, '../dist/lib/check/cli.js');
if (!existsSync(cli)) {
  // A checkout after `npm ci` has no dist/ yet: build it first, as `npm start` does. A published package has it.
  require('node:child_process').execFileSync(
    process.execPath,
    [join(__dirname, '../scripts/ensure-built.mjs')],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}
require(cli)
  .runCli(process.argv.slice(2))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      console.error(error);
      process.exitCode = 2;
    },
  );
