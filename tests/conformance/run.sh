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
  # Authorization: every auth/* client scenario at every version `list --client` gives it.
  "2026-07-28 auth/metadata-default" "2026-07-28 auth/metadata-var1" "2026-07-28 auth/metadata-var2"
  "2026-07-28 auth/metadata-var3" "2026-07-28 auth/basic-cimd" "2026-07-28 auth/pre-registration"
  "2026-07-28 auth/scope-from-www-authenticate" "2026-07-28 auth/scope-from-scopes-supported"
  "2026-07-28 auth/scope-omitted-when-undefined" "2026-07-28 auth/scope-step-up" "2026-07-28 auth/scope-retry-limit"
  "2026-07-28 auth/token-endpoint-auth-basic" "2026-07-28 auth/token-endpoint-auth-post"
  "2026-07-28 auth/token-endpoint-auth-none" "2026-07-28 auth/resource-mismatch"
  "2026-07-28 auth/offline-access-scope" "2026-07-28 auth/offline-access-not-supported"
  "2026-07-28 auth/authorization-server-migration" "2026-07-28 auth/iss-supported"
  "2026-07-28 auth/iss-not-advertised" "2026-07-28 auth/iss-supported-missing" "2026-07-28 auth/iss-wrong-issuer"
  "2026-07-28 auth/iss-unexpected" "2026-07-28 auth/iss-normalized" "2026-07-28 auth/metadata-issuer-mismatch"
  "2025-11-25 auth/metadata-default" "2025-11-25 auth/metadata-var1" "2025-11-25 auth/metadata-var2"
  "2025-11-25 auth/metadata-var3" "2025-11-25 auth/basic-cimd" "2025-11-25 auth/pre-registration"
  "2025-11-25 auth/scope-from-www-authenticate" "2025-11-25 auth/scope-from-scopes-supported"
  "2025-11-25 auth/scope-omitted-when-undefined" "2025-11-25 auth/scope-step-up" "2025-11-25 auth/scope-retry-limit"
  "2025-11-25 auth/token-endpoint-auth-basic" "2025-11-25 auth/token-endpoint-auth-post"
  "2025-11-25 auth/token-endpoint-auth-none"
  "2025-06-18 auth/token-endpoint-auth-basic" "2025-06-18 auth/token-endpoint-auth-post"
  "2025-06-18 auth/token-endpoint-auth-none"
  "2025-03-26 auth/2025-03-26-oauth-metadata-backcompat" "2025-03-26 auth/2025-03-26-oauth-endpoint-fallback"
  # Extensions (io.modelcontextprotocol/oauth-client-credentials) are off the spec timeline: run
  # without --spec-version, the suite then speaks 2025-11-25.
  "extension auth/client-credentials-jwt" "extension auth/client-credentials-basic"
  # DPoP (RFC 9449, io.modelcontextprotocol/auth/dpop): proofs at the token endpoint and on every
  # MCP request, with and without the servers' nonces.
  "extension auth/dpop" "extension auth/dpop-nonce"
  # Workload identity federation (RFC 7523 JWT-bearer grant, io.modelcontextprotocol/auth/wif).
  "extension auth/wif-jwt-bearer"
  # Enterprise-managed authorization (SEP-990): token exchange at the IdP, then the JWT-bearer grant.
  "extension auth/enterprise-managed-authorization"
  # Skills (SEP-2640, io.modelcontextprotocol/skills): list without fetching any file, and reject
  # a SKILL.md whose digest, size or frontmatter differs from its listed entry.
  "extension sep-2640-client-no-prefetch" "extension sep-2640-client-verify-digest"
  "extension sep-2640-client-verify-size" "extension sep-2640-client-verify-frontmatter"
)
[ -n "${MCP_CONFORMANCE_ONLY:-}" ] && scenarios=("$MCP_CONFORMANCE_ONLY")

out=$(mktemp -d "${TMPDIR:-/tmp}/mcp-conformance.XXXXXX")
trap 'rm -rf "$out"' EXIT
passed=0 failed=0
for entry in "${scenarios[@]}"; do
  read -r version scenario <<<"$entry"
  dir=$out/$version/$scenario
  mkdir -p "$dir"
  spec=(--spec-version "$version")
  [ "$version" = extension ] && spec=()
  PATH=$(dirname "$node"):$PATH "$node" "$suite" client --command "$client" --scenario "$scenario" \
    "${spec[@]}" --timeout 30000 -o "$dir" >"$dir/runner.log" 2>&1 || true
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
