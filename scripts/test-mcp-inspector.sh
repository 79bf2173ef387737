#!/usr/bin/env bash
# The MCP Inspector lane: @modelcontextprotocol/inspector (pinned in conformance/package.json)
# in its CLI mode against the stdio server, configured the way a user configures a client:
# from `lean-beam-mcp config json`, with the fake `lake` first on PATH as elan would put the real
# one. In the legacy era (2025-11-25, the Inspector's default) it lists the tools (--strict:
# a schema-portability error fails the lane), calls beam_version, and calls lean_sync on a copy
# of the fixture project; in the modern era (2026-07-28) it negotiates and calls lean_sync again.
# Every check prints PASS or FAIL; the lane fails on any FAIL, or if a Lean process outlives it.
set -euo pipefail
source "$(dirname "$0")/lib/lanes.sh"

lanes_ensure_node_modules
lanes_build

inspector="$LANES_ROOT/conformance/node_modules/.bin/mcp-inspector"
version="$("$LANES_NODE" -p "require('$LANES_ROOT/conformance/node_modules/@modelcontextprotocol/inspector/package.json').version")"
lanes_log "MCP Inspector $version (CLI) against $LANES_SERVER"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -R "$LANES_ROOT/tests/fixtures/lean-project" "$work/project"
project="$(cd "$work/project" && pwd -P)"
mkdir "$work/bin"
ln -s "$LANES_ROOT/target/debug/fake-lake" "$work/bin/lake"
export PATH="$work/bin:$PATH"
# The Inspector keeps no secrets for a stdio server; say where (memory) instead of probing the
# OS keychain.
export MCP_INSPECTOR_SECRET_STORE=memory

"$LANES_SERVER" config json >"$work/legacy.json" 2>/dev/null
"$LANES_PYTHON" - "$work" <<'EOF'
import json, sys
work = sys.argv[1]
config = json.load(open(f"{work}/legacy.json"))
config["mcpServers"]["lean-beam"]["protocolEra"] = "modern"
json.dump(config, open(f"{work}/modern.json", "w"))
EOF

failed=0
# check <name> <era> <python condition on `out` (the --format json envelope)> <inspector args...>
check() {
  local name="$1" era="$2" condition="$3"
  shift 3
  local out="$work/out.json" err="$work/err.txt" status=0
  "$inspector" --cli --config "$work/$era.json" --server lean-beam "$@" --format json \
    >"$out" 2>"$err" || status=$?
  if [[ "$status" -ne 0 ]]; then
    echo "FAIL inspector/$era/$name: the Inspector exited $status ($(tail -n 1 "$err"))"
    failed=$((failed + 1))
    return
  fi
  if "$LANES_PYTHON" -c "import json,sys; out=json.load(open(sys.argv[1])); sys.exit(0 if ($condition) else 1)" "$out"; then
    echo "PASS inspector/$era/$name"
  else
    echo "FAIL inspector/$era/$name: $(head -c 400 "$out")"
    failed=$((failed + 1))
  fi
}

sync_args="{\"workspace\":{\"root\":\"$project\"},\"path\":\"Fixture/Basic.lean\"}"
synced='out["result"]["isError"] is False and out["result"]["structuredContent"]["version"] == 1 and out["result"]["structuredContent"]["readiness"]["save_ready"] is True and out["result"]["structuredContent"]["diagnostics"]["counts"]["total"] == 0'

check initialize legacy 'out["result"]["protocolVersion"] == "2025-11-25" and out["result"]["serverInfo"]["name"] == "lean-beam-mcp"' \
  --method initialize
check tools-list legacy '{"beam_version", "lean_sync", "lean_goals", "lean_run_at"} <= {t["name"] for t in out["result"]["tools"]}' \
  --method tools/list --strict
check beam_version legacy 'out["result"]["isError"] is False and out["result"]["structuredContent"]["name"] == "lean-beam-mcp"' \
  --method tools/call --tool-name beam_version
check lean_sync legacy "$synced" \
  --method tools/call --tool-name lean_sync --tool-args-json "$sync_args"
check initialize modern 'out["result"]["protocolVersion"] == "2026-07-28"' \
  --method initialize
check lean_sync modern "$synced" \
  --method tools/call --tool-name lean_sync --tool-args-json "$sync_args"

# Every server the Inspector started shut its Lean down when the Inspector closed its input.
left=""
if [[ ! -d /proc/self ]]; then
  echo "SKIPPED inspector/no-lean-left: no /proc to look for processes in"
fi
for _ in $( [[ -d /proc/self ]] && seq 100); do
  left="$(for p in /proc/[0-9]*; do
    [[ "$(readlink "$p/cwd" 2>/dev/null)" == "$project"* ]] && echo "${p#/proc/}"
  done || true)"
  [[ -z "$left" ]] && break
  sleep 0.1
done
if [[ ! -d /proc/self ]]; then
  :
elif [[ -z "$left" ]]; then
  echo "PASS inspector/no-lean-left"
else
  echo "FAIL inspector/no-lean-left: $left"
  failed=$((failed + 1))
fi

echo "inspector lane: $failed failed"
[[ "$failed" -eq 0 ]]
