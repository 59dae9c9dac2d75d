#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against our C conformance client.
# Usage: run.sh <conformance-client binary>
# Installs Node 22 and the pinned suite into a cache outside the repository (reused across runs),
# runs every listed scenario, and fails unless every scored check is SUCCESS. INFO entries are the
# suite's log lines; SKIPPED marks what a protocol version does not exercise (e.g. initialize on
# 2026-07-28). Both are reported, neither fails.
set -euo pipefail

client=$(realpath "$1")
suite_version=0.2.0-alpha.12
node_version=22
cache=${MCP_CLIENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp_client}/conformance-$suite_version-node$node_version
marker=$cache/.installed

if [ ! -f "$marker" ]; then
  echo "conformance: installing node@$node_version and @modelcontextprotocol/conformance@$suite_version into $cache"
  mkdir -p "$cache"
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error "node@$node_version" \
      "@modelcontextprotocol/conformance@$suite_version" >/dev/null)
  "$cache/node_modules/.bin/node" --version | grep -q "^v$node_version\." || { echo "node $node_version did not install"; exit 1; }
  touch "$marker"
fi
node=$cache/node_modules/.bin/node
suite=$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js

scenarios=(
  "2026-07-28 tools_call" "2026-07-28 request-metadata" "2026-07-28 sep-2322-client-request-state"
  "2026-07-28 http-standard-headers" "2026-07-28 http-custom-headers" "2026-07-28 http-invalid-tool-headers"
  "2026-07-28 json-schema-ref-no-deref" "2026-07-28 json-schema-2020-12-preservation"
  "2025-11-25 initialize" "2025-11-25 tools_call" "2025-11-25 elicitation-sep1034-client-defaults"
  "2025-11-25 sse-retry" "2025-11-25 json-schema-2020-12-preservation"
  "2025-06-18 initialize" "2025-06-18 tools_call"
)
[ -n "${MCP_CONFORMANCE_ONLY:-}" ] && scenarios=("$MCP_CONFORMANCE_ONLY")

out=$(mktemp -d "${TMPDIR:-/tmp}/mcp-conformance.XXXXXX")
trap 'rm -rf "$out"' EXIT
passed=0 failed=0
for entry in "${scenarios[@]}"; do
  read -r version scenario <<<"$entry"
  dir=$out/$version/$scenario
  mkdir -p "$dir"
  PATH=$(dirname "$node"):$PATH "$node" "$suite" client --command "$client" --scenario "$scenario" \
    --spec-version "$version" --timeout 30000 -o "$dir" >"$dir/runner.log" 2>&1 || true
  verdict=$("$node" -e '
    const fs = require("fs"), path = require("path");
    const files = [];
    (function walk(d) { for (const f of fs.readdirSync(d)) { const p = path.join(d, f);
      if (fs.statSync(p).isDirectory()) walk(p); else if (f === "checks.json") files.push(p); } })(process.argv[1]);
    if (files.length === 0) { console.log("FAIL no checks.json"); process.exit(0); }
    const checks = files.flatMap(f => JSON.parse(fs.readFileSync(f, "utf8")));
    const bad = checks.filter(c => !["SUCCESS", "SKIPPED", "INFO"].includes(c.status));
    const count = s => checks.filter(c => c.status === s).length;
    console.log(bad.length === 0 && count("SUCCESS") > 0
      ? `PASS ${count("SUCCESS")} SUCCESS, ${count("SKIPPED")} SKIPPED, ${count("INFO")} INFO`
      : "FAIL " + bad.map(c => `${c.id}=${c.status}${c.errorMessage ? " (" + c.errorMessage + ")" : ""}`).join("; "));
  ' "$dir")
  case $verdict in
    PASS*) passed=$((passed + 1)); echo "ok - $version $scenario: ${verdict#PASS }" ;;
    *) failed=$((failed + 1)); echo "not ok - $version $scenario: ${verdict#FAIL }"
       sed 's/^/    | /' "$dir/runner.log" | tail -n 40
       find "$dir" -name stderr.txt -exec sed 's/^/    stderr| /' {} \; | tail -n 40 ;;
  esac
done
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
